"""RECIPIENT samples: each call is a message addressed to the function (``>>>get_weather\\n{...}``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.values import dumps

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec

#: Functionary's address marker, for a hand-written spec that leaves ``call_start`` empty.
DEFAULT_ADDRESS = ">>>"


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """One addressed message per call, the arguments as JSON."""
    prefix = core_of(spec.tools.call_start) or DEFAULT_ADDRESS
    return "".join(f"{prefix}{c.name}\n{dumps(dict(c.arguments))}" for c in calls)
