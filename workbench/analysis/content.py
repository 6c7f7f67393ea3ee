"""Phase 2: whether the visible answer is wrapped in markers of its own (probe C1, plus R1's render).

C1 diffs a plain answer against a tool call (tools offered in both): the answer side then holds the answer
text and whatever the template wraps around *answers only*.  Markers that belong to other roles are
discounted first: an empty reasoning block in front (``<|START_THINKING|><|END_THINKING|>``) and the
end-of-turn marker behind (``<SPECIAL_12>``).  What remains on both sides of the text is a content wrapper
(Command-R7B's ``<|START_RESPONSE|>``...``<|END_RESPONSE|>``: ``always_wrapped``).  A wrapper that appears
only when reasoning precedes the answer is ``wrapped_with_reasoning``.
"""

from __future__ import annotations

from workbench.analysis.markers import markers_in, strip_leading_ws, strip_markers
from workbench.analysis.probes import CONTENT_TEXT, REASONING_TEXT
from workbench.analysis.state import Findings


def _wrapper(pre: str, post: str, f: Findings, tail: str = "") -> tuple[str, str] | None:
    """Content markers on both sides once reasoning markers are discounted (pure w.r.t. ``f``).

    The text comes from the side of a diff that only the answer has, so a marker behind the answer there is
    not the general end of turn (the call turn does not have it): it closes the answer.  When the diff
    leaves nothing behind the answer, a call closes with the same marker (``FINAL:`` ... ``END`` beside
    ``FUNCTION:`` ... ``END``): then the first marker behind the answer in the whole render (``tail``)
    closes it, unless it is the marker that ends every turn.
    """
    reasoning = [f.reasoning.get("start", ""), f.reasoning.get("end", "")]
    pre_rest = strip_markers(pre, reasoning)
    # Reasoning comes before the answer: behind it, a marker spelled like the reasoning's end is the
    # answer's own closer (bare-word formats close every block with the same ``END``).
    post_rest = post.strip(" \t\r\n")
    if markers_in(pre_rest) and not post_rest and tail:
        first = markers_in(tail)[:1]
        ends = [m.strip() for m in f.end_markers if m.strip()]
        if first and tail.lstrip(" \t\r\n").startswith(first[0]) and ends and first[0] != ends[-1]:
            post_rest = first[0]
    if not markers_in(pre_rest) or not markers_in(post_rest):
        return None
    # Keep the wrapper's own trailing whitespace as rendered (e.g. "<response>\n").
    start = pre[pre.find(pre_rest) :] if pre_rest in pre else pre_rest
    end = markers_in(post_rest)[0]
    if not post_rest.startswith(end):
        return None
    return strip_leading_ws(start), end


def analyze_content(f: Findings) -> None:
    """Find content wrapping markers (mutates ``f``)."""
    c1 = f.probe("C1")
    wrapped = None
    if c1.diff is not None and CONTENT_TEXT in c1.diff.left:
        left = c1.diff.left
        i = left.find(CONTENT_TEXT)
        whole = c1.render_a if c1.render_a and CONTENT_TEXT in c1.render_a else ""
        tail = whole[whole.rfind(CONTENT_TEXT) + len(CONTENT_TEXT) :] if whole else ""
        wrapped = _wrapper(left[:i], left[i + len(CONTENT_TEXT) :], f, tail)
    elif c1.error:
        f.note("C1", "not rendered; content wrapping read from R1 only")
    if wrapped is not None:
        f.content.update(mode="always_wrapped", start=wrapped[0], end=wrapped[1])
        full = c1.render_a if c1.render_a and CONTENT_TEXT in c1.render_a else left
        _drop_wrapper_closer(f, wrapped[1], full[full.rfind(CONTENT_TEXT) + len(CONTENT_TEXT) :])
        f.note("C1", f"answers are wrapped in {wrapped[0]!r} ... {wrapped[1]!r}")
        return
    f.note("C1", "answers are not wrapped")
    # Only with reasoning? Look at the reasoning render of R1, between the reasoning end and the answer.
    r1 = f.probes.get("R1")
    end = f.reasoning.get("end", "").strip()
    if r1 is None or r1.render_b is None or not end:
        return
    text = r1.render_b
    if REASONING_TEXT not in text or CONTENT_TEXT not in text:
        return
    after_reasoning = text[text.find(REASONING_TEXT) + len(REASONING_TEXT) :]
    if end not in after_reasoning:
        return
    after_end = after_reasoning[after_reasoning.find(end) + len(end) :]
    i = after_end.find(CONTENT_TEXT)
    if i < 0:
        return
    wrapped = _wrapper(after_end[:i], after_end[i + len(CONTENT_TEXT) :], f)
    if wrapped is not None:
        f.content.update(mode="wrapped_with_reasoning", start=wrapped[0], end=wrapped[1])
        # The wrapper's closer ends the answer, not the turn (calls may follow it): not an end marker.
        _drop_wrapper_closer(f, wrapped[1], after_end[i + len(CONTENT_TEXT) :])
        f.note("R1", f"after reasoning, answers are wrapped in {wrapped[0]!r} ... {wrapped[1]!r}")


def _drop_wrapper_closer(f: Findings, closer: str, tail: str) -> None:
    """The answer wrapper's closer ends the answer, not the turn (calls may follow it): it is no end
    marker.  P2 took the first marker after the answer, which is that closer, so the marker that really
    ends the turn (``<|/say|><|/bot|>``: the ``<|/bot|>``) is the first one after the closer in ``tail``,
    the text after the answer in the same render."""
    had = any(m.strip() == closer.strip() for m in f.end_markers)
    f.end_markers[:] = [m for m in f.end_markers if m.strip() != closer.strip()]
    if not had:
        return
    rest = tail[tail.find(closer) + len(closer) :] if closer and closer in tail else ""
    following = markers_in(rest)[:1]
    for m in following:
        if m not in f.end_markers:
            f.end_markers.insert(0, m)
