"""Marker boundaries by comparison: pieces of literal text, and the boundaries other pieces give evidence of.

The analysis never decides what a marker looks like.  A render of a conversation whose every part is a
known value (a needle) is literal text between the needles; the literal text between two positions that
the renders themselves fix (a render's start or end, a needle's edges, the end of the user's text, the end
of the generation prompt) is a *piece*.  When a piece has to be cut where no render fixes a position (the
common suffix of two pieces that end with the same turn end, but whose markers before it share characters:
``<|END_RESPONSE|><|END_OF_TURN_TOKEN|>`` and ``<|END_ACTION|><|END_OF_TURN_TOKEN|>``), the cut is moved to
the nearest *evidenced boundary*: a place where another piece of the same template starts or ends inside
the text (the user turn ends with ``<|END_OF_TURN_TOKEN|>`` right after the user's text, so that piece
begins a unit).  A tokenizer's special tokens, when the template source carries them, are evidence too.

Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from workbench.analysis.diff import common_prefix_len, common_suffix_len

_WS = " \t\r\n"

#: Pieces shorter than this (after trimming whitespace) are too common to say anything about a boundary.
_MIN_PIECE = 2


def _core(text: str) -> str:
    return text.strip(_WS)


@dataclass
class Pieces:
    """Literal pieces the renders isolated, and special tokens; they mark where units begin and end."""

    pieces: set[str] = field(default_factory=set)
    tokens: set[str] = field(default_factory=set)

    def add(self, *texts: str | None) -> None:
        """Record pieces (each trimmed of edge whitespace; short or blank ones are ignored)."""
        for text in texts:
            if text is None:
                continue
            core = _core(text)
            if len(core) >= _MIN_PIECE:
                self.pieces.add(core)

    def add_tokens(self, tokens: Iterable[str]) -> None:
        self.tokens.update(t for t in tokens if len(t) >= _MIN_PIECE)

    def boundaries(self, text: str) -> set[int]:
        """The evidenced boundaries inside ``text``: where a known piece or special token starts or ends.

        Whitespace is layout: a boundary at one end of a run of whitespace is also one at its other end.
        The text's own edges count only where a unit's occurrence puts them.
        """
        out: set[int] = set()
        for unit in (*self.pieces, *self.tokens):
            if len(unit) > len(text):
                continue
            start = text.find(unit)
            while start >= 0:
                out.add(start)
                out.add(start + len(unit))
                start = text.find(unit, start + 1)
        for pos in list(out):
            j = pos
            while j < len(text) and text[j] in _WS:
                j += 1
            out.add(j)
            j = pos
            while j > 0 and text[j - 1] in _WS:
                j -= 1
            out.add(j)
        return out

    def snap_suffix(self, text: str, start: int) -> int:
        """A common suffix found to start at ``start`` in ``text``, moved forward (shrinking it) to the
        nearest evidenced boundary; unchanged when it starts at one, or when no evidence follows it."""
        if start in (0, len(text)):
            return start
        bounds = self.boundaries(text)
        if start in bounds:
            return start
        later = [b for b in bounds if b > start]
        return min(later) if later else start

    def snap_prefix(self, text: str, end: int) -> int:
        """A common prefix found to end at ``end`` in ``text``, moved back (shrinking it) to the nearest
        evidenced boundary; unchanged when it ends at one, or when no evidence precedes it."""
        if end in (0, len(text)):
            return end
        bounds = self.boundaries(text)
        if end in bounds:
            return end
        earlier = [b for b in bounds if b < end]
        return max(earlier) if earlier else end


def _shared_len(texts: Sequence[str], pair_len: Callable[[str, str], int]) -> int:
    """How much of the first text every other shares, by ``pair_len`` (a common prefix or suffix)."""
    n = len(texts[0])
    for other in texts[1:]:
        n = min(n, pair_len(texts[0], other))
    return n


def common_suffix(texts: Sequence[str], evidence: Pieces | None = None) -> str:
    """The longest common suffix of ``texts``, snapped to an evidenced boundary of the first (pure)."""
    if not texts:
        return ""
    n = _shared_len(texts, common_suffix_len)
    first = texts[0]
    start = len(first) - n
    if evidence is not None and n:
        start = evidence.snap_suffix(first, start)
    return first[start:]


def common_prefix(texts: Sequence[str], evidence: Pieces | None = None) -> str:
    """The longest common prefix of ``texts``, snapped to an evidenced boundary of the first (pure)."""
    if not texts:
        return ""
    n = _shared_len(texts, common_prefix_len)
    first = texts[0]
    end = n
    if evidence is not None and n:
        end = evidence.snap_prefix(first, end)
    return first[:end]


def ends_with_ws(text: str, tail: str) -> bool:
    """``text`` ends with ``tail`` once both are trimmed of trailing whitespace (pure)."""
    return bool(_core(tail)) and text.rstrip(_WS).endswith(tail.rstrip(_WS))


def split_after(text: str, head: str) -> tuple[str, str] | None:
    """``(before, head)`` when ``text`` ends with ``head`` (exactly), else None (pure)."""
    if head and text.endswith(head):
        return text[: len(text) - len(head)], head
    return None
