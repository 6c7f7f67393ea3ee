"""TAG_WITH_JSON samples: the name in the call header, the arguments one JSON object."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.formats.tag_calls import write_tag_calls
from workbench.runtime.values import dumps

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The calls as the spec's template writes them (JSON values need no schema: ``tools`` is unused)."""
    return write_tag_calls(spec, calls, lambda c: dumps(dict(c.arguments)))
