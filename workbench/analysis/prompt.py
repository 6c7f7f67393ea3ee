"""Phase 0 and 2b: the turn structure around the assistant's output.

Before any marker can be read, the analyzer must know where the assistant's turn starts and ends:

* the **generation prompt**: what ``add_generation_prompt`` appends after the last user turn (P1), per
  ``enable_thinking`` setting (some templates also edit the user turn, e.g. GLM appends ``/nothink``, so each
  setting is measured against the user-only render with the same setting);
* the **role header**: the part of the generation prompt that every assistant turn starts with (the common
  beginning of the generation prompts and of rendered assistant turns); what the prompt adds beyond it is
  what the model's output continues from (an opened ``<think>``, a closed empty block, ``>>>``);
* the **end of turn** (P2): the markers that close an assistant turn, which a parser strips.

Everything is measured from the end of the last user message, so templates that always append their
generation prompt (Command-R7B, Apriel) are handled like the others; for them the "generation prompt" starts
right after the user text and so includes the user turn's closing token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.analysis.diff import common_prefix_aligned, common_suffix_aligned, current_evidence, diff_split
from workbench.analysis.markers import common_prefix, markers_in
from workbench.analysis.probes import CONTENT_TEXT, FUNC_B, REASONING_TEXT, USER, USER_TEXT, USER_TEXT_2
from workbench.analysis.state import Findings
from workbench.template.literals import template_strings

_WS = " \t\r\n"

_SETTINGS = {
    "default": ("prompt_none", "prompt"),
    "off": ("prompt_none_think_off", "prompt_think_off"),
    "on": ("prompt_none_think_on", "prompt_think_on"),
}


def tail_after_user(text: str | None, user_text: str = USER_TEXT) -> str | None:
    """The text after the last occurrence of the user's message (None when absent)."""
    if text is None:
        return None
    i = text.rfind(user_text)
    return None if i < 0 else text[i + len(user_text) :]


def analyze_structure(f: Findings) -> None:
    """Generation prompts, user-turn end, raw role header and end-of-turn markers (mutates ``f``)."""
    r = f.renderer
    p1 = f.probe("P1")
    for key, (none_name, gen_name) in _SETTINGS.items():
        base = tail_after_user(r.get(none_name))
        full = tail_after_user(r.get(gen_name))
        if base is None or full is None:
            f.gen[key] = None
            continue
        if full == base:
            # add_generation_prompt changes nothing: the template always appends its prompt.
            f.gen[key] = full
            if key == "default":
                f.forced_generation_prompt = True
                f.user_end = ""
        elif full.startswith(base):
            f.gen[key] = full[len(base) :]
            if key == "default":
                f.user_end = base
        else:
            f.gen[key] = diff_split(base, full).right
    if p1.error:
        f.warn(f"P1: generation prompt unknown ({p1.error})")
    elif f.forced_generation_prompt:
        f.note(
            "P1",
            "the template appends its generation prompt even without add_generation_prompt: "
            f"measured from the end of the user text: {f.gen.get('default')!r}",
        )
    else:
        f.note("P1", f"generation prompt {f.gen.get('default')!r}")

    openings = [g for g in (f.gen.get("default"), f.gen.get("on"), f.gen.get("off")) if g is not None]
    for name in ("content", "call"):
        tail = tail_after_user(r.get(name))
        if tail is not None and tail.startswith(f.user_end):
            openings.append(tail[len(f.user_end) :])
    header = openings[0] if openings else ""
    for other in openings[1:]:
        header = diff_split(header, other).prefix
    f.raw_header = header
    _analyze_turn_end(f)


def _analyze_turn_end(f: Findings) -> None:
    """P2: the markers between the assistant's answer and whatever follows it."""
    r = f.renderer
    p2 = f.probe("P2")
    content = r.get("content")
    two = r.get("content_then_user")
    after_last = None
    if content is not None and CONTENT_TEXT in content:
        after_last = content[content.rfind(CONTENT_TEXT) + len(CONTENT_TEXT) :]
    between = None
    if two is not None and CONTENT_TEXT in two and USER_TEXT_2 in two:
        start = two.find(CONTENT_TEXT) + len(CONTENT_TEXT)
        between = two[start : two.rfind(USER_TEXT_2)]
    found: list[str] = []
    if after_last and between:
        common = common_prefix_aligned(after_last, between)
        if markers_in(common):
            found = _up_to_turn_end(
                markers_in(common), _user_end_marker(f), lambda: tail_after_user(r.get("call_two"))
            )
        else:  # e.g. gpt-oss: the last turn ends in <|return|>, earlier ones in <|end|>
            found = markers_in(after_last)[:1] + _first_non_header_marker(between, two)
    elif between:
        found = _first_non_header_marker(between, two)
    elif after_last:
        found = markers_in(after_last)[:1]
    if not found and after_last and between:
        found = _plain_terminator(after_last, between, tail_after_user(r.get("prompt_none")))
    eos = f.renderer.source.eos_token
    if eos and eos not in found:
        found.append(eos)
    f.end_markers = list(dict.fromkeys(m for m in found if m))
    if p2.error and not f.end_markers:
        f.warn(f"P2: end of turn unknown ({p2.error})")
    f.note("P2", f"end-of-turn markers {f.end_markers}" if f.end_markers else "no end-of-turn marker")


def _user_end_marker(f: Findings) -> str:
    """The first marker after the user's text: how this template ends a turn (pure w.r.t. ``f``)."""
    tail = tail_after_user(f.renderer.get("prompt_none"))
    found = markers_in(tail) if tail else []
    return found[0] if found and tail is not None and tail.strip().startswith(found[0]) else ""


def _up_to_turn_end(
    found: list[str], user_end: str, two_calls: Callable[[], str | None] | None = None
) -> list[str]:
    """Markers that close the assistant turn: up to the one that also closes user turns, else the first
    that does not close a block inside the turn.

    What follows belongs to the next turn (Command-R's ``<|START_OF_TURN_TOKEN|>``).  ``two_calls`` gives
    an assistant turn of two calls (what follows the user's text), asked for only when several markers are
    left to choose from (a template that hangs on calls must not spend a time limit here): a marker written
    between the calls, before the second call's name, closes each call, not the turn (``FINAL:`` ... ``END``
    and ``FUNCTION:`` ... ``END`` before the turn's own ``</s>``), unless every marker found is.
    """
    if user_end in found:
        return found[: len(found) - found[::-1].index(user_end)]
    text = two_calls() if two_calls is not None and len(found) > 1 else None
    if text:
        second = text.rfind(FUNC_B)
        for marker in found:
            if not 0 <= text.find(marker) < second:
                return [marker]
    return found[:1]


def _first_non_header_marker(between: str, two: str | None) -> list[str]:
    """The first marker of ``between`` unless it belongs to the next user turn's header.

    The user header is what precedes the user's text in both user turns (their common ending).
    """
    if two is None:
        return []
    first_user = two[: two.find(USER_TEXT)]
    user_header = common_suffix_aligned(first_user, between)
    head = between[: len(between) - len(user_header)] if user_header else between
    return markers_in(head)[:1]


_MAX_PLAIN_TERMINATOR = 40


def _plain_terminator(after_last: str, between: str, user_tail: str | None) -> list[str]:
    """A turn terminator that is not shaped like a ``<...>``/``[...]`` marker (MiniMax-M2's ``[e~[``).

    The terminator is the text an assistant turn writes after its answer whether or not another turn
    follows: the common beginning of what follows the answer in the last turn (``after_last``) and before
    the next user's text (``between``).  A template that always appends its generation prompt would make
    that common text run into the next turn's header, so the candidate is trusted only when user turns are
    closed by it too (``user_tail``: what follows the user's text), which is what tells a terminator from
    a header.  Surrounding whitespace is layout (end markers are stored trimmed), and only a short single
    line qualifies, so a template that merely separates turns by blank lines (RWKV) has none.
    """
    candidate = common_prefix_aligned(after_last, between).strip(_WS)
    if not candidate or len(candidate) > _MAX_PLAIN_TERMINATOR or "\n" in candidate:
        return []
    if user_tail is None or not user_tail.lstrip(_WS).startswith(candidate):
        return []
    return [candidate]


def analyze_prompt_facts(f: Findings, *, switched: tuple[str, str] | None = None) -> None:
    """Role header, what the generation prompt adds beyond it, and whether it opens reasoning (mutates ``f``).

    Runs after the reasoning phase, because a header must never swallow a reasoning start marker: StepFun's
    assistant turns *all* begin with ``<think>``, yet that ``<think>`` is what the prompt opens, not part of
    the role.  ``switched``: the (on, off) generation prompts of the template's own thinking switch, for a
    template that ignores ``enable_thinking`` (``switches.adopt_thinking_switch``).
    """
    header = f.raw_header
    start = f.reasoning.get("start", "").strip()
    if start and start in header:
        header = header[: header.find(start)]
    f.role_header = header
    gen_default = f.gen.get("default") or ""
    gen_on, gen_off = switched if switched is not None else (f.gen.get("on"), f.gen.get("off"))
    on = gen_on if gen_on is not None else gen_default
    off = gen_off if gen_off is not None else gen_default
    suffix_on = on[len(header) :] if on.startswith(header) else on
    suffix_off = off[len(header) :] if off.startswith(header) else off
    end = f.reasoning.get("end", "").strip()
    opened = False
    if f.reasoning_shape == "delimiter" and end:
        opened = True  # delimiter reasoning has no start marker: the output begins with it
    elif start:
        tail = suffix_on.rstrip()
        opened = tail.endswith(start) or (
            start in suffix_on and end not in suffix_on[suffix_on.rfind(start) :]
        )
    closed_when_off = bool(end) and end in suffix_off
    f.prompt.update(
        generation_prompt=gen_default,
        thinking_opened=opened,
        thinking_closed_when_disabled=closed_when_off,
        supports_thinking_toggle=(gen_on is not None and gen_off is not None and gen_on != gen_off),
        suffix_when_thinking=suffix_on,
        suffix_when_not_thinking=suffix_off,
    )


#: At most this many of the template's literals are tried as the end of a reasoning block the prompt opened.
MAX_CLOSER_CANDIDATES = 48


def opened_block_closer(f: Findings) -> tuple[str, str] | None:
    """The closer of a block the generation prompt opens but no render ever closes, found by rendering.

    NVIDIA Nemotron Nano v2 ends its prompt with ``<think>\n`` but never renders reasoning, so no diff shows
    the end marker; its template strips an answer's reasoning from history at a closer it tests for
    (``'</think>' in content``).  So each literal of the template is tried as that closer: an answer written
    as ``REASONING + literal + ANSWER`` whose render drops the reasoning and keeps the answer names it.
    Returns ``(start, end)``, the prompt's last unit of evidence and that literal, or None (pure w.r.t.
    ``f``, renders aside).
    """
    gen = f.gen.get("on") if f.gen.get("on") is not None else f.gen.get("default")
    ev = current_evidence()
    if not gen or ev is None:
        return None
    # What the prompt opens: the last unit it ends with.
    segs = markers_in(gen)
    if not segs or not gen.rstrip().endswith(segs[-1]):
        return None
    opener = segs[-1]
    if f.raw_header.strip() and opener in f.raw_header:
        # the role header every history turn starts with too (A.X 4.0's '<|im_start|><|assistant|>', whose
        # template also cuts a '</think>' prefix off an answer as a cleanup): the prompt opens no block
        return None
    # Candidates: every string of the template (a closer is often only tested for: "'</think>' in content").
    strings = template_strings(f.renderer.patched_source) | ev.units
    candidates = sorted(u for u in strings if u.strip() and u != opener and 3 <= len(u) <= 40)
    tried = [u for u in candidates[:MAX_CLOSER_CANDIDATES] if u in f.renderer.patched_source]
    if tried and _prints_every_candidate(f, tried):
        return None
    # In batches (one worker round trip each), the first candidate that works winning as before.  The first
    # batch is small: a template that hangs on these conversations costs the two time limits it cost one
    # render at a time (the renderer then stops rendering them), not a time limit per candidate.
    at = 0
    while at < len(tried):
        size = _FIRST_CLOSER_BATCH if at == 0 else _CLOSER_BATCH
        batch = tried[at : at + size]
        at += size
        requests = [_earlier_answer(f"{REASONING_TEXT}{literal}{CONTENT_TEXT}") for literal in batch]
        for literal, text in zip(batch, f.renderer.render_conversations(requests), strict=True):
            if text is not None and CONTENT_TEXT in text and REASONING_TEXT not in text:
                return opener, literal
    return None


def _prints_every_candidate(f: Findings, tried: list[str]) -> bool:
    """Does the template print, unchanged, an earlier answer that holds every candidate closer at once?

    Most templates that open a block in the prompt have no closer at all (they print an answer as it is):
    one render of an answer made of the reasoning, every candidate and the answer text, printed whole, says
    that none of the candidates cuts it, where trying them one by one costs a render each (18 per template
    on ../shared, a third of the analysis' renders, for the 3 in 35 that have one).  Anything else (a
    cut, an error, a trimmed or escaped answer) leaves the decision to the one-by-one search."""
    content = REASONING_TEXT + "".join(tried) + CONTENT_TEXT
    (text,) = f.renderer.render_conversations([_earlier_answer(content)])
    return text is not None and content in text


def _earlier_answer(content: str) -> tuple[list[dict[str, Any]], list[Any], bool]:
    """A conversation where ``content`` answers an earlier turn: history renders are the ones that strip
    reasoning."""
    message = {"role": "assistant", "content": content}
    later = {"role": "user", "content": USER_TEXT_2}
    return ([dict(USER), message, later], [], False)


#: How many closer candidates :func:`opened_block_closer` renders in its first batch, and in each after it.
_FIRST_CLOSER_BATCH = 2
_CLOSER_BATCH = 16


# The fields ``ToolsSpec.trigger`` reads, in its order: the first marker that announces a tool call.
_TRIGGER_FIELDS = ("section_start", "call_start", "code_block_marker", "name_prefix")


def _output_beginnings(f: Findings) -> list[str] | None:
    """Every marker an assistant output can begin with, or None when it can begin with free text.

    Optional reasoning (``tag_based``, ``tools_only``) may come first, so its start marker counts.  A prompt
    that closed reasoning (``forced_closed``) leaves only the answer.  Reasoning that the prompt opened or
    that has no start marker (``forced_open``, ``delimiter``) and unwrapped answers (``plain``) begin with
    free text, so the prompt cannot have written any of the format for them.
    """
    beginnings: list[str] = []
    mode = f.reasoning.get("mode", "none")
    if mode in ("delimiter", "forced_open"):
        return None
    if mode in ("tag_based", "tools_only"):
        beginnings.append(str(f.reasoning.get("start", "")))
    if f.content.get("mode", "plain") == "plain":
        return None
    beginnings.append(str(f.content.get("start", "")))
    if f.tools.get("format", "none") != "none":
        triggers = [str(f.tools.get(k) or "") for k in _TRIGGER_FIELDS]
        beginnings.append(next((t for t in triggers if t), ""))
    return None if not all(beginnings) else beginnings


def analyze_output_prefix(f: Findings) -> None:
    """``prompt.output_prefix``: the start of the output format that the generation prompt already wrote.

    Functionary v3.2 addresses every message with ``>>>`` + recipient (``>>>all\\n`` for text,
    ``>>>NAME\\n`` for a call) and its generation prompt ends with ``>>>``: the model's first token is the
    recipient, and a parser that does not know this never sees a marker.  The fact is read off the spec,
    not the template's name: the prompt's longest tail that every possible beginning of the output (the
    content marker, the tool-call trigger, an optional reasoning start) starts with.  Requiring *every*
    beginning keeps a role token that the answer may merely repeat (Command-R+'s ``<|CHATBOT_TOKEN|>``,
    which tool calls do not start with) out of it.  A tail that starts in the middle of a word is a
    coincidence of letters (a prompt ending in ``assistant`` and calls starting ``to=`` share a ``t``).
    Runs last, after the workarounds, because it reads the finished markers (mutates ``f``).
    """
    f.prompt["output_prefix"] = ""
    gen = f.gen.get("default") or ""
    beginnings = _output_beginnings(f)
    if not gen or not beginnings:
        return
    shared = common_prefix(beginnings)
    for n in range(min(len(gen), len(shared)), 0, -1):
        tail = gen[len(gen) - n :]
        if tail != shared[:n] or not tail.strip(_WS):
            continue
        before = gen[: len(gen) - n]
        if before and tail[0].isalnum() and before[-1].isalnum():
            continue
        f.prompt["output_prefix"] = tail
        f.note("P1", f"the generation prompt already wrote the start of the output format: {tail!r}")
        return
