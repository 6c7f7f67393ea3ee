"""The assistant turn as a learned layout (issue 18): what the model writes, segment by segment.

Every render here is the user turn followed by one assistant turn whose parts are needles (reasoning text,
answer text, calls whose names, ids and arguments are known), with the probe tools offered, so that only
the assistant's parts differ.  The turn's *output* is the render after the prompt render (the user turn and
the generation prompt): what the model writes, the history's turn minus what the generation prompt wrote.

From the outputs, by the needles' positions and by comparing outputs with each other (never by what a
marker looks like):

* ``lead``: text every output starts with that no later segment repeats (history's ``Assistant:``);
* ``output_prefix``: the tail of the generation prompt that later segments repeat in front of their
  header (gpt-oss's ``<|start|>assistant``): the first segment's header lacks it because the prompt wrote it;
* ``end``: what every output ends with (the turn end);
* each segment's header (in front of its needle) and trailer (after it): reasoning, content, and the call
  (learned as a call pattern by :mod:`workbench.analysis.pattern`, on the outputs);
* whether the segments are **headed messages**: headers that share an opener (and a closer) and differ in
  between (a channel word, a recipient); then a :class:`~workbench.spec.TurnLayout`.

The learner is a second opinion next to the probe phases: :func:`adopt_layout` keeps whichever spec reads
the template's own renders back best.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.analysis.align import Pieces, common_prefix, common_suffix
from workbench.analysis.diff import MIN_UNIT, current_evidence, segmentize
from workbench.analysis.envelope import learn_envelope
from workbench.analysis.pattern import Render, Request, _Renders, learn_pattern, render_ahead, typed_tools
from workbench.analysis.probes import (
    ARG_A,
    CONTENT_TEXT,
    FUNC_A,
    FUNC_B,
    ID_A,
    ID_B,
    REASONING_TEXT,
    TOOLS,
    USER,
    USER_TEXT,
    VALUE_A,
    VALUE_B,
    assistant,
)
from workbench.runtime.spec import (
    ContentSpec,
    FormatSpec,
    LayoutMessage,
    ReasoningSpec,
    ToolsSpec,
    TurnLayout,
    pattern_literal,
)
from workbench.template.render_cache import fingerprint

#: ``layout -> layout | None``: a format family's protocol rules that no template renders (escapes,
#: verbatim blocks, header attributes), added to a learned layout written in the family's own tokens (None:
#: not its tokens).  The families sit above the analysis and hand theirs in, by name
#: (:func:`workbench.formats.layout_protocols`).
LayoutProtocol = Callable[[TurnLayout], "TurnLayout | None"]

_WS = " \t\r\n"
_CLOSING = ">]})|"
_OPENING = "<[{("


def _call(name: str = FUNC_A, value: str = VALUE_A, call_id: str = ID_A) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": {ARG_A: value}}}


#: The conversations the learner renders (after the user turn), by name.
TURNS: dict[str, dict[str, Any]] = {
    "content": assistant(CONTENT_TEXT),
    "reasoning": assistant(CONTENT_TEXT, REASONING_TEXT),
    "call": assistant(None, calls=(_call(),)),
    "call_two": assistant(None, calls=(_call(), _call(FUNC_B, VALUE_B, ID_B))),
    "content_call": assistant(CONTENT_TEXT, calls=(_call(),)),
    "reasoning_call": assistant(None, REASONING_TEXT, calls=(_call(),)),
}


@dataclass
class TurnFacts:
    """What the learner read off the outputs (every text exactly as rendered)."""

    prompt: str = ""
    gen: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    lead: str = ""
    output_prefix: str = ""
    end: str = ""
    reasoning: tuple[str, str] | None = None  # (header at the turn's start, trailer)
    content: tuple[str, str] | None = None  # (header at the turn's start, trailer when the turn ends)
    content_after_reasoning: str | None = None  # the answer's header behind reasoning, when it differs
    content_before_call: str | None = None  # the answer's trailer when a call follows it
    content_with_call: str | None = None  # the answer's header when a call follows it, when it differs
    # what the answer beside calls writes after its text, before the first call's marker (the call-only
    # turn's header, less the start it shares with every turn: an empty reasoning block's closer)
    text_before_calls: str | None = None
    # the answer's header and trailer when it comes after the calls, wrapped there only (GUI-Owl's
    # '<conclusion>'): None when it comes first or is written as in an answer alone
    content_after_calls: tuple[str, str] | None = None
    reasoning_before_call: str = ""
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.notes.append(text)


class TurnRenderer:
    """Renders assistant turns after the user turn and cuts out their outputs (cached by conversation)."""

    def __init__(self, render: Render, evidence: Pieces) -> None:
        self.render = render
        self.evidence = evidence
        self.tools = list(TOOLS)
        self.prompt = render([dict(USER)], self.tools, True)
        self.user_only = render([dict(USER)], self.tools, False)
        self._cache: dict[bytes, str | None] = {}
        # The read-back's rendered turns (:func:`_read_back_turns`), once made.
        self.read_back_turns: list[_ReadBackTurn] | None = None

    @property
    def user_end(self) -> str | None:
        """What the user-only render writes after the user's text (the user turn's end)."""
        u = self.user_only
        i = u.rfind(USER_TEXT) if u is not None else -1
        return u[i + len(USER_TEXT) :] if u is not None and i >= 0 else None

    @property
    def roles(self) -> str:
        """What every turn's header starts with: the longest start of the generation prompt that the
        turns before the user's text also hold (``<|im_start|>`` of ``<|im_start|>assistant\n``).  Shorter
        than a unit of evidence (``<|`` of ``<|user|>``, ``<|assistant|>``) it is no header: an argument
        holding ``<|fake|>`` would end the output there."""
        gen, u = self.gen, self.user_only
        i = u.rfind(USER_TEXT) if u is not None else -1
        if not gen.strip(_WS) or i < 0:
            return ""
        before = u[:i]  # type: ignore[index]
        n = 0
        while n < len(gen) and gen[: n + 1] in before:
            n += 1
        found = _without_partial(_word_cut(gen[:n], [gen]), (self.user_end or "").strip(_WS))
        return found if len(found.strip(_WS)) >= MIN_UNIT else ""

    @property
    def gen(self) -> str:
        """What the generation prompt appends after the user turn (empty when unknown)."""
        p, u = self.prompt, self.user_only
        if p is None or u is None:
            return ""
        if p.startswith(u):
            return p[len(u) :]
        i = p.rfind(USER_TEXT)
        return p[i + len(USER_TEXT) :] if i >= 0 else ""

    def ahead(self, turns: Sequence[tuple[Mapping[str, Any], list[dict[str, Any]] | None]]) -> None:
        """Have the renders :meth:`output` reads for each (message, tools) made in one batch, when the
        render can batch (:func:`~workbench.analysis.pattern.render_ahead`)."""
        requests: list[Request] = []
        for message, tools in turns:
            tools = tools if tools is not None else self.tools
            requests.append(([dict(USER)], tools, True))
            requests.append(([dict(USER), dict(message)], tools, False))
        render_ahead(self.render, requests)

    def output(self, message: Mapping[str, Any], tools: list[dict[str, Any]] | None = None) -> str | None:
        """What the model writes for ``message``: the render after the prompt render; None when the render
        fails or does not continue the prompt."""
        tools = tools if tools is not None else self.tools
        key = fingerprint((message, tools))  # key order kept: templates see it
        if key not in self._cache:
            self._cache[key] = self._output(dict(message), tools)
        return self._cache[key]

    def _prompt_for(self, tools: list[dict[str, Any]]) -> str | None:
        return self.prompt if tools == self.tools else self.render([dict(USER)], tools, True)

    def _output(self, message: dict[str, Any], tools: list[dict[str, Any]]) -> str | None:
        prompt = self._prompt_for(tools)
        if prompt is None:
            return None
        text = self.render([dict(USER), message], tools, False)
        if text is None and message.get("content") is None and message.get("tool_calls"):
            text = self.render([dict(USER), {**message, "content": ""}], tools, False)
        if text is None or not text.startswith(prompt):
            return None
        return text[len(prompt) :]


class HeadlessTurnRenderer(TurnRenderer):
    """A turn renderer whose prompt stops after the head every turn's header starts with (``<|ch|>`` of
    the prompt's ``<|ch|>scratch\n``): where a template's prompt names the message it opens (reasoning)
    and its history names each message's kind itself, every turn continues this prompt."""

    def __init__(self, render: Render, evidence: Pieces, head: str) -> None:
        super().__init__(render, evidence)
        gen = self.gen
        self._drop = len(gen) - (gen.find(head) + len(head)) if head and head in gen else 0
        if self.prompt is not None and self._drop:
            self.prompt = self.prompt[: len(self.prompt) - self._drop]

    def _prompt_for(self, tools: list[dict[str, Any]]) -> str | None:
        prompt = super()._prompt_for(tools)
        if prompt is None or tools == self.tools or not self._drop:
            return prompt
        return prompt[: len(prompt) - self._drop]


def _call_start(text: str, after: int = 0) -> int:
    """Where the first call's own text starts in an output (its name, its id, or its JSON), from
    ``after``; what comes before it is the call's header.  The same cut for every output, so headers
    compare."""
    found = [i for i in (text.find(FUNC_A, after), text.find(ID_A, after), text.find("{", after)) if i >= 0]
    return min(found) if found else -1


def _calls_after(text: str, at: int, head: str) -> int:
    """Where the first call's own text starts after the answer at ``at`` (-1 when ``at`` is): where the
    call-only turn's header for it ends, when that header is found after the answer (a header that holds a
    ``{`` of its own, ``{"channel": "calls"}``, would stop :func:`_call_start` inside it)."""
    if at < 0:
        return -1
    if head.strip(_WS):
        found = text.find(head, at + len(CONTENT_TEXT))
        if found >= 0:
            return found + len(head)
    return _call_start(text, at)


def _before_header(between: str, head: str, ev: Pieces | None = None) -> str | None:
    """``between`` less the longest end of ``head`` it ends with (None: it ends with none of it), cut where
    a marker may start: at an opening bracket, or after a blank or another marker's closing bracket.  An
    empty ``head``: the call's own text starts the call (a JSON object), ``between`` is all trailer."""
    if not head.strip(_WS):
        return between
    bounds = ev.boundaries(head) if ev is not None else set()
    for k in range(len(head)):
        tail, before = head[k:], head[:k]
        if not tail.strip(_WS) or tail[0] in _WS or tail[0] in _CLOSING:
            continue
        # (or where a literal the template writes starts: '##invoke##' glued after '##/analysis##')
        opens = tail[0] in _OPENING or before[-1:] in (*_WS, *_CLOSING) or k in bounds
        if before and not opens:
            continue
        if between.endswith(tail):
            return between[: len(between) - len(tail)]
    return None


def _needle_at(text: str, needle: str) -> int:
    return text.find(needle)


def _g_suffixes(gen: str) -> list[str]:
    """Tails of the generation prompt that may open a later segment's header, longest first: never blank,
    never starting in the middle of a word or at a marker's closing bracket (the '>' of
    '<|end_header_id|>', which a '</progress>' before a call also ends with)."""
    out = []
    for n in range(len(gen), 0, -1):
        tail = gen[len(gen) - n :]
        if not tail.strip(_WS):
            continue
        before = gen[: len(gen) - n]
        if before and tail[0].isalnum() and before[-1].isalnum():
            continue
        if before and tail[0] in _CLOSING and before[-1] not in _WS:
            continue
        out.append(tail)
    return out


def learn_turn(tr: TurnRenderer) -> TurnFacts:
    """Read the turn's pieces off the outputs (see the module docstring); pure w.r.t. the template."""
    f = TurnFacts(prompt=tr.prompt or "", gen=tr.gen)
    ev = tr.evidence
    ev.add(f.gen, tr.user_end)
    tr.ahead([(message, None) for message in TURNS.values()])
    for name, message in TURNS.items():
        out = tr.output(message)
        if out is not None:
            f.outputs[name] = out
    o = f.outputs
    if "content" not in o or CONTENT_TEXT not in o["content"]:
        f.note("the answer-only turn does not continue the prompt: no layout")
        return f
    # The pieces each output holds between needles are evidence of unit boundaries.
    for out in o.values():
        for piece in _pieces(out):
            ev.add(piece)
    oc = o["content"]
    ic = oc.find(CONTENT_TEXT)
    h_c_full, tail_c = oc[:ic], oc[ic + len(CONTENT_TEXT) :]

    # The call outputs: where the first call slot starts and what follows the last one.
    call_heads: list[str] = []
    tails = [tail_c]
    if "call" in o and FUNC_A in o["call"]:
        oc1 = o["call"]
        first = _call_start(oc1)
        call_heads.append(oc1[:first])
        tails.append(oc1[oc1.rfind(VALUE_A) + len(VALUE_A) :])
    r_out = o.get("reasoning", "")
    ir = r_out.find(REASONING_TEXT)
    has_reasoning = ir >= 0 and CONTENT_TEXT in r_out[ir:]
    if has_reasoning:
        tails.append(r_out[r_out.rfind(CONTENT_TEXT) + len(CONTENT_TEXT) :])

    # The turn end: what every output ends with.
    f.end = _turn_end(common_suffix(tails, ev), o.get("content_call", "")) if len(tails) > 1 else ""
    # The lead: what every output starts with, unless the segments repeat it when they come later.
    heads = [h_c_full, *call_heads]
    if has_reasoning:
        heads.append(r_out[:ir])
    lead = common_prefix(heads, ev) if len(heads) > 1 else ""
    if lead.strip(_WS) and has_reasoning:
        mid = r_out[ir + len(REASONING_TEXT) : r_out.rfind(CONTENT_TEXT)]
        if mid.endswith(h_c_full):  # the answer after reasoning repeats it: part of the answer's header
            lead = ""
        elif len(lead) >= ir:  # the whole reasoning header: every turn opens reasoning, if only to close it
            lead = ""  # (``<think></think>`` before an answer), which the reasoning markers read
    if lead.strip(_WS):
        f.lead = lead
        f.note(f"every turn starts with {lead!r}, which the prompt does not write")
    h_c = h_c_full[len(f.lead) :]

    # The generation prompt's tail that later segments repeat in front of their header.
    transitions: list[tuple[str, str]] = []  # (text between two segments, the second one's header)
    if has_reasoning:
        transitions.append((r_out[ir + len(REASONING_TEXT) : r_out.rfind(CONTENT_TEXT)], h_c))
    if "content_call" in o and call_heads:
        occ = o["content_call"]
        at = occ.find(CONTENT_TEXT)
        first = _calls_after(occ, at, call_heads[0][len(f.lead) :])
        if at >= 0 and first > at:
            transitions.append((occ[at + len(CONTENT_TEXT) : first], call_heads[0][len(f.lead) :]))
    f.output_prefix = _output_prefix(f.gen, transitions)
    if "content_call" in o and call_heads:
        occ = o["content_call"]
        at = occ.find(CONTENT_TEXT)
        first = _calls_after(occ, at, call_heads[0][len(f.lead) :])
        between = occ[at + len(CONTENT_TEXT) : first] if at >= 0 and first > at else ""
        head = f.output_prefix + call_heads[0][len(f.lead) :]
        if between.endswith(head):
            f.content_before_call = between[: len(between) - len(head)]
        # (up to the call's own text as the call-only turn's header is cut: a one-character head, the '['
        # of '[f(x=1)]', is found inside the text's own closer, '[/PROGRESS]')
        calls_at = _call_start(occ, at + len(CONTENT_TEXT)) if at >= 0 else -1
        if calls_at > at:
            f.text_before_calls = _before_header(occ[at + len(CONTENT_TEXT) : calls_at], head, ev)
        if at >= 0:
            own = occ[:at][len(f.lead) :]
            if own != h_c_full[len(f.lead) :]:
                f.content_with_call = own
    if "content_call" in o and "call" in o and call_heads:
        f.content_after_calls = _wrapped_after_calls(o["content_call"], o["call"], f.end)
    if f.output_prefix:
        f.note(f"the generation prompt wrote {f.output_prefix!r}, which later segments repeat")
    s = f.output_prefix

    t_c = tail_c[: len(tail_c) - len(f.end)] if f.end and tail_c.endswith(f.end) else tail_c
    f.content = (h_c, t_c)
    if has_reasoning:
        h_r = r_out[len(f.lead) : ir]
        mid = r_out[ir + len(REASONING_TEXT) : r_out.rfind(CONTENT_TEXT)]
        if mid.endswith(s + h_c):
            t_r = mid[: len(mid) - len(s + h_c)]
        else:
            t_r = _trailer_from_other(o, mid, ev)
            after = mid[len(t_r) :]
            f.content_after_reasoning = after[len(s) :] if s and after.startswith(s) else after
        f.reasoning = (h_r, t_r)
    return f


def _wrapped_after_calls(occ: str, call_only: str, end: str) -> tuple[str, str] | None:
    """The answer's header and trailer when a turn writes its calls first and then the answer, wrapped
    (``...</tool_call>\n<conclusion>\nTEXT\n</conclusion>``): what the turn with an answer writes after
    what the call-only turn writes before its end.  None when the answer comes first or bare."""
    at = occ.find(CONTENT_TEXT)
    first = _call_start(occ)
    if at < 0 or first < 0 or first > at or not end or not call_only.endswith(end) or not occ.endswith(end):
        return None
    calls = call_only[: len(call_only) - len(end)]
    if not occ.startswith(calls) or len(calls) > at:
        return None
    head, tail = occ[len(calls) : at], occ[at + len(CONTENT_TEXT) : len(occ) - len(end)]
    if not head.strip(_WS) or not tail.strip(_WS):
        return None
    return head, tail


def _turn_end(end: str, between: str) -> str:
    """The turn's end: what every output ends with, from its first marker that no output also writes
    between two segments.  A marker written there closes a segment (``END`` closing the answer, then the
    calls, each written ``END`` by chance, then the turn's ``<|end|>``): the segments' trailers keep it.
    ``between``: an output with an answer and then calls."""
    while True:
        segments = [s for s in segmentize(end) if s.text.strip(_WS)]
        if len(segments) < 2 or not all(s.is_marker for s in segments):
            return end
        first = segments[0].text
        inside = between[: len(between) - len(end)] if between.endswith(end) else ""
        units = current_evidence()
        glued = end[end.find(first) : end.find(segments[1].text) + len(segments[1].text)]
        if first not in inside or (units is not None and units.holds(glued)):
            return end  # (markers the template writes as one literal, '<|message_end|>', stay one)
        end = end[end.find(first) + len(first) :]


def _trailer_from_other(o: Mapping[str, str], mid: str, ev: Pieces) -> str:
    """The reasoning's trailer when the answer after reasoning has a header of its own: the common start of
    what follows reasoning before an answer and before a call."""
    rc = o.get("reasoning_call", "")
    ir = rc.find(REASONING_TEXT)
    first = rc.find(FUNC_A, ir)
    if ir < 0 or first < 0:
        return mid
    other = rc[ir + len(REASONING_TEXT) : first]
    shared = common_prefix([mid, other], ev)
    # not the opening bracket two different markers begin with ('<' of '<answer>' and '<NAME>')
    while shared and shared[-1] in _OPENING and shared.rstrip(_OPENING).strip(_WS):
        shared = shared[:-1]
    return shared


def _output_prefix(gen: str, transitions: Sequence[tuple[str, str]]) -> str:
    """The longest tail of ``gen`` that every transition repeats in front of the next header."""
    if not transitions:
        return ""
    for tail in _g_suffixes(gen):
        if all(between.endswith(tail + head) for between, head in transitions):
            return tail
    return ""


def _pieces(text: str) -> list[str]:
    """The literal pieces of an output: the text between the needles it holds."""
    marks = sorted(
        (i, i + len(n))
        for n in (REASONING_TEXT, CONTENT_TEXT, FUNC_A, FUNC_B, ID_A, ID_B, VALUE_A, VALUE_B)
        for i in _all(text, n)
    )
    out, at = [], 0
    for start, end in marks:
        if start >= at:
            out.append(text[at:start])
            at = end
    out.append(text[at:])
    return out


def _all(text: str, needle: str) -> list[int]:
    out, i = [], text.find(needle)
    while i >= 0:
        out.append(i)
        i = text.find(needle, i + 1)
    return out


# ----------------------------------------------------------------------------------------- the call
class _OutputRenders(_Renders):
    """The call pattern learner's renders, in output coordinates: a call-only turn's output, with the
    prompt-written prefix in front, without the lead and the turn end."""

    def __init__(self, tr: TurnRenderer, facts: TurnFacts) -> None:
        super().__init__(tr.render, ())
        self.tr = tr
        self.facts = facts

    def region(self, *calls: dict[str, Any]) -> str | None:
        out = self.tr.output(assistant(None, calls=calls), typed_tools(calls))
        if out is None:
            return None
        f = self.facts
        if f.lead and out.startswith(f.lead):
            out = out[len(f.lead) :]
        if f.end and out.endswith(f.end):
            out = out[: len(out) - len(f.end)]
        text = (f.output_prefix + out).strip(_WS) if not f.output_prefix else f.output_prefix + out
        return text or None


def learn_calls(tr: TurnRenderer, facts: TurnFacts) -> tuple[Any, list[str]]:
    """The call pattern, learned on call-only outputs (as :func:`~.pattern.learn_pattern` learns it)."""
    return learn_pattern(tr.render, (), renders=_OutputRenders(tr, facts))


# ----------------------------------------------------------------------------------------- candidates
def _header_to_args(tools: Any) -> str:
    """A call's header as text up to its arguments (slots written as their names), behind the section's
    opening when the calls have one (a message to ``python`` holding call lines)."""
    text = tools.section_start + tools.call_start
    for part in tools.pattern.call:
        if part == "$args":
            break
        text += part if part.startswith("$") and not part.startswith("$$") else pattern_literal(part)
    return text


def _without_partial(prefix: str, marker: str) -> str:
    """``prefix`` without a tail that begins another marker the turns show (``<|`` of the user turn's end
    ``<|END_OF_TURN_TOKEN|>`` behind ``<|START_OF_TURN_TOKEN|>``): where the role words start, the
    turns' common start can hold the first characters of the role's own marker."""
    for k in range(min(len(marker) - 1, len(prefix)), 0, -1):
        if prefix.endswith(marker[:k]):
            return prefix[: len(prefix) - k]
    return prefix


def _word_cut(prefix: str, texts: Sequence[str]) -> str:
    """``prefix`` cut back so that it does not end in the middle of a word of ``texts``."""
    n = len(prefix)
    while n and prefix[n - 1].isalnum() and any(len(t) > n and t[n].isalnum() for t in texts):
        n -= 1
    return prefix[:n]


def _word_cut_suffix(suffix: str, texts: Sequence[str]) -> str:
    """``suffix`` moved forward so that it does not start in the middle of a word of ``texts``."""
    n = len(suffix)
    while (
        n
        and suffix[len(suffix) - n].isalnum()
        and any(len(t) > n and t[len(t) - n - 1].isalnum() for t in texts)
    ):
        n -= 1
    return suffix[len(suffix) - n :]


def headed_layout(facts: TurnFacts, tools: Any, ev: Pieces) -> TurnLayout | None:
    """The turn as headed messages, when the segments' headers share an opener (None otherwise)."""
    s = facts.output_prefix
    headers: dict[str, str] = {}
    if facts.reasoning is not None:
        headers["reasoning"] = s + facts.reasoning[0]
    if facts.content is not None and (facts.content[0].strip(_WS) or (s.strip(_WS) and facts.content[0])):
        # (a blank header behind the prompt's opener is a header too: GLM-4's '<|assistant|>' + '\n')
        headers["content"] = s + facts.content[0]
    call_head = _header_to_args(tools) if tools is not None and tools.pattern.defined else ""
    texts = [*headers.values(), *([call_head] if call_head else [])]
    if len(texts) < 2:
        return None
    opener = s if s else common_prefix(texts, ev)
    if not opener.strip(_WS) or not all(t.startswith(opener) for t in texts):
        return None
    rests = [t[len(opener) :] for t in texts]
    closer = _word_cut_suffix(common_suffix(rests), rests) if all(r.strip(_WS) for r in rests) else ""
    units = current_evidence()
    if units and closer:  # not inside a literal the template writes whole, where a shorter one is evidenced
        kept = units.cut_forward_from_end(len(closer), *rests)
        closer = closer[len(closer) - kept :] if kept else closer
    if len(closer.strip(_WS)) < 3:  # too short to tell a header's end from its text
        closer = ""
    kind_rests = [h[len(opener) : len(h) - len(closer)] for h in headers.values()]
    channel = ""
    if closer and len(kind_rests) >= 2:
        channel = _word_cut(common_prefix(kind_rests), kind_rests)
        if units and channel:
            channel = channel[: units.cut_back(len(channel), *kind_rests)] or channel
        if not channel.strip(_WS):
            channel = ""
    end = facts.end
    messages: list[LayoutMessage] = []
    if facts.reasoning is not None:
        messages.append(
            LayoutMessage(
                kind="reasoning",
                header=headers["reasoning"][len(opener) :],
                ends=_ends(facts.reasoning[1] or end),
            )
        )
    if "content" in headers and facts.content is not None:
        last, between = facts.content[1] + end, facts.content_before_call
        ends = (last,) if between is None or between == last else (last, between)
        messages.append(LayoutMessage(kind="content", header=headers["content"][len(opener) :], ends=ends))
        other = s + facts.content_with_call if facts.content_with_call is not None else ""
        known = {opener + m.header for m in messages}
        if other.startswith(opener) and other not in known and other.strip(_WS) and between:
            # The answer's header when calls follow it (a preamble channel), when it is no other kind's.
            messages.append(LayoutMessage(kind="content", header=other[len(opener) :], ends=(between,)))
    if not messages:
        return None
    return TurnLayout(
        lead=facts.lead, opener=opener, closer=closer, channel=channel, messages=tuple(messages)
    )


def _ends(*texts: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for t in texts if t.strip(_WS)))


def layout_candidates(base: FormatSpec, tr: TurnRenderer) -> tuple[list[tuple[str, FormatSpec]], list[str]]:
    """The specs the turn learner proposes next to ``base``: (name, spec) pairs, and the learner's notes."""
    facts = learn_turn(tr)
    notes = list(facts.notes)
    if facts.content is None:
        return [], notes
    learned, call_notes = learn_calls(tr, facts)
    out: list[tuple[str, FormatSpec]] = []
    lead_layout = TurnLayout(lead=facts.lead)
    # Marker layout: the segment markers as the needles put them.
    reasoning = base.reasoning
    if facts.reasoning is not None and facts.reasoning[1].strip(_WS):
        start, end = facts.reasoning
        mode = base.reasoning.mode if base.reasoning.mode not in ("none",) else "tag_based"
        if not start.strip(_WS) and mode == "tag_based":
            mode = "delimiter"
        reasoning = ReasoningSpec(mode=mode, start=start, end=end)
    content = _written_wrapper(base.content, facts, base.end_markers)
    h_c, t_c = facts.content
    t_c = _without_turn_end(t_c, facts.end, base.end_markers)
    if h_c.strip(_WS) and t_c.strip(_WS):
        content = ContentSpec(mode="always_wrapped", start=h_c, end=t_c)
    elif h_c.strip(_WS) and not (facts.reasoning and facts.reasoning[1].strip(_WS)):
        # an answer opened by a header of its own that runs to the turn's end ('Final Answer: ...'); only
        # where reasoning has no closer of its own to tell the answer's start (the one shape seen: ReAct)
        content = ContentSpec(mode="always_wrapped", start=h_c, end="")
    elif facts.content_after_reasoning and facts.content_after_reasoning.strip(_WS) and t_c.strip(_WS):
        content = ContentSpec(mode="wrapped_with_reasoning", start=facts.content_after_reasoning, end=t_c)
    elif facts.content_after_calls is not None and not h_c.strip(_WS) and not t_c.strip(_WS):
        # wrapped only after calls; an answer alone is bare, which the wrapper's reading allows
        content = ContentSpec(
            mode="always_wrapped",
            start=facts.content_after_calls[0].lstrip(_WS),
            end=facts.content_after_calls[1],
        )
    elif h_c.strip(_WS) and h_c.strip(_WS) not in facts.outputs.get("reasoning", h_c):
        # a mode marker in front of an answer that did not reason, which one after reasoning does not write
        # (KAT-V1's '<think_off>' against '<think_on><think>...</think>'): the answer's opener alone
        content = ContentSpec(mode="always_wrapped", start=h_c, end="")
    content = _after_reasoning_end(reasoning, content)
    content = _with_calls_wrapper(content, facts, reasoning)
    ends = list(base.end_markers)
    if facts.end.strip(_WS):  # the learned turn end replaces what the probes took for one
        ends = [facts.end.strip(_WS), *(e for e in (base.eos_token,) if e and e != facts.end.strip(_WS))]
    marker = replace(base, reasoning=reasoning, content=content, layout=lead_layout, end_markers=tuple(ends))
    out.append(("marker layout", marker))
    if learned is not None:
        out.append(
            ("marker layout, learned calls", replace(marker, tools=_after_empty_parts(marker, learned)))
        )
    headed = headed_layout(facts, learned, tr.evidence)
    if headed is not None:
        out.append(("headed messages", _headed_spec(base, facts, headed, learned)))
        notes.append(f"headed messages: opener {headed.opener!r}, closer {headed.closer!r}")
    if learned is not None:
        notes += call_notes
    return out, notes


def _written_wrapper(content: ContentSpec, facts: TurnFacts, end_markers: Sequence[str]) -> ContentSpec:
    """The probes' answer wrapper, or none when it is the turn's own frame: its opener written by no output
    of the learner's turns (the prompt's role token, Command R's ``<|CHATBOT_TOKEN|>``) and its closer the
    turn's end.  An answer never opens with it, and an export that opens the answer there reads none.  A
    wrapper the prompt opens and the answer closes (``<div class="answer">`` ... ``</div>``) stays."""
    start, end = content.start.strip(_WS), content.end.strip(_WS)
    if content.mode == "plain" or not start or any(start in out for out in facts.outputs.values()):
        return content
    if end and end not in {e.strip(_WS) for e in end_markers}:
        return content
    return replace(content, mode="plain", start="", end="")


def _without_turn_end(trailer: str, end: str, end_markers: Sequence[str]) -> str:
    """The answer's trailer less the turn's end, when the outputs' common end did not isolate it but the
    probes' end marker closes it (an end of turn glued to markers of the same spelling in every output,
    '##/answer##' and '##/functions##' before '<｜end▁of▁sentence｜>', has no evidenced start)."""
    if end.strip(_WS):
        return trailer
    core = trailer.rstrip(_WS)
    for marker in end_markers:
        m = marker.strip(_WS)
        if m and core.endswith(m) and core[: len(core) - len(m)].strip(_WS):
            return core[: len(core) - len(m)]
    return trailer


def _with_calls_wrapper(content: ContentSpec, facts: TurnFacts, reasoning: ReasoningSpec) -> ContentSpec:
    """``content`` with the answer's own wrapper when calls follow it, where the turns show one that the
    answer alone does not write: an agent's round writes its text as a report or a plan beside its calls
    and as the final answer otherwise (WebResearcher's ``<report>``/``<answer>``, AgentFlow's
    ``Sub-Goal:``/``Answer:``, Command R+'s ``Plan:`` before its calls and a bare answer)."""
    own, trailer = facts.content_with_call, facts.text_before_calls
    if trailer is None:  # the text does not come before the calls (GUI-Owl's conclusion after them)
        return content
    if own is None or own.strip(_WS) == content.start.strip(_WS):
        # the same opener, and a closer only beside calls (MathCoder's '<|text|>TEXT<|endofblock|>' then
        # '<|code|>'; alone, the block's closer is glued to the turn's end, '<|endofblock|><|endofmessage|>')
        if content.mode == "plain" or content.end.strip(_WS) or not trailer.strip(_WS):
            return content
        return replace(content, with_calls_start=content.start, with_calls_end=trailer)
    if not own.strip(_WS):
        return content
    # what every answer's header starts with is read before it: the empty reasoning block's closer, the
    # answer's own header (a turn that writes '</think> ' before any answer, then 'Plan: ' before calls)
    r_end = reasoning.end if reasoning.mode != "none" else ""
    empty_block = reasoning.start + r_end if r_end else ""
    for part in (empty_block, r_end, content.start):
        if part.strip(_WS) and own.startswith(part):
            own = own[len(part) :]
    if not own.strip(_WS):  # only an empty reasoning block in front of the text: no wrapper of its own
        return content
    return replace(content, with_calls_start=own, with_calls_end=trailer)


def _after_reasoning_end(reasoning: ReasoningSpec, content: ContentSpec) -> ContentSpec:
    """``content`` with its start cut after the reasoning's end when it begins with it: a block the prompt
    opens is closed in every turn, so an answer's header as the turns show it holds the (empty) block's
    closer (Kimi K3: ``<|close|>think<|sep|><|open|>response<|sep|>``); read as the answer's start, the
    reasoning's end would already have taken it."""
    end = reasoning.end.strip(_WS)
    start = content.start
    if reasoning.mode == "none" or not end or not start.startswith(end) or not start[len(end) :].strip(_WS):
        return content
    return replace(content, start=start[len(end) :].lstrip(_WS) if start[len(end) :].strip(_WS) else start)


def _after_empty_parts(spec: FormatSpec, tools: Any) -> Any:
    """``tools`` with the calls' opening cut after the empty parts a call-only turn writes before it, when
    the spec reads those as parts: the (empty) reasoning block's end and an empty answer (Kimi K3 writes
    ``<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|>`` before ``<|open|>tools`` in
    every turn; an answer with the calls ends at its own ``<|close|>response<|sep|>``)."""
    field = "section_start" if tools.section_start.strip(_WS) else "call_start"
    text = getattr(tools, field)
    reasoning_end = spec.reasoning.end.strip(_WS) if spec.reasoning.mode != "none" else ""
    empty_answer = spec.content.start + spec.content.end if spec.content.mode != "plain" else ""
    for part in (reasoning_end, empty_answer):
        if part.strip(_WS) and text.startswith(part) and text[len(part) :].strip(_WS):
            text = text[len(part) :]
    if text == getattr(tools, field):
        return tools
    return replace(tools, **{field: text})


def _headed_spec(base: FormatSpec, facts: TurnFacts, lay: TurnLayout, tools: Any) -> FormatSpec:
    """The spec of a headed layout: the layout, the call pattern, and the marker fields filled from it."""
    r = lay.message("reasoning")
    c = lay.message("content")
    # The first message's opener is the prompt's when it wrote it: the model starts at the header.
    opener = "" if facts.output_prefix and facts.output_prefix == lay.opener else lay.opener
    reasoning = (
        ReasoningSpec(mode="tag_based", start=opener + r.header, end=r.ends[0] if r.ends else "")
        if r is not None
        else ReasoningSpec()
    )
    content = (
        ContentSpec(mode="always_wrapped", start=opener + c.header, end=c.ends[0] if c.ends else "")
        if c is not None
        else ContentSpec()
    )
    ends = [e.strip(_WS) for e in (facts.end, *(c.ends if c else ())) if e.strip(_WS)]
    if tools is not None:
        for e in (tools.call_end, tools.section_end):
            if e.strip(_WS):
                ends.append(e.strip(_WS))
    # Where the output starts is read off the prompt by the layout: a message header, not an opened block.
    prompt = replace(base.prompt, output_prefix=facts.output_prefix, thinking_opened=False)
    return replace(
        base,
        reasoning=reasoning,
        content=content,
        tools=tools if tools is not None else ToolsSpec(),
        prompt=prompt,
        layout=lay,
        end_markers=tuple(dict.fromkeys(ends)),
    )


# ----------------------------------------------------------------------------------------- read-back
#: Calls the read-back renders beyond :data:`TURNS`: one value of every JSON type.
_TYPED = (7, 2.5, True, None, [1, "ab"], {"kk": 1})


def _read_back_cases(tr: TurnRenderer) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    cases: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [(m, tr.tools) for m in TURNS.values()]
    for value in _TYPED:
        calls = ({"id": ID_A, "type": "function", "function": {"name": FUNC_A, "arguments": {ARG_A: value}}},)
        cases.append((assistant(None, calls=calls), typed_tools(calls)))
    return cases


#: A read-back turn the template rendered: the message, the tools offered (as the parser takes them), and
#: what the model would have written.
_ReadBackTurn = tuple[dict[str, Any], list[Any], str]


def _read_back_turns(tr: TurnRenderer) -> list[_ReadBackTurn]:
    """The read-back's turns the template renders after its prompt, rendered in one batch; made once per
    :class:`TurnRenderer` (every candidate spec is read against the same turns)."""
    from workbench.runtime.chat import Tool

    if tr.read_back_turns is None:
        cases = _read_back_cases(tr)
        tr.ahead(cases)
        turns: list[_ReadBackTurn] = []
        for message, tools in cases:
            out = tr.output(message, tools)
            if out is not None:
                turns.append((message, [Tool.from_openai(t) for t in tools], out))
        tr.read_back_turns = turns
    return tr.read_back_turns


def read_back(spec: FormatSpec, tr: TurnRenderer) -> int:
    """How many of the learner's turns ``spec`` parses back to the parts rendered (pure)."""
    return sum(_reads_back(spec, tr, turn) for turn in _read_back_turns(tr))


def _reads_back(spec: FormatSpec, tr: TurnRenderer, turn: _ReadBackTurn) -> bool:
    """Does ``spec`` parse ``turn`` back to the parts rendered?"""
    from workbench.runtime.parsing import ParseOptions, parse

    message, tools, out = turn
    stage = spec.output_start_stage(generation_prompt=tr.prompt) if tr.prompt is not None else None
    try:
        parsed = parse(spec, out, tools, ParseOptions(start_stage=stage))
    except Exception:  # a spec that cannot even build a parser reads nothing back
        return False
    got = parsed.message
    want: list[tuple[str, Any]] = [
        (c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls", ())
    ]
    got_calls: list[tuple[str, Any]] = [(c.name, c.arguments_value()) for c in got.tool_calls]
    return (
        got_calls == want
        and (got.content or "").strip() == (message.get("content") or "").strip()
        and (got.reasoning_content or "").strip() == (message.get("reasoning_content") or "").strip()
    )


def _read_back_above(spec: FormatSpec, tr: TurnRenderer, best: list[bool]) -> list[bool] | None:
    """Which turns ``spec`` reads back, or None as soon as it cannot read back more than ``best`` does.

    The turns ``best`` misses are read first: a candidate that misses them too cannot do better, and is
    dropped after those few parses instead of a parse per turn (most candidates tie with the probes' spec,
    missing the same turns: the read-back parsed 24 turns per template on ../shared, now 17)."""
    turns = _read_back_turns(tr)
    order = [i for i, ok in enumerate(best) if not ok] + [i for i, ok in enumerate(best) if ok]
    to_beat = sum(best)
    results = [False] * len(turns)
    passed = 0
    for seen, i in enumerate(order, start=1):
        results[i] = _reads_back(spec, tr, turns[i])
        passed += results[i]
        if passed + len(order) - seen <= to_beat:
            return None
    return results if passed > to_beat else None  # no turns: nothing to beat with


def adopt_layout(
    base: FormatSpec,
    render: Render,
    evidence: Pieces | None = None,
    *,
    keep_reasoning: bool = False,
    protocols: Mapping[str, LayoutProtocol] | None = None,
    quiet: Render | None = None,
) -> tuple[FormatSpec, list[str]]:
    """``base``, or the learner's best candidate when it reads the template's turns back strictly better.

    When ``base`` already reads back every turn the template renders, nothing is learned (the common case
    costs the read-back's renders and parses only).  ``keep_reasoning``: the template renders conversations
    with tools through another template (a config's ``tool_use``); the learner's turns all carry tools,
    so the reasoning the probes read from the template without tools stays the spec's.  ``protocols``: the
    format families' rules no template renders, by family name (:func:`with_protocol`).  ``quiet``: the
    render with thinking switched off, for a template whose prompt opens reasoning that its history leaves
    out of an answer without any (the answer-only turn does not continue the prompt): the turn is learned
    after the prompt that opens no reasoning (:func:`_turn_renderer`)."""
    default = TurnRenderer(render, evidence or Pieces())
    tr = _turn_renderer(default, quiet)
    roles = tr.roles
    base = replace(base, layout=replace(base.layout, roles=roles))
    base_results = [_reads_back(base, tr, turn) for turn in _read_back_turns(tr)]
    said = [f"turns begin with {roles!r}"] if roles else []
    if base_results and all(base_results):
        return base, said
    candidates, notes = layout_candidates(base, tr)
    envelope = learn_envelope(base, {name: tr.output(message) for name, message in TURNS.items()}, tr.gen)
    if envelope is not None:  # first: a tie goes to the reading that decodes the JSON it reads
        candidates.insert(0, ("reply envelope", envelope[0]))
        notes.append(envelope[1])
    candidates = [
        (name, replace(spec, layout=replace(spec.layout, roles=roles))) for name, spec in candidates
    ]
    if keep_reasoning:
        candidates = [(name, replace(spec, reasoning=base.reasoning)) for name, spec in candidates]
    if not candidates:
        return base, said
    best, best_results, best_name = base, base_results, "probes"
    for name, spec in candidates:
        results = _read_back_above(spec, tr, best_results)
        if results is not None:
            best, best_results, best_name = spec, results, name
    if best is base:
        return base, said
    if tr is not default and read_back(best, default) < read_back(base, default):
        return base, said  # learned after the quiet prompt, it must read the default prompt's turns too
    # the note gives every candidate's score: those dropped early are read back whole, now
    scores = [f"probes: {sum(base_results)}"]
    scores += [
        f"{name}: {sum(best_results) if spec is best else read_back(spec, tr)}" for name, spec in candidates
    ]
    best, protocol = with_protocol(best, protocols or {})
    adopted = f"turn layout adopted ({best_name}); turns read back: {', '.join(scores)}"
    return best, [*notes, adopted, *protocol]


def _turn_renderer(tr: TurnRenderer, quiet: Render | None) -> TurnRenderer:
    """The turn renderer the learner reads: ``tr`` (after the default prompt), or, when the answer-only turn
    does not continue that prompt (headed messages whose prompt opens a reasoning message that an answer's
    history omits: '<|hdr|>assistant|reason|self<|txt|>' against '<|hdr|>assistant|chat|user<|txt|>'),
    one after the prompt with thinking off, or after the prompt cut after the turns' header head, the first
    whose turns hold the answer alone and, where the template renders reasoning, reasoning too."""
    _read_back_turns(tr)  # one batch: the answer-only turn is among them
    if tr.output(TURNS["content"]) is not None:
        return tr
    reasons = REASONING_TEXT in (tr.output(TURNS["reasoning"]) or "")
    others: list[Callable[[], TurnRenderer]] = []
    if quiet is not None:
        others.append(lambda: TurnRenderer(quiet, tr.evidence))
    roles = tr.roles
    if roles.strip(_WS) and tr.gen.strip(_WS) != roles.strip(_WS):
        # ... or one after the prompt cut after the turns' header head, when thinking off leaves no
        # reasoning to learn (reasoning_effort='none' drops it from the history too)
        others.append(lambda: HeadlessTurnRenderer(tr.render, tr.evidence, roles))
    for make in others:
        other = make()
        if other.prompt == tr.prompt:
            continue  # the template ignores the switches: its turns would be the default's
        _read_back_turns(other)
        answer, reasoning = other.output(TURNS["content"]), other.output(TURNS["reasoning"]) or ""
        if answer is None or (reasons and REASONING_TEXT not in reasoning):
            continue
        if (
            isinstance(other, HeadlessTurnRenderer)
            and reasoning
            and common_prefix([answer, reasoning]).strip(_WS)
        ):
            continue  # every turn goes on with the same header (a role word): not a header naming the message
        return other
    return tr


def with_protocol(spec: FormatSpec, protocols: Mapping[str, LayoutProtocol]) -> tuple[FormatSpec, list[str]]:
    """``spec`` with the protocol rules of the format family whose tokens its layout speaks (rules no
    template renders: escapes, verbatim blocks, header attributes); ``protocols`` by family name."""
    for name, protocol in protocols.items():
        added = protocol(spec.layout)
        if added is not None and added != spec.layout:
            note = f"{name} protocol rules added to the learned layout (escapes, verbatim blocks, ids)"
            return replace(spec, layout=added), [note]
    return spec, []


__all__ = [
    "TURNS",
    "LayoutProtocol",
    "TurnFacts",
    "TurnRenderer",
    "adopt_layout",
    "assistant",
    "headed_layout",
    "layout_candidates",
    "learn_calls",
    "learn_turn",
    "read_back",
]
