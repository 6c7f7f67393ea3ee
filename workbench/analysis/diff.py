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
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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
    "element_markers",
    "element_syntax",
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


# ----------------------------------------------------------------------------------------- element markup
# Some templates write every element as ``<|begin|>NAME ATTRS<|body|>...<|end|>NAME``: the special tokens
# alone do not say what opens or closes (``<|end|>`` closes the answer, the reasoning and the turn alike);
# the token *with the name* does.  When a template's render shows that syntax, the analysis reads
# ``OPEN NAME ATTRS BODY`` and ``CLOSE NAME`` as single markers (:func:`element_markers`).
_SPECIAL = re.compile(r"<\|[^|<>\s]{1,24}\|>")
#: (the compound-marker pattern, the unfinished-marker pattern, the syntax) while element markup is read.
_ELEMENT: ContextVar[tuple[re.Pattern[str], re.Pattern[str], ElementSyntax] | None] = ContextVar(
    "element", default=None
)


@dataclass(frozen=True)
class ElementSyntax:
    """The three tokens of element-style markup: ``open NAME ATTRS body`` ... ``close NAME``."""

    open: str
    body: str
    close: str


def element_syntax(text: str) -> ElementSyntax | None:
    """The element syntax ``text`` is written in, if any (pure).

    Evidence: two special tokens each directly followed by the same names, for at least two names (``turn``
    and ``answer`` after both ``<|begin|>`` and ``<|end|>``), and a third token that ends the opening
    (``<|body|>``) after every opening.
    """
    followers: dict[str, set[str]] = {}
    for m in _SPECIAL.finditer(text):
        name = re.match(r"[A-Za-z_]\w*", text[m.end() :])
        if name is not None:
            followers.setdefault(m.group(), set()).add(name.group())
    best: ElementSyntax | None = None
    for open_tok, names_o in followers.items():
        for close_tok, names_c in followers.items():
            if open_tok == close_tok or len(names_o & names_c) < 2:
                continue
            opening = re.escape(open_tok) + r"[A-Za-z_]\w*(?:[ \t][^<>\n]{0,80}?)?(<\|[^|<>\s]{1,24}\|>)"
            bodies = {m.group(1) for m in re.finditer(opening, text)}
            bodies -= {open_tok, close_tok}
            if len(bodies) != 1:
                continue
            body = bodies.pop()
            # The opener is the one whose elements come first: the turn opens before it closes.
            if text.find(open_tok) > text.find(close_tok):
                continue
            best = ElementSyntax(open_tok, body, close_tok)
    return best


@contextmanager
def element_markers(syntax: ElementSyntax | None) -> Iterator[None]:
    """Within the block, :func:`segmentize`, :func:`is_marker` and :func:`diff_split` read the element
    syntax's openings and closings as single markers (nothing changes when ``syntax`` is None)."""
    if syntax is None:
        yield
        return
    o, b, c = (re.escape(x) for x in (syntax.open, syntax.body, syntax.close))
    compound = re.compile(rf"{o}[A-Za-z_]\w*(?:[ \t][^<>\n]{{0,80}}?)?{b}|{c}[A-Za-z_]\w*")
    open_tail = re.compile(rf"(?:{o}(?:[A-Za-z_]\w*(?:[ \t][^<>\n]{{0,80}})?)?|{c}\w*)\Z")
    token = _ELEMENT.set((compound, open_tail, syntax))
    try:
        yield
    finally:
        _ELEMENT.reset(token)


def _marker_rx() -> re.Pattern[str]:
    element = _ELEMENT.get()
    if element is None:
        return _MARKER
    return re.compile(f"{element[0].pattern}|{_MARKER.pattern}")


def _open_marker_tail(text: str, after: str = "") -> int | None:
    """Start index of an unfinished marker that ``text`` ends with, if any.

    ``after`` holds the characters that follow ``text`` (in either compared text): an element closing such
    as ``<|end|>answer`` is unfinished only while its name may still go on.
    """
    element = _ELEMENT.get()
    if element is not None:
        m = element[1].search(text)
        if m is not None:
            closing_name = re.search(r"\|>(\w+)\Z", m.group(0))
            named_close = closing_name is not None and not m.group(0).startswith(element[2].open)
            if not (named_close and not any(ch.isalnum() or ch == "_" for ch in after)):
                return m.start()
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
    while (tail := _open_marker_tail(a[:p], a[p : p + 1] + b[p : p + 1])) is not None:
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
    for m in _marker_rx().finditer(text):
        if m.start() > pos:
            out.append(Segment("text", text[pos : m.start()]))
        out.append(Segment("marker", m.group()))
        pos = m.end()
    if pos < len(text):
        out.append(Segment("text", text[pos:]))
    return out


def is_marker(text: str) -> bool:
    """True when ``text`` is exactly one marker (pure)."""
    return _marker_rx().fullmatch(text) is not None
