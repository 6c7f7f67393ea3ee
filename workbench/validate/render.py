"""Rendering a case through the template and cutting out what the model would have written.

The render-with-fallbacks part is :class:`CaseRenderer`; the cut (prompt diff, turn end, reasoning the
prompt opened) is :func:`render_case`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from workbench.analysis.diff import (
    MAX_UNIT,
    before_whole_units,
    common_prefix_len,
    common_suffix_aligned,
    current_evidence,
    diff_split,
    marker_evidence,
    segmentize,
)
from workbench.analysis.probes import without_call_ids
from workbench.analysis.renders import Fallback, LadderRequest, RenderLadder
from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.template import render_cache
from workbench.template.determinism import prints_an_address, varying_sources
from workbench.template.render import TemplateError, check_template_kwargs, clock_is_fixed
from workbench.template.render_cache import uncached_renders
from workbench.template.source import TemplateSource
from workbench.validate.cases import USER_TURN, Case, build_cases
from workbench.validate.report import NOT_RENDERED, RAISED, UNTESTABLE, RenderedCase

_WS = " \t\r\n"


class CaseRenderer:
    """Renders conversations through one template with the analyzer's documented fallbacks.

    Some templates read variables only one serving stack passes (``functions``, ``datetime``) or use
    constructs the immutable sandbox refuses (``list.append``); the analyzer renders those with named
    fallbacks, and validation must render the same text the spec was read from, so both go through the one
    :class:`~workbench.analysis.renders.RenderLadder`.  Every fallback taken is noted in the report.
    """

    def __init__(
        self,
        source: TemplateSource,
        time_limit: float = 2.0,
        template_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.source = source
        self.time_limit = time_limit
        # template switches (``--kw``); never a render argument such as ``time_limit``
        self.template_kwargs = check_template_kwargs(template_kwargs or {})
        self.notes: list[str] = []
        self._ladder = RenderLadder(source, time_limit=time_limit)
        self.notes.extend(_note(f) for f in self._ladder.fallbacks)  # taken before any case (content)
        # Second renders made ahead (:meth:`render_again_ahead`), by request, while the ladder has taken this
        # many fallbacks (a fallback taken since changes the render: those are then made again).
        self._again: dict[RequestKey, str | TemplateError] = {}
        self._again_epoch = 0
        # The texts rendered so far, by request, while the ladder had taken this many fallbacks: validation
        # asks for the same prompt for every case, and a request's key costs less than the render cache's
        # (which copies the whole context first).  Kept only where the render cache keeps renders.
        self._made: dict[RequestKey, str] = {}
        self._made_epoch = 0
        # The print of each tools list seen, by identity (the list is held, so its id stays its own): a
        # case's tools are the same list for all its renders, and their print is most of a request's key.
        self._tools_print: dict[int, tuple[list[dict[str, Any]], bytes]] = {}

    def request_key(self, request: CaseRequest) -> RequestKey:
        """``request`` as text: two requests with the same key render the same (mapping order kept: a
        template may print a mapping as it is)."""
        messages, tools, generation = request
        tools_print = b""
        if tools is not None:
            kept = self._tools_print.get(id(tools))
            if kept is None or kept[0] is not tools:
                kept = self._tools_print[id(tools)] = (tools, render_cache.fingerprint(tools))
            tools_print = kept[1]
        return (generation, tools_print, render_cache.fingerprint(messages))

    def render(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, generation: bool
    ) -> str:
        """Render with thinking enabled (the cases carry reasoning) and the template switches given; raises
        the template's error when no fallback helps."""
        seen = len(self._ladder.fallbacks)
        key = self._made_key((messages, tools, generation))
        if key is not None and key in self._made:
            return self._made[key]
        kwargs = {"enable_thinking": True, **self.template_kwargs}
        try:
            text = self._ladder.render(messages, tools, add_generation_prompt=generation, base_kwargs=kwargs)
        finally:
            self.notes.extend(_note(f) for f in self._ladder.fallbacks[seen:])
        if key is not None and len(self._ladder.fallbacks) == seen:
            self._made[key] = text
        return text

    def _made_key(self, request: CaseRequest) -> RequestKey | None:
        """The key of ``request`` among the texts made (None where none is kept: outside the render cache, as
        for the second renders, which must be made afresh); forgets them when a fallback was taken."""
        if not render_cache.enabled():
            return None
        if self._made_epoch != len(self._ladder.fallbacks):
            self._made.clear()
            self._made_epoch = len(self._ladder.fallbacks)
        return self.request_key(request)

    def render_ahead(self, requests: Sequence[CaseRequest]) -> list[str | TemplateError]:
        """Render ``requests`` (messages, tools, generation prompt) in one batch, into the render cache where
        :meth:`render` then finds them: exactly what :meth:`render` would make, without its fallbacks (a
        request that fails is made again, with them, when it is asked for)."""
        kwargs = {"enable_thinking": True, **self.template_kwargs}
        outcomes = self._ladder.render_batch([(m, t, g, kwargs) for m, t, g in requests])
        for request, outcome in zip(requests, outcomes, strict=True):
            key = self._made_key(request)
            if key is not None and isinstance(outcome, str):
                self._made[key] = outcome
        return outcomes

    def render_again_ahead(self, requests: Sequence[CaseRequest]) -> None:
        """Render ``requests`` afresh in one batch, for :meth:`render_again` (never from the cache)."""
        kwargs = {"enable_thinking": True, **self.template_kwargs}
        with uncached_renders():
            again = self._ladder.render_batch([(m, t, g, kwargs) for m, t, g in requests])
        self._again.update({self.request_key(r): outcome for r, outcome in zip(requests, again, strict=True)})
        self._again_epoch = len(self._ladder.fallbacks)

    def render_again(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, generation: bool
    ) -> str:
        """The render of :meth:`render` made afresh, never served from the render cache (does the template
        render the same text twice?): the one :meth:`render_again_ahead` made, else a new one."""
        kept = self._again.get(self.request_key((messages, tools, generation)))
        if kept is None or self._again_epoch != len(self._ladder.fallbacks):
            with uncached_renders():
                return self.render(messages, tools, generation)
        if isinstance(kept, TemplateError):
            raise kept
        return kept

    def may_render_differently(self, *texts: str) -> bool:
        """Can two renders of one request differ?  Only when the template text draws at random or reads an
        unfixed clock (:func:`~workbench.template.determinism.varying_sources`), or one of ``texts`` (its
        renders) prints an object's address; otherwise its renders are the same by construction and the
        stability check needs no second renders."""
        fixed = clock_is_fixed()
        if any(varying_sources(text, clock_fixed=fixed) for text in set(self._ladder.texts.values())):
            return True
        return any(prints_an_address(text) for text in texts)

    def render_continued_ahead(
        self,
        finished: Sequence[tuple[list[dict[str, Any]], list[dict[str, Any]] | None]],
        continued: Sequence[tuple[list[dict[str, Any]], list[dict[str, Any]] | None, str]],
    ) -> None:
        """Render, in one batch, the conversations :meth:`render` and :meth:`render_continued` will be asked
        for (without the generation prompt; ``continued`` with the field continued), into the render cache
        where those then find them."""
        kwargs = {"enable_thinking": True, **self.template_kwargs}
        requests: list[LadderRequest] = [(m, t, False, kwargs) for m, t in finished]
        requests.extend((m, t, False, self._continued_kwargs(field)) for m, t, field in continued)
        self._ladder.render_batch(requests)

    def _continued_kwargs(self, field: str) -> dict[str, Any]:
        target: bool | str = True if field == "content" else field
        return {"enable_thinking": True, **self.template_kwargs, "continue_final_message": target}

    def render_continued(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, field: str
    ) -> str:
        """Render with the final message continued (``continue_final_message``; ``field`` is ``content``
        or ``reasoning_content``): the prompt of a continuation, cut right after the partial text."""
        seen = len(self._ladder.fallbacks)
        kwargs = self._continued_kwargs(field)
        try:
            return self._ladder.render(messages, tools, add_generation_prompt=False, base_kwargs=kwargs)
        finally:
            self.notes.extend(_note(f) for f in self._ladder.fallbacks[seen:])


#: A render a case asks for: the conversation, the tools offered (None: none) and whether the generation
#: prompt is added.
CaseRequest = tuple[list[dict[str, Any]], list[dict[str, Any]] | None, bool]
#: A request as :meth:`CaseRenderer.request_key` tells it apart: generation prompt, prints of the tools and
#: of the messages (:func:`~workbench.template.render_cache.fingerprint`).
RequestKey = tuple[bool, bytes, bytes]


def render_cases_ahead(renderer: CaseRenderer, cases: Sequence[Case], *, again: bool = True) -> None:
    """Make the renders :func:`render_case` will ask for, in a few worker round trips instead of one per
    render: the generation prompts and bare histories, then each case's conversation (and its twin,
    :func:`_renders_like_its_twin`) in the first way the template takes it (:func:`message_variants`: one
    round per way, for the cases the previous way failed), then the second renders of the stability check.
    Nothing is decided here: :func:`render_case` makes its own choices and finds these renders in the
    cache (a template that needs a fallback gets the rest rendered then).  ``again=False``: not the second
    renders (kept by this renderer only, not by the render cache)."""
    # one list per tool set, shared by its cases: a batch copies each list it is given once (by identity),
    # and a tool set's schemas are most of what a render's context copy costs
    lists: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        if case.calls and case.tool_set not in lists:
            lists[case.tool_set] = case.tools.to_openai()
    offered = [lists[case.tool_set] if case.calls else None for case in cases]
    prompts = [([USER_TURN], tools, generation) for tools in offered for generation in (True, False)]
    outcomes = _render_unique(renderer, prompts)
    chosen: dict[int, CaseRequest] = {}
    key = renderer.request_key
    todo = [i for i, tools in enumerate(offered) if isinstance(outcomes[key(prompts[2 * i])], str)]
    for step in range(4):
        wanted: dict[int, tuple[CaseRequest, CaseRequest | None]] = {}
        for i in todo:
            ways = message_variants(cases[i])
            if step >= len(ways):
                continue
            as_string, empty = ways[step]
            case = cases[i]
            message = case.message(string_arguments=as_string, empty_content=empty)
            twin = None
            if (case.content is None) != (case.reasoning is None):
                swapped = replace(case, content=case.reasoning, reasoning=case.content)
                twin_message = swapped.message(string_arguments=as_string, empty_content=empty)
                twin = ([USER_TURN, twin_message], offered[i], False)
            wanted[i] = (([USER_TURN, message], offered[i], False), twin)
        if not wanted:
            break
        batch = [r for pair in wanted.values() for r in pair if r is not None]
        outcomes.update(_render_unique(renderer, batch))
        todo = []
        for i, (request, _) in wanted.items():
            text = outcomes[key(request)]
            if isinstance(text, str):
                chosen.setdefault(i, request)
                if not _prints_python_repr(text, cases[i]):
                    chosen[i] = request
                    continue
            todo.append(i)  # failed, or printed a Python repr: the next way is tried too
    if again and renderer.may_render_differently(*(o for o in outcomes.values() if isinstance(o, str))):
        seconds = [([USER_TURN], offered[i], True) for i in chosen] + list(chosen.values())
        renderer.render_again_ahead(_unique(renderer, seconds))


def _unique(renderer: CaseRenderer, requests: Sequence[CaseRequest]) -> list[CaseRequest]:
    return list({renderer.request_key(r): r for r in requests}.values())


def _render_unique(
    renderer: CaseRenderer, requests: Sequence[CaseRequest]
) -> dict[RequestKey, str | TemplateError]:
    """Each distinct request rendered once (one batch), by its key."""
    unique = _unique(renderer, requests)
    return dict(zip(map(renderer.request_key, unique), renderer.render_ahead(unique), strict=True))


def message_variants(case: Case) -> list[tuple[bool, bool]]:
    """The ways a case's message is passed, in the order :func:`render_case` tries them: (arguments as JSON
    text, missing content as ``""``); the first the template renders (without printing a Python repr) is
    the one the case is read from."""
    variants = [(as_string, empty) for empty in (False, True) for as_string in (False, True)]
    return [
        (as_string, empty)
        for as_string, empty in variants
        if not (as_string and not case.calls) and not (empty and case.content is not None)
    ]


def _note(fallback: Fallback) -> str:
    """A fallback in the words of the validation report."""
    if fallback.kind == "variable":
        return f"render fallback: the template reads {fallback.name!r}, which callers must pass; used ''"
    return f"render fallback {fallback.name!r}: {fallback.summary}"


def render_case(
    source: TemplateSource | CaseRenderer,
    spec: FormatSpec,
    case: Case,
    *,
    time_limit: float = 2.0,
    turn_end: str = "",
    tools: Sequence[Tool] | None = None,
) -> RenderedCase:
    """Render ``case`` after a user turn and cut out what the model would have generated.

    Arguments are passed as a mapping first (what most templates iterate); when the template fails on that,
    or prints the mapping's Python repr, they are passed as JSON text instead.  Cases without calls are
    rendered without tools unless the template needs them.  ``turn_end`` is an extra end-of-turn text (read
    off a render by :func:`find_turn_end` when the spec names none).  Returns a :class:`RenderedCase` whose
    ``unsupported`` is set when the case cannot be expressed by this template.  ``tools`` are the tools
    offered (the case's tool set unless a caller probes others).
    """
    renderer = source if isinstance(source, CaseRenderer) else CaseRenderer(source, time_limit)
    src = renderer.source
    tool_choices = [True] if case.calls else [False, True]
    prompt = base = ""
    offered: list[dict[str, Any]] | None = None
    error = ""
    for with_tools in tool_choices:
        if not with_tools:
            offered = None
        else:
            offered = [t.to_openai() for t in tools] if tools is not None else case.tools.to_openai()
        try:
            prompt = renderer.render([USER_TURN], offered, True)
            base = renderer.render([USER_TURN], offered, False)
            error = ""
            break
        except TemplateError as exc:
            error = str(exc)
    if error:
        # A case with calls is rendered with its tool set: a prompt that raises raised on those definitions.
        why = (
            f"the template raises on {case.tools.describes}"
            if case.calls
            else "the template cannot render the prompt"
        )
        return RenderedCase("", "", False, False, unsupported=f"{why}: {error}", skip=RAISED)

    full, variant = None, (False, False)
    message: dict[str, Any] = {}
    for as_string, empty in message_variants(case):
        try:
            candidate_message = case.message(string_arguments=as_string, empty_content=empty)
            candidate = renderer.render([USER_TURN, candidate_message], offered, False)
        except TemplateError as exc:
            error = str(exc)
            continue
        if full is None or not _prints_python_repr(candidate, case):
            full, variant, message = candidate, (as_string, empty), candidate_message
        if not _prints_python_repr(candidate, case):
            break
    if full is None:
        schema = f" (with {case.tools.describes})" if case.calls and case.tool_set != "plain" else ""
        return RenderedCase(
            "",
            "",
            False,
            False,
            unsupported=f"the template refuses this message{schema}: {error}",
            skip=RAISED,
        )
    if case.calls:
        # A template that writes a call's id where its label goes names the function only for a call
        # without an id (Kimi-K2-Thinking's functions.NAME:IDX): the case is read from that render then.
        full, message = _with_names(renderer, case, message, offered, prompt, full)
    unstable = _second_render_differs(renderer, message, offered, prompt, full)
    indistinct = _renders_like_its_twin(
        case, full, variant, lambda m: renderer.render([USER_TURN, m], offered, False)
    )

    cut, prompt_cut = _aligned_at_user_text(prompt, full)
    if cut < 0:
        cut = prompt_cut = _output_start(prompt, full, src, spec.layout.roles.strip())
        cut = _after_history_literal(prompt[prompt_cut:], full, cut, src)
        if cut != prompt_cut:
            prompt_cut = len(prompt)
    whole = full[cut:]
    added = prompt[prompt_cut:]  # what the generation prompt writes that the history does not
    note = ""
    if added:
        note = (
            f"the generation prompt adds {added!r}, which the history render does not contain; "
            "the output is cut at the common prefix"
        )
    history_header = full[len(base) : cut] if full.startswith(base) and len(base) <= cut else ""
    # What the generation prompt adds to the conversation (the templates that end a user turn differently
    # when a generation prompt follows are why this is a diff, not a slice).
    generation_prompt = prompt[common_prefix_len(base, prompt) :]
    output = cut_output(
        spec,
        whole,
        turn_ends(spec, src.eos_token, turn_end),
        next_turn_marker(history_header or generation_prompt, spec),
    )
    if note:
        thinking_opened = _opened_by_output(spec, output, full[:cut])
    else:
        thinking_opened = spec.output_start_stage(generation_prompt=generation_prompt) == "reasoning"
    # Context for parsers that read the prompt: the real generation prompt when the output continues it,
    # else the history's own text in front of the output.
    if thinking_opened and note:
        generation_prefix = history_header + added
    elif thinking_opened:
        generation_prefix = generation_prompt
    else:
        generation_prefix = history_header
    own = _own_header(generation_prompt, spec.layout.roles.strip())
    missing = _missing_trace(case, output, whole, own, turn_end) or indistinct
    if missing == NO_CALL_IDS and any("id" not in c for c in message.get("tool_calls", ())):
        missing = "the template writes a call's id only in place of its function's name (read without ids)"
    inside = "" if missing else _answer_left_inside_reasoning(spec, case, output, thinking_opened)
    compare_ids = bool(case.calls) and all(c.id in output for c in case.calls)
    return RenderedCase(
        output=output,
        generation_prefix=generation_prefix,
        thinking_opened=thinking_opened,
        compare_ids=compare_ids,
        prompt=full[:cut],
        unsupported=missing or inside,
        note=note,
        skip=NOT_RENDERED if missing else UNTESTABLE if inside else "",
        unstable=unstable,
    )


def _with_names(
    renderer: CaseRenderer,
    case: Case,
    message: dict[str, Any],
    offered: list[dict[str, Any]] | None,
    prompt: str,
    full: str,
) -> tuple[str, dict[str, Any]]:
    """``full`` and ``message``, or the render of ``message`` without call ids when only that one writes
    every call's name after the prompt (one render more, only where a name is missing)."""
    after = full[common_prefix_len(prompt, full) :]
    if all(c.name in after for c in case.calls):
        return full, message
    idless = without_call_ids([message])[0]
    try:
        other = renderer.render([USER_TURN, idless], offered, False)
    except TemplateError:
        return full, message
    named = other[common_prefix_len(prompt, other) :]
    return (other, idless) if all(c.name in named for c in case.calls) else (full, message)


def _aligned_at_user_text(prompt: str, full: str) -> tuple[int, int]:
    """Where the output starts in ``full`` and where the same place is in ``prompt``, when the two renders
    part before the user's text ends (-1, -1 otherwise): the template writes something before the last
    user turn only when it is the last message (tools offered with the final user message), so the common
    prefix would put the output's start inside the conversation.  The renders are then compared from the
    user's text on: the output starts where they part after it."""
    text = USER_TURN["content"]
    in_prompt, in_full = prompt.rfind(text), full.find(text)
    if in_prompt < 0 or in_full < 0 or common_prefix_len(prompt, full) >= in_full + len(text):
        return -1, -1
    if full.find(text, in_full + 1) >= 0:  # the user's text written twice: no one place to align at
        return -1, -1
    shared = common_prefix_len(prompt[in_prompt:], full[in_full:])
    return in_full + shared, in_prompt + shared


def _output_start(prompt: str, full: str, src: TemplateSource, roles: str = "") -> int:
    """Where the output starts in the history render ``full``: the end of its common prefix with the
    generation ``prompt``, moved back so that the output does not begin inside a literal the template
    writes whole (the analysis's evidence, issue 18: ``<answer>`` against a prompt's ``<think>`` shares
    ``<``).  A cut inside a literal of the history, at an inner unit's edge, must be one in the prompt too
    (CWM's prompt ``<think>`` against a history's ``<tool: ``, where the tool role's word ``tool:`` is a
    unit after the shared ``<``); a prompt literal alone that spans the cut (``<assistant><think>`` against
    a history's ``<assistant>`` written from the role) leaves the output's start clean.  The start
    of a turn header that both renders share (``roles``, ``<|START_OF_TURN_TOKEN|>`` of a literal
    ``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>``) is the prompt's, not the model's, unless the two part
    inside whole literals that share it as their head (s1's ``<|im_start|>think`` against
    ``<|im_start|>answer``: the output starts at the head).  Nor does the output start inside a word of a
    unit the prompt writes across the cut (``THINK`` against an answer's ``The``)."""
    from workbench.analysis.analyzer import template_evidence

    common = cut = common_prefix_len(prompt, full)
    evidence = current_evidence() or template_evidence(src)
    if evidence and 0 < cut < len(full):
        cut = evidence.cut_back(cut, full)
        in_word = 0 < cut < len(prompt) and prompt[cut - 1].isalnum() and prompt[cut].isalnum()
        if in_word and any(st < cut < en for st, en in evidence.occurrences(prompt, cut)):
            # inside a word of a unit the prompt writes ('THINK' against an answer's 'The'): no place to
            # part ('<assistant><think>' against a history's '<assistant>' from the role is)
            cut = evidence.cut_back(cut, full, prompt)
        if evidence.whole:  # not after the head two whole literals share ('<|im_start|>' of think / answer)
            headed = before_whole_units(evidence, prompt, full, cut)
            if headed < cut:  # the head of a turn header the two share is the output's here, not the prompt's
                cut, roles = headed, ""
        if any(s < cut < e for s, e in evidence.occurrences(full, cut)):
            # inside a literal of the history, at an inner unit's edge: the prompt's side must allow it too
            cut = evidence.cut_back(cut, full, prompt[: len(full)])
        # Not inside a literal of the history that runs past where the prompt parts from it, unless a literal
        # inside it ends at the cut (the prompt's side: 'model' of '<|turn|>model channel:reply<|text|>')
        # or the rest of it is one: a role word 'tool' that starts inside '<tool_call>' allows the cut
        # above, but against the prompt's '<think>' the output would start at 'tool_call>'.
        spans = evidence.occurrences(full, cut)
        inside = [
            s
            for s, e in spans
            if s < cut < e
            and e > common
            and (cut, e) not in spans
            and not any(e2 == cut and s2 >= s for s2, e2 in spans)
        ]
        if inside:
            cut = min(inside)
    if roles and cut < common and full.startswith(roles, cut) and cut + len(roles) <= common:
        # (not where the roles' text heads a marker closed after it: '<start_of_' of '<start_of_answer>')
        at = cut + len(roles)
        if not any(s < at < e and full[s:e] in evidence.closed for s, e in evidence.occurrences(full, at)):
            cut = at
    return cut


def _after_history_literal(added: str, full: str, cut: int, src: TemplateSource) -> int:
    """Where the output starts when the history writes a literal of its own in front of what the generation
    prompt writes (Motif-2: ``<|startofturn|><|assistant|>\n`` in history, ``<|assistant|>\n`` as the
    prompt): after the prompt's text there, which the model does not write.  Only where what lies in front
    is literal text the template writes whole (its evidence) and blanks; ``cut`` otherwise."""
    from workbench.analysis.analyzer import template_evidence

    if not added.strip(_WS):
        return cut
    at = full.find(added, cut, cut + MAX_UNIT + len(added))
    if at <= cut:
        return cut
    evidence = current_evidence() or template_evidence(src)
    with marker_evidence(evidence):
        pieces = segmentize(full[cut:at])
    if all(p.is_marker or not p.text.strip(_WS) for p in pieces):
        return at + len(added)
    return cut


def _second_render_differs(
    renderer: CaseRenderer,
    message: dict[str, Any],
    tools: list[dict[str, Any]] | None,
    prompt: str,
    full: str,
) -> str:
    """Render the case's prompt and conversation a second time; the first difference, or "" when both
    renders are the same text.  A template whose output changes from render to render (it prints the
    clock, draws ``random``) cannot be checked by any spec: the cut between prompt and answer moves.  The
    second renders are made afresh, never served from the render cache, and only for a template that can
    render differently (:meth:`CaseRenderer.may_render_differently`): for the others the answer is known."""
    if not renderer.may_render_differently(prompt, full):
        return ""
    try:
        again = (
            renderer.render_again([USER_TURN], tools, True),
            renderer.render_again([USER_TURN, message], tools, False),
        )
    except TemplateError as exc:
        return f"the second render raised: {exc}"
    for first, second, what in ((prompt, again[0], "prompt"), (full, again[1], "conversation")):
        if first != second:
            split = diff_split(first, second)
            return (
                f"the {what} rendered {split.left[:40]!r} the first time and {split.right[:40]!r} the second"
            )
    return ""


def find_turn_end(source: TemplateSource | CaseRenderer, spec: FormatSpec, *, time_limit: float = 2.0) -> str:
    """The text a template writes after an assistant answer, when the spec names no end marker.

    Serving stacks stop on the end-of-turn token and never pass it to the parser, so validation must cut it
    off too; a spec that forgot it (e.g. MiniMax's ``[e~[``) would otherwise fail on text no parser sees.
    Read off the content-only render: what follows the answer text, stripped; where the template renders a
    call too, only what a turn of calls ends with as well (an answer wrapper closed before the calls,
    ``【/answer】`` then ``【tool_calls】[...]``, ends the answer, not the turn).
    """
    if spec.end_markers:
        return ""
    cases = {c.id: c for c in build_cases(spec)}
    case = cases["content_only"]
    rendered = render_case(source, spec, case, time_limit=time_limit)
    if rendered.unsupported or not case.content:
        return ""
    at = rendered.output.rfind(case.content)
    tail = rendered.output[at + len(case.content) :] if at >= 0 else ""
    call = render_case(source, spec, cases["one_call"], time_limit=time_limit)
    if not call.unsupported and call.output:
        with marker_evidence(current_evidence() or _evidence_of(source)):
            tail = common_suffix_aligned(tail, call.output)
    tail = tail.strip()
    return tail if 0 < len(tail) <= 40 else ""


def _evidence_of(source: TemplateSource | CaseRenderer) -> Any:
    """The analysis's evidence of where markers begin, for the template behind ``source``."""
    from workbench.analysis.analyzer import template_evidence

    src = source if isinstance(source, TemplateSource) else source.source
    return template_evidence(src)


def _renders_like_its_twin(
    case: Case, full: str, variant: tuple[bool, bool], render_one: Callable[[dict[str, Any]], str]
) -> str:
    """A message with only content (or only reasoning) must render differently from its twin with the same
    text moved to the other field; when both render identically the template cannot tell them apart
    (gpt-oss writes the text of a message with tool calls to its analysis channel), so neither can a parser.
    """
    if (case.content is None) == (case.reasoning is None):
        return ""
    twin = replace(case, content=case.reasoning, reasoning=case.content)
    try:
        twin_render = render_one(twin.message(string_arguments=variant[0], empty_content=variant[1]))
    except TemplateError:
        return ""
    if twin_render != full:
        return ""
    if case.content is not None:
        return "the template writes this message's content exactly as it writes reasoning"
    return "the template writes reasoning exactly as it writes content"


def _answer_left_inside_reasoning(spec: FormatSpec, case: Case, output: str, thinking_opened: bool) -> str:
    """The history render leaves the answer inside a reasoning block it never closes (Nemotron writes
    ``<think>\n`` and then the answer): no model output looks like that, so the case cannot be checked."""
    end = spec.reasoning.end.strip()
    if thinking_opened and case.content and not case.reasoning and end and end not in output:
        return "the template writes the answer inside a reasoning block it never closes"
    return ""


def _prints_python_repr(rendered: str, case: Case) -> bool:
    """True when the template printed an arguments mapping with Python's repr (``{'city': 'Paris'}``)."""
    return any(c.arguments and repr(c.arguments) in rendered for c in case.calls)


def turn_ends(spec: FormatSpec, eos_token: str = "", turn_end: str = "") -> list[str]:
    """The texts a model stops on: the spec's end markers, the eos token and a render-derived turn end."""
    ends = [m.strip() for m in (*spec.end_markers, eos_token, turn_end) if m.strip()]
    return list(dict.fromkeys(ends))


def message_opener(spec: FormatSpec) -> str:
    """What opens each message of a turn of headed messages, or the generation prompt's tail that later
    segments repeat in front of their header (``output_prefix``: ``<|start|>assistant``); "" for any
    other layout.  After an end marker, it means the turn goes on."""
    if spec.layout.headed:
        return spec.layout.opener.strip()
    return spec.prompt.output_prefix.strip()


def _inner_markers(spec: FormatSpec) -> set[str]:
    """Markers that are followed by more of the same message: the end of reasoning (Harmony closes its
    analysis channel with ``<|end|>`` and carries on) and every tool-call marker (GigaChat opens a call
    with ``<|message_sep|>...function call``).  The end of content is not one: the message ends there."""
    out = {
        m.value.strip()
        for m in spec.marker_fields()
        if m.path.startswith("tools.") or m.path in _INNER_NON_TOOL_MARKERS
    }
    out.discard("")
    return out


# The non-tool markers after which the message goes on (the content's end is where it stops).
_INNER_NON_TOOL_MARKERS = frozenset({"reasoning.start", "reasoning.end", "content.start"})


def next_turn_marker(generation_prefix: str, spec: FormatSpec | None = None) -> tuple[str, str]:
    """The text every turn's header starts with (the spec's learned ``layout.roles``:
    ``<|START_OF_TURN_TOKEN|>`` of ``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>``), with the assistant header.
    A template that writes no end-of-turn marker after a message (Command R+ after tool calls) still starts
    the next turn with it; a model never writes another role's header, so the output ends there.
    The blanks the roles text ends with are kept: they are part of every header (``### `` of ``### User:``),
    and without them the text would also be found inside markers made of the same characters
    (``##/final####actions##`` holds ``###``).
    """
    header = generation_prefix.strip()
    roles = spec.layout.roles.lstrip() if spec is not None else ""
    if not roles or not header.startswith(roles):
        return "", ""
    return roles, header


def cut_output(spec: FormatSpec, whole: str, ends: Sequence[str], next_turn: tuple[str, str]) -> str:
    """The model's output in ``whole`` (the history render after the prompt): where the spec's format says
    its reply ends by its own structure (:attr:`~workbench.runtime.formats.base.FormatFamily.output_end`),
    else at the turn's end (:func:`cut_at_turn_end`)."""
    from workbench.runtime.formats import family_for

    fam = family_for(spec)
    end = fam.output_end(spec, whole) if fam is not None and fam.output_end is not None else None
    if end is not None:
        return whole[:end]
    return cut_at_turn_end(whole, ends, _inner_markers(spec), next_turn, message_opener(spec))


def cut_at_turn_end(
    whole: str,
    ends: Sequence[str],
    inner: set[str] | frozenset[str] = frozenset(),
    next_turn: tuple[str, str] = ("", ""),
    goes_on: str = "",
) -> str:
    """Cut the history render where the model stops: at the first end-of-turn marker that does not start
    one of the format's in-message markers (``inner``), or at the start of another role's turn.  Serving
    stacks do not pass the stop token to the parser, and whatever the template writes after it (the next
    turn, or a part of the message it moved behind the end of turn) is not something one generation
    produces.  ``goes_on``: the opener of a turn of headed messages (``<|start|>assistant``); an end marker
    that it follows ends one message of the turn, not the turn."""
    best = len(whole)
    found = False
    for marker in ends:
        at = whole.find(marker)
        while 0 <= at < best:
            rest = whole[at:]
            more = bool(goes_on) and rest[len(marker) :].lstrip(" \t\r\n").startswith(goes_on)
            opens_inner = any(m != marker and rest.startswith(m) for m in inner) or marker in inner
            if not opens_inner and not more:
                best, found = at, True
                break
            at = whole.find(marker, at + 1)
    turn, header = next_turn
    if turn and turn not in inner:
        covered = _inner_spans(whole, inner)
        at = whole.find(turn)
        while 0 <= at < best:
            # Another role's header ends the output, unless a call marker holds it (a role switch) or it
            # opens a further message of the assistant's own (``goes_on``: the answer's header after a
            # reasoning message whose header the prompt wrote).
            own = bool(goes_on) and whole.startswith(goes_on, at)
            if not whole.startswith(header, at) and not own and not any(a <= at < b for a, b in covered):
                best, found = at, True
                break
            at = whole.find(turn, at + 1)
    return whole[:best] if found else whole.rstrip()


def _inner_spans(whole: str, inner: set[str] | frozenset[str]) -> list[tuple[int, int]]:
    """Where the in-message markers occur in ``whole``, as ``(start, end)`` spans."""
    out = []
    for m in inner:
        at = whole.find(m) if m else -1
        while at >= 0:
            out.append((at, at + len(m)))
            at = whole.find(m, at + 1)
    return out


def _opened_by_output(spec: FormatSpec, output: str, before: str = "") -> bool:
    """When the prompt is not a prefix of the history render, the output starts at the common prefix; it is
    inside reasoning only if it closes a block it never opened (``reasoning</think>answer``), and not
    inside the answer's wrapper, which the history opens across the cut (HyperCLOVA X: the prompt's
    ``<|im_start|>assistant/think`` against a history's ``<|im_start|>assistant\n`` answer, whose
    ``<|im_end|>`` also ends reasoning)."""
    # the markers' cores: an empty block the history writes as '<think></think>' closes with '</think>' where
    # the reasoning's own end is '</think>\n' (Nemotron 3)
    start, end = spec.reasoning.start.strip(), spec.reasoning.end.strip()
    if not end or end not in output:
        return False
    answer = spec.content.start if spec.content.mode != "plain" else ""
    # the answer's or a call's opener spans (or ends at, or starts at) the cut: the history opened another
    # message than the prompt's (a call header whose head the prompt writes: '#pragma chat role(assistant)')
    for opener in (answer, spec.tools.trigger):
        if opener and before:
            at = (before + output).find(opener, max(0, len(before) - len(opener)))
            if 0 <= at <= len(before):
                return False
    head = output[: output.find(end)]
    trigger = spec.tools.trigger.strip()
    if trigger and trigger in head:
        return False  # the end marker sits after a tool call began (inside its arguments)
    return not (start and start in head)


#: Said of a call the template renders without its function's name (its id or its arguments show, the name
#: nowhere): the calls are rendered, so no verdict may call them unsupported; the spec cannot read them.
NAMELESS_CALL = "(the call is there, its id or arguments written, but never its function's name)"
#: Said of a call id the template does not write.
NO_CALL_IDS = "the template does not write call ids"
#: Said of a part the template renders but the spec's end-of-turn marker cuts off.
AFTER_TURN_END = "(it comes after the end-of-turn marker)"
#: Said of a part the template renders in a further message of the assistant's own, after a marker the spec
#: takes for the turn's end: the turn goes on, so the spec is what cannot express it.
IN_OWN_MESSAGE = "(it comes after the end-of-turn marker, in a further message of the assistant's own)"
#: Said of a part the template renders after what validation took for the turn's end where the spec names
#: none (:func:`find_turn_end`): the guess was wrong, the turn goes on, and the spec cannot say where it ends.
AFTER_GUESSED_END = "(it comes after the text taken for the turn's end, which the spec does not name)"


def _own_header(generation_prompt: str, roles: str) -> str:
    """The assistant's own message header as the generation prompt writes it, beyond what every turn's
    header starts with (``<|im_start|>assistant`` where turns begin with ``<|im_start|>``); "" when the
    prompt says nothing more than that."""
    header = generation_prompt.strip()
    if not roles or not header.startswith(roles):
        return ""
    return header if len(header) > len(roles) else ""


def _missing_trace(case: Case, output: str, whole: str, own: str = "", guessed_end: str = "") -> str:
    """Why the case is unsupported, judged from the render alone ("" when every part left a trace).  A part
    that comes after the spec's end of turn is said to, and to come in a further message of the
    assistant's when the text from the cut to it opens with the start of ``own``, the assistant's header
    (``<|im_start|>assistant`` of a call block ``<|im_start|>assistant -> tool/function_call``), or after
    ``guessed_end``, the turn's end validation read off a render because the spec names none (an answer
    wrapper's ``</answer>`` with the calls after it)."""

    def why(text: str, missing: str) -> str:
        if text not in whole:
            return missing
        between = whole[len(output) : whole.find(text)]
        if own and _opens_own_message(between, own):
            return f"{missing} {IN_OWN_MESSAGE}"
        if guessed_end.strip() and between.lstrip().startswith(guessed_end.strip()):
            return f"{missing} {AFTER_GUESSED_END}"
        return f"{missing} {AFTER_TURN_END}"

    if case.content and case.content.strip() not in output:
        return why(case.content.strip(), "the template drops this message's content")
    if case.reasoning and _first_line(case.reasoning) not in output:
        return why(_first_line(case.reasoning), "the template drops reasoning from the assistant turn")
    names = [c.name for c in case.calls]
    if names and names[0] not in output:
        first = case.calls[0]
        traces = [first.id, *(json.dumps(v, ensure_ascii=False) for v in first.arguments.values())]
        if any(t and (t in output or t.strip('"') in output) for t in traces if len(t.strip('"')) >= 3):
            return f"the template renders this call without its function's name {NAMELESS_CALL}"
        return why(names[0], "the template does not render tool calls")
    if len(names) > 1 and names[1] not in output:
        return why(names[1], "the template renders only one call per message")
    if "call_ids" in case.features and not all(c.id in output for c in case.calls):
        return NO_CALL_IDS
    return _dropped_argument(case, output)


def _dropped_argument(case: Case, output: str) -> str:
    """Why a call's argument is missing from the render ("" when none is): a template that writes the
    other arguments' keys but not this one's drops it (null, empty values: GLM and MiniMax templates do), so
    no spec can read it back.  A template that writes no key at all (positional arguments) says nothing."""
    for call in case.calls:
        keys = [str(k) for k in call.arguments]
        text = output.replace(call.name, "")  # a key inside the name ('mode' of 'set_mode') is no key written
        dropped = [k for k in keys if k not in text]
        if dropped and len(dropped) < len(keys):
            value = json.dumps(call.arguments[dropped[0]], ensure_ascii=False)
            return f"the template drops the argument {dropped[0]!r} (its value {value[:40]})"
    return ""


def _opens_own_message(between: str, own: str) -> bool:
    """Does ``between`` hold the first line of the assistant's header ``own`` (``<|im_start|>assistant`` of
    ``<|im_start|>assistant\n<think>``)?"""
    line = own.splitlines()[0].strip() if own.strip() else ""
    return bool(line) and line in between


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0]
