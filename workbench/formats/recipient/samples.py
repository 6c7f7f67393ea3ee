"""RECIPIENT samples: each call is a message addressed to the function (``>>>get_weather\\n{...}``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.formats.base import SampleCall
from workbench.formats.values import dumps
from workbench.parsing.markers import core_of

if TYPE_CHECKING:
    from workbench.chat import Tool
    from workbench.spec import FormatSpec

#: Functionary's address marker, for a hand-written spec that leaves ``call_start`` empty.
DEFAULT_ADDRESS = ">>>"


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """One addressed message per call, the arguments as JSON."""
    prefix = core_of(spec.tools.call_start) or DEFAULT_ADDRESS
    return "".join(f"{prefix}{c.name}\n{dumps(dict(c.arguments))}" for c in calls)
