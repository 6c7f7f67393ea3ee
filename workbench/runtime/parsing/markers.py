"""Markers as the parser matches them, and a multi-marker finder that knows what to hold back.

A spec's markers carry the exact whitespace the template renders (``"<tool_call>\\n"``, ``"</think>\\n\\n"``).
Real model output often differs in that whitespace, so the parser matches the *core* (the stripped marker)
and treats the surrounding whitespace as optional.  :class:`MarkerSet` answers the two questions a
streaming scanner asks of the text it has not released yet: where does the earliest marker start, and how
much of the tail must stay held back because it may still grow into a marker.  Both answers only look at
the unreleased text, which keeps the total cost linear in the output length.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Marker:
    """A spec marker split into its core and the whitespace the template put around it."""

    text: str
    core: str
    lead_ws: bool
    trail_ws: bool

    @classmethod
    def of(cls, text: str) -> Marker | None:
        """The marker for a spec string, or None when the string is empty or only whitespace."""
        core = text.strip()
        if not core:
            return None
        return cls(text=text, core=core, lead_ws=text[:1].isspace(), trail_ws=text[-1:].isspace())


def core_of(text: str) -> str:
    """The stripped form of a marker string ("" for an empty or whitespace-only marker)."""
    return text.strip()


class MarkerSet:
    """Finds the earliest of several literal cores in a buffer and computes the safe release point.

    Does not change state: every method is a pure function of the buffer it is given.
    """

    def __init__(self, cores: Iterable[str]) -> None:
        unique = sorted({c for c in cores if c}, key=lambda c: (-len(c), c))
        self.cores: tuple[str, ...] = tuple(unique)
        # Longest first so that at one position the longer marker wins ("<tool_calls>" over "<tool_call>").
        self._rx = re.compile("|".join(re.escape(c) for c in unique)) if unique else None
        self._prefixes = frozenset(c[:i] for c in unique for i in range(1, len(c)))
        firsts = {c[0] for c in unique}
        self._first_rx = (
            re.compile("[" + "".join(re.escape(ch) for ch in sorted(firsts)) + "]") if firsts else None
        )
        self._max = max((len(c) for c in unique), default=0)

    def __bool__(self) -> bool:
        return bool(self.cores)

    def search(self, buf: str, start: int) -> re.Match[str] | None:
        """The leftmost (then longest) marker occurrence at or after ``start``."""
        return self._rx.search(buf, start) if self._rx is not None else None

    def match_at(self, buf: str, i: int) -> str | None:
        """The marker starting exactly at ``i``, if any (longest wins)."""
        if self._rx is None:
            return None
        m = self._rx.match(buf, i)
        return m.group(0) if m else None

    def could_start_at(self, buf: str, i: int) -> bool:
        """True when ``buf[i:]`` (running to the end of the buffer) is a proper prefix of some marker.

        The length is checked first: a longer tail cannot be a prefix, and slicing it would make every call
        cost the rest of the buffer (quadratic over a one-shot parse of marker-dense text).
        """
        return len(buf) - i < self._max and buf[i:] in self._prefixes

    def hold(self, buf: str, start: int) -> int:
        """How many trailing characters of ``buf[start:]`` may still be the beginning of a marker."""
        if self._first_rx is None:
            return 0
        n = len(buf)
        i = max(start, n - self._max + 1)
        while True:
            m = self._first_rx.search(buf, i)
            if m is None:
                return 0
            j = m.start()
            if buf[j:] in self._prefixes:
                return n - j
            i = j + 1

    def safe_end(self, buf: str, start: int) -> int:
        """The end of the text from ``start`` that can be released now (nothing after it is held back)."""
        return len(buf) - self.hold(buf, start)


@functools.lru_cache(maxsize=1024)
def _cached(cores: frozenset[str]) -> MarkerSet:
    return MarkerSet(cores)


def marker_set(cores: Iterable[str]) -> MarkerSet:
    """A (shared, immutable) :class:`MarkerSet` for these cores: parsers are created per output, their
    marker sets only per spec."""
    return _cached(frozenset(c for c in cores if c))
