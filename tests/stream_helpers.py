"""Feeding an output to the streaming parser in pieces, for the tests that compare it with one shot."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.runtime.chat import Message, Tool
from workbench.runtime.parsing import StreamParser
from workbench.runtime.spec import FormatSpec


def cut_points(text: str, cuts: Sequence[int], one_by_one: bool) -> list[int]:
    """Where to cut ``text``: after every character, or at the drawn ``cuts`` (taken modulo its length)."""
    return list(range(1, len(text))) if one_by_one else sorted({c % len(text) for c in cuts})


def streamed_message(spec: FormatSpec, text: str, points: Sequence[int], tools: Sequence[Tool]) -> Message:
    """The message the streaming parser gives for ``text`` fed in the pieces between ``points``."""
    parser = StreamParser(spec, tools)
    last = 0
    for cut in [*points, len(text)]:
        parser.feed(text[last:cut])
        last = max(last, cut)
    return parser.finish().message
