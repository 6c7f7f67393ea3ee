"""Model outputs written from a FormatSpec: what a model following the spec would emit.

The inverse of parsing, used where an output is needed without a model: round-trip tests (write, parse,
compare with what was written), property and fuzz tests over every spec, the streaming benchmark, and demo
text for the TUI.  Markers are written exactly as the spec holds them, whitespace included, as the
template renders them.  The tool calls are written by the format's family
(``runtime/formats/<name>/samples.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.runtime.chat import Tool
from workbench.runtime.formats import family, family_for
from workbench.runtime.formats.base import SampleCall
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.spec import FormatSpec

__all__ = [
    "SampleCall",
    "reasoning_opened",
    "sample_output",
    "write_calls",
    "write_content",
    "write_reasoning",
]


def reasoning_opened(spec: FormatSpec) -> bool:
    """Whether the prompt of ``spec`` leaves the output inside reasoning (thinking enabled)."""
    return spec.output_starts_in_reasoning()


def write_reasoning(spec: FormatSpec, text: str) -> str:
    r = spec.reasoning
    if r.mode == "none" or not text or not core_of(r.end):
        return ""
    start = "" if reasoning_opened(spec) else r.start
    return f"{start}{text}{r.end}"


def write_content(spec: FormatSpec, text: str, *, with_reasoning: bool, with_calls: bool = False) -> str:
    c = spec.content
    if not text:
        return ""
    if with_calls and (c.with_calls_start or c.with_calls_end):
        return f"{c.with_calls_start}{text}{c.with_calls_end}"
    if c.mode == "always_wrapped" or (c.mode == "wrapped_with_reasoning" and with_reasoning):
        return f"{c.start}{text}{c.end}"
    return text


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The tool-call part of an output (empty when the spec has no tool format).

    ``tools`` gives the parameters' schemas, which decide how values are written where a format writes them
    raw (tagged arguments); without them strings are written raw.
    """
    fam = family(spec.tools.format)
    if not calls or fam is None:
        return ""
    return fam.write_calls(spec, calls, tools=tools)


def sample_output(
    spec: FormatSpec,
    *,
    reasoning: str = "",
    content: str = "",
    calls: Sequence[SampleCall] = (),
    end: bool = True,
    tools: Sequence[Tool] | None = None,
) -> str:
    """A whole output: reasoning, content, calls and the first end-of-turn marker (when ``end``)."""
    fam = family_for(spec)
    if fam is not None and fam.write_output is not None:
        return fam.write_output(spec, reasoning, content, calls, end)
    return plain_output(spec, reasoning, content, calls, end, tools)


def plain_output(
    spec: FormatSpec,
    reasoning: str,
    content: str,
    calls: Sequence[SampleCall],
    end: bool,
    tools: Sequence[Tool] | None = None,
) -> str:
    """Reasoning, content, calls and the first end-of-turn marker, written with the marker fields (an
    ``OutputWriter``: a layout with a lead writes the rest of its output with it)."""
    r = write_reasoning(spec, reasoning)
    c = write_content(spec, content, with_reasoning=bool(r), with_calls=bool(calls))
    out = r + c + write_calls(spec, calls, tools=tools)
    if end and spec.end_markers:
        out += spec.end_markers[0]
    return out
