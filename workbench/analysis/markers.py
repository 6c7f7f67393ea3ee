"""Small text helpers shared by the phases: finding markers around a needle, whitespace handling.

Convention for extracted markers (the llama.cpp auto-parser's): a marker keeps the whitespace the template
renders *after* it (``<tool_call>\\n``, ``</think>\\n\\n``) and drops whitespace *before* it, which belongs to
the text in front.  Parsers match markers leniently on surrounding whitespace.
"""

from __future__ import annotations

from workbench.analysis.diff import Segment, common_prefix_len, segmentize

_WS = " \t\r\n"


def markers_in(text: str) -> list[str]:
    """The marker segments of ``text`` in order (pure)."""
    return [s.text for s in segmentize(text) if s.is_marker]


def only_space(text: str) -> bool:
    return not text.strip(_WS)


def leading_ws(text: str) -> str:
    return text[: len(text) - len(text.lstrip(_WS))]


def trailing_ws(text: str) -> str:
    return text[len(text.rstrip(_WS)) :]


def with_trailing_ws(marker: str, after: str) -> str:
    """``marker`` plus the whitespace that follows it in ``after`` (the text right behind the marker)."""
    return marker + leading_ws(after)


def strip_leading_ws(text: str) -> str:
    return text.lstrip(_WS)


def last_marker_before(text: str) -> Segment | None:
    """The last marker of ``text`` when only whitespace follows it (pure)."""
    segs = [s for s in segmentize(text) if s.text.strip(_WS)]
    if segs and segs[-1].is_marker:
        return segs[-1]
    return None


def first_marker_after(text: str) -> Segment | None:
    """The first marker of ``text`` when only whitespace precedes it (pure)."""
    segs = [s for s in segmentize(text) if s.text.strip(_WS)]
    if segs and segs[0].is_marker:
        return segs[0]
    return None


def common_prefix(texts: list[str]) -> str:
    """Longest common prefix of several texts (pure)."""
    if not texts:
        return ""
    out = texts[0]
    for t in texts[1:]:
        out = out[: common_prefix_len(out, t)]
    return out


def after(text: str, needle: str, start: int = 0) -> str | None:
    """The text after the first occurrence of ``needle`` at or after ``start`` (None when absent)."""
    i = text.find(needle, start)
    return None if i < 0 else text[i + len(needle) :]


def before(text: str, needle: str) -> str | None:
    """The text before the first occurrence of ``needle`` (None when absent)."""
    i = text.find(needle)
    return None if i < 0 else text[:i]


def strip_markers(text: str, markers: list[str]) -> str:
    """``text`` without any of ``markers`` (whitespace-stripped comparison) and without surrounding space."""
    out = text
    for m in sorted({m.strip(_WS) for m in markers if m.strip(_WS)}, key=len, reverse=True):
        out = out.replace(m, "")
    return out.strip(_WS)
