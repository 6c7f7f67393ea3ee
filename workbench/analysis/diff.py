"""The diff primitives every analysis phase is built from, and the evidence of where markers begin.

Two renders of a template that differ in one controlled respect (reasoning present or not, one tool call or
two, ...) are split into a common ``prefix``, the part only in A (``left``), the part only in B
(``right``) and a common ``suffix``.  Nothing here knows what a marker looks like (issue 18: markers come
from comparison alone).  A plain longest-common-prefix/suffix split cuts markers in half whenever two
markers share their first or last characters (``<|START_RESPONSE|>`` vs ``<|START_THINKING|>`` share
``<|START_``); what says where a marker begins is *evidence*: the literal text the template's author wrote
(``template.literals``: each literal arrives in a render as one unit) and, when the template source carries
a tokenizer, its added tokens.  While the analysis runs (:func:`marker_evidence`), :func:`diff_split`
never cuts through such a unit, and :func:`segmentize` reads a text as the units it holds and the text
between them.  Without evidence both work on characters alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DiffSplit",
    "Evidence",
    "Segment",
    "after_common_suffix",
    "common_prefix_aligned",
    "common_prefix_len",
    "common_suffix_aligned",
    "common_suffix_len",
    "current_evidence",
    "diff_split",
    "marker_evidence",
    "segmentize",
    "until_common_prefix",
]

_WS = " \t\r\n"
#: Units shorter than this (trimmed) are no evidence; longer than this they are prose, not markers.
MIN_UNIT, MAX_UNIT = 3, 80


@dataclass(frozen=True)
class DiffSplit:
    """Two texts as ``prefix + left + suffix`` and ``prefix + right + suffix``."""

    prefix: str
    left: str
    right: str
    suffix: str

    @property
    def identical(self) -> bool:
        """True when the two texts were equal (the varied input did not change the render)."""
        return not self.left and not self.right

    @property
    def text_a(self) -> str:
        return self.prefix + self.left + self.suffix

    @property
    def text_b(self) -> str:
        return self.prefix + self.right + self.suffix

    def to_dict(self) -> dict[str, str]:
        return {"prefix": self.prefix, "left": self.left, "right": self.right, "suffix": self.suffix}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DiffSplit:
        return cls(str(data["prefix"]), str(data["left"]), str(data["right"]), str(data["suffix"]))


@dataclass(frozen=True)
class Segment:
    """A run of ``text`` that is either one unit of evidence (``kind == "marker"``) or text (``"text"``)."""

    kind: str
    text: str

    @property
    def is_marker(self) -> bool:
        return self.kind == "marker"


def common_prefix_len(a: str, b: str) -> int:
    """Length of the longest common prefix (pure)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:  # the common case in probes: one text extends the other
        return n
    lo, hi = 0, n  # binary search on slices is much faster in Python than a character loop
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix_len(a: str, b: str) -> int:
    """Length of the longest common suffix (pure)."""
    n = min(len(a), len(b))
    if n and a[len(a) - n :] == b[len(b) - n :]:
        return n
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


# ----------------------------------------------------------------------------------------- evidence
def _not_crossing(occurrences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The occurrences that do not cross a longer one (overlap it without lying inside it).  A short unit
    seen across two written ones is no evidence of a boundary: in ``##/id####param##`` a markdown
    ``###`` ends two characters into ``##param##``, and would let a cut fall there."""
    kept = []
    for s, e in occurrences:
        crosses = any(
            e2 - s2 > e - s and s < e2 and s2 < e and not (s2 <= s and e <= e2) for s2, e2 in occurrences
        )
        if not crosses:
            kept.append((s, e))
    return kept


#: Windows whose unit occurrences one :class:`Evidence` keeps (a bound: evidence lives as long as its
#: template's analysis cache).
_MAX_WINDOWS = 4096


@dataclass
class Evidence:
    """Units of literal text a template writes whole (its author's literals, its tokenizer's tokens).

    A cut never falls strictly inside an occurrence of a unit, unless another unit's edge is there;
    :meth:`segment` reads a text as units (the shortest at each place) and the text between them.
    Pure: the methods only read the texts they are given.
    """

    units: frozenset[str] = frozenset()
    tokens: frozenset[str] = frozenset()
    #: Units read whole, never as a shorter unit and the rest: an instance of a ``HEAD ~ value ~ TAIL`` the
    #: template writes (:func:`~workbench.template.literals.template_instances`).
    whole: frozenset[str] = frozenset()
    #: Units read whole that end in their template's own closing literal (``<!--think-->``): no cut falls
    #: inside one, not even at an inner unit's edge (:func:`~workbench.template.literals.
    #: template_closed_instances`).
    closed: frozenset[str] = frozenset()
    _sorted: tuple[str, ...] = field(default=(), repr=False)
    _pattern: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _max: int = field(default=0, repr=False)
    _units_set: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    # The occurrences found in each window (with the whole text when it is a unit): an analysis and its
    # self-check look at the same few windows many times (the prompt's end, against each case's render).
    _seen: dict[tuple[str, str], list[tuple[int, int]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        kept = {u for u in (*self.units, *self.tokens) if MIN_UNIT <= len(u.strip(_WS)) <= MAX_UNIT}
        self._sorted = tuple(sorted({u.strip(_WS) for u in kept}, key=lambda u: (-len(u), u)))
        self._units_set = frozenset(self._sorted)
        self._max = max((len(u) for u in self._sorted), default=0)

    @classmethod
    def of(
        cls,
        units: Iterable[str] = (),
        tokens: Iterable[str] = (),
        whole: Iterable[str] = (),
        closed: Iterable[str] = (),
    ) -> Evidence:
        return cls(frozenset(units), frozenset(tokens), frozenset(whole), frozenset(closed))

    def __bool__(self) -> bool:
        return bool(self._sorted)

    def _occurrences(self, text: str, pos: int) -> list[tuple[int, int]]:
        """Unit occurrences in ``text`` near ``pos`` (within the longest unit's length); a unit that is the
        whole text says nothing about where inside it a cut falls, so it is left out."""
        lo = max(0, pos - self._max)
        window = text[lo : pos + self._max]
        whole = text.strip(_WS)
        key = (window, whole if whole in self._units_set else "")
        found = self._seen.get(key)
        if found is None:
            out = []
            for unit in self._sorted:
                if unit == whole:
                    continue
                at = window.find(unit)
                while at >= 0:
                    out.append((at, at + len(unit)))
                    at = window.find(unit, at + 1)
            found = _not_crossing(out)
            if len(self._seen) < _MAX_WINDOWS:
                self._seen[key] = found
        return [(lo + s, lo + e) for s, e in found]

    def holds(self, text: str) -> bool:
        """Is ``text`` (trimmed) one unit of the evidence?"""
        return text.strip(_WS) in self._units_set

    def occurrences(self, text: str, pos: int) -> list[tuple[int, int]]:
        """The unit occurrences in ``text`` near ``pos`` (start, end), as the cuts read them."""
        return self._occurrences(text, pos)

    def _cut_ok(self, pos: int, occurrences: list[tuple[int, int]], text: str, both_sides: bool) -> bool:
        """True when no unit straddles ``pos``, or one unit's edge is there (one literal may hold another),
        unless a closed unit straddles it where ``both_sides`` (two texts or more, each going on past the
        cut: they part there): ``<!--think-->`` against ``<!--call NAME-->``, instances of ``'<!--' ~ word
        ~ '-->'``, are two markers, and the edge of their head ``<!--`` is no place to part them.  A text
        that ends at the cut is a prompt the model completes (``<|turn|>model``, then ``channel:x<|text|>``).
        """
        closed = self.closed if both_sides else frozenset()
        if closed and any(s < pos < e and text[s:e] in closed for s, e in occurrences):
            return False
        edges = {e for occ in occurrences for e in occ}
        return pos in edges or not any(s < pos < e for s, e in occurrences)

    def cut_back(self, pos: int, *texts: str) -> int:
        """``pos`` moved back to the nearest position where no unit is cut in any of ``texts``."""
        if not self._sorted or pos <= 0:
            return pos
        occ = [self._occurrences(t, pos) for t in texts]
        edges = {e for o in occ for s, x in o for e in (s, x) if e < pos}
        candidates = sorted({pos, 0, *edges}, reverse=True)
        for c in candidates:
            both = len(texts) > 1 and all(0 < c < len(t) for t in texts)
            if all(self._cut_ok(c, o, t, both) for o, t in zip(occ, texts, strict=True)):
                return c
        return 0

    def cut_forward_from_end(self, n: int, *texts: str) -> int:
        """A common suffix of length ``n`` shrunk to the nearest start where no unit is cut in ``texts``."""
        if not self._sorted or n <= 0:
            return n
        occ = [self._occurrences(t, len(t) - n) for t in texts]
        # Candidate suffix lengths: n itself, then the lengths that put the start at a unit's edge.
        lengths = {n, 0}
        for t, o in zip(texts, occ, strict=True):
            lengths |= {len(t) - e for s, x in o for e in (s, x) if len(t) - e < n}
        for m in sorted(lengths, reverse=True):
            both = len(texts) > 1 and all(0 < len(t) - m < len(t) for t in texts)
            if all(self._cut_ok(len(t) - m, self._occurrences(t, len(t) - m), t, both) for t in texts):
                return m
        return 0

    def segment(self, text: str) -> list[Segment]:
        """``text`` as units of evidence and the text between them (concatenated: ``text`` again)."""
        out: list[Segment] = []
        if not self._sorted:
            return [Segment("text", text)] if text else []
        start = 0
        for m in self._reading().finditer(text):
            if m.start() > start:
                out.append(Segment("text", text[start : m.start()]))
            out.append(Segment("marker", m.group(0)))
            start = m.end()
        if start < len(text):
            out.append(Segment("text", text[start:]))
        return out

    def _reading(self) -> re.Pattern[str]:
        """The units as one alternation in the order a place is read: the finest reading, the shortest unit
        that starts there (a literal may hold others), unless a unit there is read whole (``<|/analysis|>``,
        not ``<|/`` then ``analysis|>``): those first, longest first.  Compiled once per evidence."""
        if self._pattern is None:
            whole = [u for u in self._sorted if u in self.whole]  # longest first
            ordered = [*whole, *reversed(self._sorted)]
            self._pattern = re.compile("|".join(re.escape(u) for u in ordered))
        return self._pattern


_EVIDENCE: ContextVar[Evidence | None] = ContextVar("marker_evidence", default=None)


@contextmanager
def marker_evidence(evidence: Evidence | None) -> Iterator[None]:
    """Within the block, :func:`diff_split` and :func:`segmentize` read ``evidence`` (see the module doc)."""
    token = _EVIDENCE.set(evidence)
    try:
        yield
    finally:
        _EVIDENCE.reset(token)


def current_evidence() -> Evidence | None:
    """The evidence the analysis set for this context (None outside it)."""
    return _EVIDENCE.get()


# ----------------------------------------------------------------------------------------- splits
def diff_split(a: str, b: str) -> DiffSplit:
    """Split ``a`` and ``b`` into common prefix, the differing middles, and common suffix (pure).

    The suffix never overlaps the prefix.  With evidence (:func:`marker_evidence`), neither cut falls
    inside a unit of literal text the template writes whole.
    """
    ev = _EVIDENCE.get()
    p = common_prefix_len(a, b)
    if ev and 0 < p < max(len(a), len(b)):
        p = ev.cut_back(p, a, b)
        if ev.whole:
            p = before_whole_units(ev, a, b, p)
    rest_a, rest_b = a[p:], b[p:]
    s = common_suffix_len(rest_a, rest_b)
    if ev and s:
        # read in the whole texts (a cut counts from their ends alike): a differing middle that is one unit
        # whole on each side ('</think>' against '<think>') is still a unit the cut must not fall inside
        s = ev.cut_forward_from_end(s, a, b)
    return DiffSplit(
        prefix=a[:p],
        left=rest_a[: len(rest_a) - s],
        right=rest_b[: len(rest_b) - s],
        suffix=rest_a[len(rest_a) - s :],
    )


def before_whole_units(ev: Evidence, a: str, b: str, p: int) -> int:
    """``p`` moved back to where a literal the template writes whole starts in both texts, when the cut
    falls inside one in each (``p`` otherwise).  Two whole literals that share a head (s1's
    ``<|im_start|>think\n`` and ``<|im_start|>answer\n``, the fences ```` ```thinking ```` and
    ```` ```answer ````) part after it, but the head is no marker of its own there: cut after it, the
    words alone (``think``, ``answer``) would be taken for the markers."""
    starts: list[set[int]] = []
    for text in (a, b):
        found = {st for st, en in ev.occurrences(text, p) if st < p < en and text[st:en] in ev.whole}
        if not found:
            return p
        starts.append(found)
    shared = starts[0] & starts[1]
    return min(shared) if shared else p


def common_suffix_aligned(a: str, b: str) -> str:
    """The common suffix of ``a`` and ``b``, not starting inside a unit of evidence (pure)."""
    return diff_split("\0" + a, "\1" + b).suffix


def common_prefix_aligned(a: str, b: str) -> str:
    """The common prefix of ``a`` and ``b``, not ending inside a unit of evidence (pure)."""
    return diff_split(a + "\0", b + "\1").prefix


def until_common_prefix(full: str, left: str, right: str) -> str:
    """The part of ``full`` in front of the first occurrence of the common prefix of ``left`` and ``right``.

    Used to find what precedes the first differing item (e.g. the separator between two calls).  Returns
    ``""`` when the two have no common prefix or ``full`` does not contain it (pure).
    """
    common = left[: common_prefix_len(left, right)]
    if not common:
        return ""
    at = full.find(common)
    return full[:at] if at >= 0 else ""


def after_common_suffix(full: str, left: str, right: str) -> str:
    """The part of ``full`` after the last occurrence of the common suffix of ``left`` and ``right``.

    Returns ``""`` when there is no common suffix or ``full`` does not contain it (pure).
    """
    n = common_suffix_len(left, right)
    if not n:
        return ""
    common = left[len(left) - n :]
    at = full.rfind(common)
    return full[at + n :] if at >= 0 else ""


def segmentize(text: str) -> list[Segment]:
    """Split ``text`` into units of evidence (markers) and text (pure; concatenating gives ``text``).

    A unit is a literal the template writes whole, or an added token of its tokenizer; without evidence
    (outside :func:`marker_evidence`) the whole text is one text segment.
    """
    ev = _EVIDENCE.get()
    if ev is None:
        return [Segment("text", text)] if text else []
    return ev.segment(text)


def is_marker(text: str) -> bool:
    """True when ``text`` is exactly one unit of evidence (pure)."""
    segs = segmentize(text)
    return len(segs) == 1 and segs[0].is_marker
