"""Phase 1: how reasoning is delimited (probes R1, R1c, R2, R3).

Sources of markers, in order of trust:

* R1 -- an assistant turn with ``reasoning_content`` against the same turn without it.  The reasoning text
  shows up in the diff; the markers around it are the reasoning markers.  Three shapes: the markers wrap the
  text in the diff (``wrapped``: ``<think>R</think>``); the template renders an empty block even without
  reasoning, so the markers sit in the common prefix/suffix (``in_block``: Qwen3, StepFun, GLM); or only a
  closing marker follows the text (``delimiter``: Apriel's ``[BEGIN FINAL RESPONSE]``).
* R1c -- the same with the reasoning given as a ``{"type": "thinking"}`` content block (Mistral's
  convention, e.g. ``[THINK]...[/THINK]``), tried only when R1 shows nothing.
* R3 -- reasoning next to tool calls against reasoning next to plain content: templates that keep reasoning
  only in tool-call turns (Command-R7B) are ``tools_only``.
* R2 -- ``enable_thinking`` false against true, in the generation prompt: templates that drop reasoning from
  history (DeepSeek, QwQ) still open ``<think>`` or close an empty block there.

The mode is then read off the prompt (see :func:`decide_mode`): an output that starts inside reasoning
because the prompt opened the block is ``forced_open``; a template whose thinking switch puts a closed empty
block into the prompt while leaving the opening to the model is ``forced_closed``.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.analysis.diff import DiffSplit, diff_split
from workbench.analysis.markers import first_marker_after, last_marker_before, leading_ws, markers_in
from workbench.analysis.probes import REASONING_TEXT
from workbench.analysis.prompt import opened_block_closer
from workbench.analysis.state import Findings
from workbench.analysis.switches import switch_settings


@dataclass(frozen=True)
class ReasoningMarkers:
    shape: str  # wrapped | in_block | delimiter
    start: str
    end: str


def read_markers(split: DiffSplit, needle: str = REASONING_TEXT) -> ReasoningMarkers | None:
    """The markers around ``needle`` in the B side of a diff (pure); None when the needle is not there."""
    right = split.right
    idx = right.find(needle)
    if idx < 0:
        return None
    pre, post = right[:idx], right[idx + len(needle) :]
    tail_of_b = post + split.suffix
    start_seg = last_marker_before(pre)
    end_seg = first_marker_after(post)
    if start_seg is not None:
        end_seg = end_seg or first_marker_after(tail_of_b)
        if end_seg is None:
            return None
        return ReasoningMarkers("wrapped", start_seg.text, _with_ws(end_seg.text, tail_of_b))
    if end_seg is not None:
        # Nothing opens the reasoning inside the diff: an empty block in A would have put its opener in the
        # common prefix; otherwise the closing marker is a delimiter.
        opener = last_marker_before(split.prefix) if not pre.strip() else None
        if opener is not None and _closes_in(split.suffix, split.left):
            return ReasoningMarkers("in_block", opener.text, _with_ws(end_seg.text, tail_of_b))
        return ReasoningMarkers("delimiter", "", _with_ws(end_seg.text, tail_of_b))
    if pre.strip() or post.strip():
        return None
    opener = last_marker_before(split.prefix)
    closer = first_marker_after(split.suffix)
    if opener is None or closer is None:
        return None
    return ReasoningMarkers("in_block", opener.text, _with_ws(closer.text, split.suffix))


def _with_ws(marker: str, text: str) -> str:
    """``marker`` plus the whitespace right after its first occurrence in ``text``."""
    i = text.find(marker)
    return marker + leading_ws(text[i + len(marker) :]) if i >= 0 else marker


def _closes_in(suffix: str, left: str) -> bool:
    return first_marker_after(left + suffix) is not None


@dataclass(frozen=True)
class PromptToggle:
    start: str
    end: str


def read_toggle(off: str, on: str) -> PromptToggle | None:
    """Reasoning markers from the two generation prompts (thinking disabled / enabled), pure."""
    if off == on:
        return None
    d = diff_split(off, on)
    off_only, on_only = markers_in(d.left), markers_in(d.right)
    if len(off_only) >= 2:  # a closed empty block when disabled: <think></think>
        return PromptToggle(off_only[0], _with_ws(off_only[-1], d.left + d.suffix))
    if len(off_only) == 1 and on_only:  # DeepSeek V3.1: </think> when disabled, <think> when enabled
        return PromptToggle(on_only[-1], off_only[0])
    if len(off_only) == 1:  # QwQ: "<think>\n" when enabled, "<think>\n</think>" when disabled
        opener = last_marker_before(d.prefix)
        if opener is not None:
            return PromptToggle(opener.text, off_only[0])
    return None


def analyze_reasoning(f: Findings) -> None:
    """Find the reasoning markers; the mode is decided once the prompt facts are known (mutates ``f``)."""
    found: ReasoningMarkers | None = None
    for probe_id in ("R1", "R1c", "R3"):
        if found is not None:
            break
        result = f.probe(probe_id)
        if result.diff is None:
            continue
        if result.diff.identical:
            f.note(probe_id, "renders are identical: the template drops this reasoning")
            continue
        found = read_markers(result.diff)
        if found is None:
            f.note(probe_id, "reasoning text not found between markers")
            continue
        f.reasoning_source = probe_id
        f.reasoning_shape = found.shape
        f.note(probe_id, f"{found.shape}: start {found.start!r}, end {found.end!r}")
    toggle = None
    off, on = f.gen.get("off"), f.gen.get("on")
    r2 = f.probe("R2")
    if off is not None and on is not None:
        toggle = read_toggle(off, on)
        if toggle is not None:
            f.note("R2", f"thinking switch: start {toggle.start!r}, end {toggle.end!r}")
        elif off == on:
            f.note("R2", "enable_thinking does not change the generation prompt")
        else:
            f.note("R2", f"enable_thinking changes the generation prompt ({off!r} -> {on!r}), not by markers")
    elif r2.error:
        f.note("R2", "not rendered")
    if found is None and toggle is not None:
        found = ReasoningMarkers("wrapped", toggle.start, toggle.end)
        f.reasoning_source = "R2"
    if found is None:
        found = reasoning_from_switches(f)
    if found is None:
        conv = opened_block_closer(f)
        if conv is not None:
            found = ReasoningMarkers("wrapped", conv[0], conv[1])
            f.reasoning_source = "P1"
            f.note(
                "P1",
                f"the prompt ends with an open {conv[0]!r}; an answer written after {conv[1]!r} loses "
                "what comes before it: that closes the block",
            )
    if found is None:
        f.reasoning.update(mode="none", start="", end="")
        return
    f.reasoning.update(start=found.start, end=found.end)
    f.reasoning_shape = f.reasoning_shape or found.shape


def reasoning_from_switches(f: Findings) -> ReasoningMarkers | None:
    """The reasoning markers seen with a template switch set (``thinking=true``, ``reasoning_effort``):
    the default render may drop reasoning, or never open it, while another value of a switch renders it.

    Tried in order: R1's diff (content against reasoning) rendered with ``enable_thinking`` on when it
    changes the prompt, then with each recorded switch value, those that render reasoning first; then a
    block the default prompt opens and a switch's prompt closes (:func:`_closed_by_a_switch`, confirmed by
    a render); then R2's reading of two generation prompts, for every two values of one switch.  Notes
    which setting showed the markers (mutates ``f``); None when no setting shows any.
    """
    r = f.renderer
    settings = switch_settings(f)
    if f.gen.get("on") is not None and f.gen.get("on") != f.gen.get("off"):
        # enable_thinking changes the prompt though the default render drops reasoning: a template that
        # writes reasoning only with the switch on (its prompt opening a block the off prompt leaves out)
        settings = [{"enable_thinking": True}, *settings]
    for kwargs in settings:
        plain, with_reasoning = r.render_with("content", kwargs), r.render_with("reasoning", kwargs)
        if plain is None or with_reasoning is None or plain == with_reasoning:
            continue
        found = read_markers(diff_split(plain, with_reasoning))
        if found is not None:
            f.reasoning_source = "R1"
            f.reasoning_shape = found.shape
            f.note("R1", f"with {_said(kwargs)}: {found.shape}: start {found.start!r}, end {found.end!r}")
            return found
    closed = _closed_by_a_switch(f)  # confirmed by a render: before the prompts' readings, which are not
    if closed is not None:
        return closed
    for name, info in (f.prompt.get("switches") or {}).items():
        prompts = [(e["value"], e.get("generation_prompt")) for e in info["effects"]]
        for off_value, off in prompts:
            for on_value, on in prompts:
                if off is None or on is None or off_value == on_value:
                    continue
                toggle = read_toggle(off, on)
                if toggle is not None:
                    f.reasoning_source = "R2"
                    f.note(
                        "R2",
                        f"switch {name!r}: {off_value!r} against {on_value!r}: start {toggle.start!r}, "
                        f"end {toggle.end!r}",
                    )
                    return ReasoningMarkers("wrapped", toggle.start, toggle.end)
    return None


def _closed_by_a_switch(f: Findings) -> ReasoningMarkers | None:
    """A block the default prompt opens and a switch's prompt closes, followed by the next segment's header
    (Solar Open: ``<|begin|>assistant<|think|>`` by default, ``…<|think|><|end|><|begin|>assistant`` with
    ``reasoning_effort='minimal'``; the history writes an empty block for an answer, so R1 found no
    markers).  The closer is the first unit the switch adds; the opener what the default prompt writes
    after the header the switch's prompt writes after the closer (else the prompt's last unit).
    Believed only when the template's render of reasoning writes the reasoning text right between them."""
    gen = f.gen.get("default") or f.gen.get("on")
    with_reasoning = f.probe("R1").render_b
    if not gen or not with_reasoning:
        return None
    for name, info in (f.prompt.get("switches") or {}).items():
        for effect in info["effects"]:
            closed = effect.get("generation_prompt")
            if not closed or not closed.startswith(gen) or closed == gen:
                continue
            opened, added = markers_in(gen), markers_in(closed[len(gen) :])
            if not opened or not added:
                continue
            end = added[0]
            # the opener: what the prompt writes after the header the switch's prompt opens next (the role
            # header '<|begin|>assistant' in front of '<|think|>'), else the prompt's last unit
            after = closed[len(gen) :]
            header = after[after.find(end) + len(end) :].strip()
            start = gen[len(header) :].strip() if header and gen.startswith(header) else opened[-1]
            if f"{start}{REASONING_TEXT}{end}" in with_reasoning:
                f.reasoning_source = "R2"
                f.note(
                    "R2",
                    f"switch {name!r}={effect['value']!r} closes the block the prompt opens: "
                    f"start {start!r}, end {end!r}",
                )
                return ReasoningMarkers("wrapped", start, end)
    return None


def _said(kwargs: dict[str, object]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def decide_mode(f: Findings) -> None:
    """Classify the reasoning mode once the prompt facts are known (mutates ``f``).

    * ``delimiter``: only an end marker exists; the output starts with reasoning.
    * ``forced_open``: the generation prompt (thinking enabled) ends inside the open block.
    * ``tools_only``: only tool-call turns keep reasoning (found by R3 alone).
    * ``forced_closed``: the thinking switch puts a closed empty block into the prompt when disabled, and
      leaves opening it to the model when enabled (Qwen3, GLM-4.6).
    * ``tag_based``: the model writes ``start ... end`` itself.
    """
    if not f.reasoning.get("end"):
        f.reasoning.update(mode="none", start="", end="")
        return
    p = f.prompt
    if f.reasoning_shape == "delimiter":
        mode = "delimiter"
    elif p.get("thinking_opened"):
        mode = "forced_open"
    elif f.reasoning_source == "R3":
        mode = "tools_only"
    elif p.get("supports_thinking_toggle") and p.get("thinking_closed_when_disabled"):
        mode = "forced_closed"
    else:
        mode = "tag_based"
    f.reasoning["mode"] = mode
