"""The diff primitives every analysis phase is built from.

Two renders of a template that differ in one controlled respect (reasoning present or not, one tool call or
two, ...) are split into a common ``prefix``, the part only in A (``left``), the part only in B
(``right``) and a common ``suffix``.  A plain longest-common-prefix/suffix split cuts markers in half
whenever two markers share their first or last characters (``<|START_RESPONSE|>`` vs ``<|START_THINKING|>``
share ``<|START_``), so :func:`diff_split` moves a half-cut ``<...>`` or ``[...]`` marker out of the prefix
and suffix into the differing parts, until the split is stable.  :func:`segmentize` then reads a text as a
sequence of markers and plain text.

What counts as a marker is deliberately narrow, because chat templates are full of prose and JSON: a
``<...>`` marker never spans a line break or another ``<``; a ``[...]`` marker holds no quotes,
braces, commas or line breaks and does not start with a space (``[TOOL_CALLS]`` and ``[BEGIN FINAL
RESPONSE]`` are markers, the JSON array ``["a", "b"]`` is not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DiffSplit",
    "Segment",
    "after_common_suffix",
    "common_prefix_aligned",
    "common_prefix_len",
    "common_suffix_aligned",
    "common_suffix_len",
    "diff_split",
    "segmentize",
    "until_common_prefix",
]

# The longest text a ``<...>`` marker may hold: long enough for ``<parameter name="...">``, short enough that
# a stray ``<`` in prose does not swallow a paragraph.
_MAX_ANGLE_MARKER = 80
_MAX_SQUARE_MARKER = 40

_ANGLE_BODY = r"[^<>\n]"  # anything but another bracket or a line break
_SQUARE_FIRST = r"[^\[\]\s\"'{},:]"  # no space first: "[ 1 ]" is not a marker
_SQUARE_BODY = r"[^\[\]\n\"'{},:]"  # no quotes, braces or commas: JSON arrays are not markers
_ANGLE = re.compile(f"<{_ANGLE_BODY}{{1,{_MAX_ANGLE_MARKER}}}>")
_SQUARE = re.compile(rf"\[{_SQUARE_FIRST}{_SQUARE_BODY}{{0,{_MAX_SQUARE_MARKER - 1}}}\]")
_MARKER = re.compile(f"{_ANGLE.pattern}|{_SQUARE.pattern}")
# An unfinished marker at the very end of a text (``...<|START_``), and an unstarted one at the very
# beginning (``_RESPONSE|>...``).
_OPEN_ANGLE = rf"<{_ANGLE_BODY}{{0,{_MAX_ANGLE_MARKER}}}"
_OPEN_SQUARE = rf"\[(?:{_SQUARE_FIRST}{_SQUARE_BODY}{{0,{_MAX_SQUARE_MARKER - 1}}})?"
_OPEN_TAIL = re.compile(rf"(?:{_OPEN_ANGLE}|{_OPEN_SQUARE})\Z")
_CLOSE_HEAD_ANGLE = re.compile(rf"\A{_ANGLE_BODY}{{0,{_MAX_ANGLE_MARKER}}}>")
_CLOSE_HEAD_SQUARE = re.compile(rf"\A{_SQUARE_BODY}{{0,{_MAX_SQUARE_MARKER}}}\]")


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
    """A run of ``text`` that is either one marker (``kind == "marker"``) or plain text (``"text"``)."""

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


def _open_marker_tail(text: str) -> int | None:
    """Start index of an unfinished marker that ``text`` ends with, if any."""
    m = _OPEN_TAIL.search(text)
    return m.start() if m else None


def _closing_head(suffix: str, before_a: str, before_b: str) -> int | None:
    """Length of a marker tail that ``suffix`` starts with, when a marker was opened just before it.

    ``before_a``/``before_b`` are the texts in front of the suffix in each variant: the suffix only starts
    inside a marker if at least one of them ends with an unfinished opener of the same kind.
    """
    for head, opener in ((_CLOSE_HEAD_ANGLE, "<"), (_CLOSE_HEAD_SQUARE, "[")):
        m = head.match(suffix)
        if not m:
            continue
        for before in (before_a, before_b):
            tail = _open_marker_tail(before)
            if tail is not None and before[tail] == opener:
                return m.end()
    return None


def diff_split(a: str, b: str) -> DiffSplit:
    """Split ``a`` and ``b`` into common prefix, the differing middles, and common suffix (pure).

    The suffix never overlaps the prefix.  A marker cut in half by the plain split is moved whole into the
    differing parts, repeatedly, until nothing moves.
    """
    p = common_prefix_len(a, b)
    while (tail := _open_marker_tail(a[:p])) is not None:
        p = tail  # an open tail holds at least its opener, so this always moves back
    rest_a, rest_b = a[p:], b[p:]
    s = common_suffix_len(rest_a, rest_b)
    while s:
        suffix = rest_a[len(rest_a) - s :]
        move = _closing_head(suffix, rest_a[: len(rest_a) - s], rest_b[: len(rest_b) - s])
        if not move:
            break
        s -= move
    return DiffSplit(
        prefix=a[:p],
        left=rest_a[: len(rest_a) - s],
        right=rest_b[: len(rest_b) - s],
        suffix=rest_a[len(rest_a) - s :],
    )


def common_suffix_aligned(a: str, b: str) -> str:
    """The common suffix of ``a`` and ``b``, moved forward so it does not start inside a marker (pure)."""
    return diff_split("\0" + a, "\1" + b).suffix


def common_prefix_aligned(a: str, b: str) -> str:
    """The common prefix of ``a`` and ``b``, cut back so that it does not end inside a marker (pure)."""
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
    """Split ``text`` into marker and plain-text segments (pure).

    Markers are ``<...>`` spans on one line and ``[...]`` spans of identifier-like characters; everything
    between them is text.  Concatenating the segments gives back ``text``.
    """
    out: list[Segment] = []
    pos = 0
    for m in _MARKER.finditer(text):
        if m.start() > pos:
            out.append(Segment("text", text[pos : m.start()]))
        out.append(Segment("marker", m.group()))
        pos = m.end()
    if pos < len(text):
        out.append(Segment("text", text[pos:]))
    return out


def is_marker(text: str) -> bool:
    """True when ``text`` is exactly one marker (pure)."""
    return _MARKER.fullmatch(text) is not None
