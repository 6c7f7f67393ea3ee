"""Harmony samples: channel messages (analysis, final, commentary calls), with the format's own tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.formats.harmony.markers import (
    CALL,
    CONTENT_START,
    END,
    REASONING_END,
    REASONING_START,
    RETURN,
    START_ASSISTANT,
    call_header,
)
from workbench.runtime.values import dumps

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """One commentary message per call, each ending the turn with ``<|call|>``."""
    return "".join(f"{START_ASSISTANT}{call_header(c.name)}{dumps(dict(c.arguments))}{CALL}" for c in calls)


def write_output(
    spec: FormatSpec, reasoning: str, content: str, calls: Sequence[SampleCall], end: bool
) -> str:
    """A whole Harmony output: the analysis message, the final message, the calls, ``<|return|>``."""
    out = ""
    if reasoning:
        out += f"{REASONING_START}{reasoning}{REASONING_END}"
    if content:
        out += f"{START_ASSISTANT}{CONTENT_START}{content}" + (END if calls else "")
    out += write_calls(spec, calls)
    if end and not calls:
        out += RETURN
    return out
