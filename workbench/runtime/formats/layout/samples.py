"""Outputs written from a layout: what a model following a headed layout (or one with a lead) writes.

Headed layouts write each part as a message: ``opener + header + body + end``, in the layout's order
(reasoning, the answer, the calls); the first message leaves out the opener when the generation prompt
wrote it (``prompt.output_prefix``).  A lead is written first.  The calls are the tools spec's writer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import SampleCall

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def opened(spec: FormatSpec) -> bool:
    """True when the generation prompt already wrote the first message's opener."""
    opener = spec.layout.opener.strip()
    return bool(opener) and spec.prompt.output_prefix.strip().endswith(opener)


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The calls as the tools spec's family writes them (headed: each a message of its own)."""
    from workbench.runtime.formats import family  # the registry imports this package lazily

    fam = family(spec.tools.format)
    if fam is None or not calls:
        return ""
    return fam.write_calls(spec, calls, tools=tools)


def write_output(
    spec: FormatSpec, reasoning: str, content: str, calls: Sequence[SampleCall], end: bool
) -> str:
    """A whole output following ``spec.layout``."""
    lay = spec.layout
    if not lay.headed:
        from workbench.runtime.parsing.samples import plain_output

        return lay.lead + plain_output(spec, reasoning=reasoning, content=content, calls=calls, end=end)
    parts: list[str] = []
    r, c = lay.message("reasoning"), lay.message("content")
    if reasoning and r is not None and not spec.output_starts_in_reasoning():
        parts.append(lay.opener + r.header + reasoning + (r.ends[0] if r.ends else ""))
    elif reasoning and r is not None:
        parts.append(reasoning + (r.ends[0] if r.ends else ""))
    if content and c is not None:
        if calls:
            close = c.ends[1] if len(c.ends) > 1 else (c.ends[0] if c.ends else "")
        else:
            close = c.ends[0] if end and c.ends else ""
        parts.append(lay.opener + c.header + content + close)
    elif content:
        parts.append(content)
    text = lay.lead + "".join(parts) + write_calls(spec, calls)
    if opened(spec) and text.startswith(lay.opener) and not spec.output_starts_in_reasoning():
        text = text[len(lay.opener) :]
    return text
