"""Continuation cases: a partial assistant message continued (``continue_final_message``), parsed back whole.

A serving stack that continues a message (an answer cut off, reasoning to carry on, a prefill) renders the
conversation with the partial message last and ``continue_final_message``; the model writes the rest, and
the parser must start in the stage that prompt left it in (the DeepSeek RFC's "stage detection from the
prompt", read by :meth:`FormatSpec.output_start_stage`) -- inside the reasoning block, inside an open answer
wrapper, or after reasoning closed, where a reasoning tag is just text.

Each case renders the *finished* message as a history turn and the *partial* one as a continuation prompt.
The prompt must be a prefix of the finished render (it is the same conversation, cut); the rest, cut at the
turn's end as the round-trip cases are, is what the model writes.  The parser reads it from the prompt's
stage, one-shot and at random chunkings, and the partial text joined with what it gives back must be the
finished message.  The partial texts end mid-word, so no whitespace policy of the parser decides the join.

A case is *unsupported* when the template cannot render it: it never reads the continued field, drops
reasoning from the assistant turn, or renders the partial message differently from the finished one.  The
built-in parser reads the cases (a ``parse`` function given to :func:`~workbench.validate.validate` knows
no stages); their results are kept apart from the round-trip cases (``ValidationReport.continuation``), so
exports that replay the round-trip outputs through other parsers and grammars are not given outputs that
start mid-message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from workbench.analysis.diff import common_prefix_len
from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.template.render import TemplateError
from workbench.validate.cases import PLAIN_TOOLS, ROUND_TRIP_TOOLS, USER_TURN
from workbench.validate.compare import check_output, stream_contract
from workbench.validate.render import (
    CaseRenderer,
    cut_output,
    next_turn_marker,
    turn_ends,
)
from workbench.validate.report import (
    CONTINUATION_FEATURE,
    NOT_RENDERED,
    RAISED,
    UNSUPPORTED,
    UNTESTABLE,
    CaseResult,
)

#: The feature every continuation case reports under (``validate`` text and ``--json``).
FEATURE = CONTINUATION_FEATURE

_REASONING = "The user asks a question.\nI should answer with the number."


@dataclass(frozen=True)
class ContinuationCase:
    """A finished assistant message and the partial one a prompt continues (``field`` is what goes on)."""

    id: str
    description: str
    content: str
    reasoning: str | None
    partial_content: str
    partial_reasoning: str | None
    field: str  # "content" or "reasoning_content": continue_final_message's target

    def message(self, *, partial: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": "assistant",
            "content": self.partial_content if partial else self.content,
        }
        reasoning = self.partial_reasoning if partial else self.reasoning
        if reasoning is not None:
            out["reasoning_content"] = reasoning
        return out

    def expected(self) -> dict[str, Any]:
        return {"content": self.content, "reasoning_content": self.reasoning or "", "tool_calls": []}


CASES: tuple[ContinuationCase, ...] = (
    ContinuationCase(
        "continue_answer",
        "a partial answer continued",
        content="The capital of France is Paris.",
        reasoning=None,
        partial_content="The capital of Fra",
        partial_reasoning=None,
        field="content",
    ),
    ContinuationCase(
        "continue_reasoning",
        "partial reasoning continued, then the answer",
        content="It is 42.",
        reasoning=_REASONING,
        partial_content="",
        partial_reasoning="The user asks a ques",
        field="reasoning_content",
    ),
    ContinuationCase(
        "continue_answer_after_reasoning",
        "a partial answer after finished reasoning, continued",
        content="It is 42, the answer.",
        reasoning=_REASONING,
        partial_content="It is 4",
        partial_reasoning=_REASONING,
        field="content",
    ),
)


def continuation_results(
    renderer: CaseRenderer, spec: FormatSpec, *, turn_end: str = "", streamed: bool = True
) -> tuple[CaseResult, ...]:
    """Render, cut and parse back every continuation case (see the module doc); ``streamed=False`` parses
    one-shot only."""
    tools, base, header = render_continuations_ahead(renderer)
    return tuple(_run(renderer, spec, case, tools, base, header, turn_end, streamed) for case in CASES)


def render_continuations_ahead(
    renderer: CaseRenderer,
) -> tuple[list[dict[str, Any]] | None, str, str]:
    """Make the renders the continuation cases ask for, in one batch (:meth:`CaseRenderer.
    render_continued_ahead`); returns :func:`_conversation_so_far`."""
    tools, base, header = _conversation_so_far(renderer)
    renderer.render_continued_ahead(
        [([USER_TURN, case.message(partial=False)], tools) for case in CASES],
        [([USER_TURN, case.message(partial=True)], tools, case.field) for case in CASES],
    )
    return tools, base, header


def _conversation_so_far(renderer: CaseRenderer) -> tuple[list[dict[str, Any]] | None, str, str]:
    """The tools to render with (none, unless the template needs them), the render of the user turn alone,
    and what the generation prompt adds after it (the assistant header that starts every turn)."""
    for tools in (None, PLAIN_TOOLS.to_openai()):
        try:
            prompt = renderer.render([USER_TURN], tools, True)
            base = renderer.render([USER_TURN], tools, False)
        except TemplateError:
            continue
        return tools, base, prompt[common_prefix_len(base, prompt) :]
    return None, "", ""


def _run(
    renderer: CaseRenderer,
    spec: FormatSpec,
    case: ContinuationCase,
    tools: list[dict[str, Any]] | None,
    before: str,
    header: str,
    turn_end: str,
    streamed: bool = True,
) -> CaseResult:
    base = CaseResult(
        id=case.id,
        features=(FEATURE,),
        description=case.description,
        status=UNSUPPORTED,
        expected=case.expected(),
        continued=_partial_contract(case),
    )
    try:
        full = renderer.render([USER_TURN, case.message(partial=False)], tools, False)
        prompt = renderer.render_continued([USER_TURN, case.message(partial=True)], tools, case.field)
    except TemplateError as exc:
        if case.field == "reasoning_content" and exc.kind == "usage":
            return replace(
                base,
                reason=f"the template does not render this message's reasoning ({exc})",
                skip=NOT_RENDERED,
            )
        return replace(base, reason=f"the template cannot render this continuation: {exc}", skip=RAISED)
    if case.reasoning and _first_line(case.reasoning) not in full:
        return replace(base, reason="the template drops reasoning from the assistant turn", skip=NOT_RENDERED)
    if not full.startswith(prompt):
        at = common_prefix_len(prompt, full)
        return replace(
            base,
            reason="the template renders the partial message differently from the finished one "
            f"(they part at {prompt[at : at + 30]!r})",
            skip=NOT_RENDERED,
        )
    output = cut_output(
        spec,
        full[len(prompt) :],
        turn_ends(spec, renderer.source.eos_token, turn_end),
        next_turn_marker(header, spec),
    )
    # The stage is read off the assistant turn the prompt opened: what follows the conversation before it
    # (a system text that mentions a marker is no part of the turn).
    turn = prompt[common_prefix_len(before, prompt) :]
    if case.field == "content" and case.reasoning and _first_line(case.reasoning) not in turn:
        # the template writes the reasoning after the answer (Holo's {"note": ..., "thought": ...}): the
        # continuation holds it, the prompt does not
        base = replace(base, continued={**base.continued, "reasoning_content": ""})
    stage = spec.output_start_stage(generation_prompt=turn)
    end = spec.reasoning.end.strip()
    if case.field == "content" and stage == "reasoning" and end and end not in output:
        return replace(
            base,
            reason="the template writes the answer inside a reasoning block it never closes",
            skip=UNTESTABLE,
        )
    return recheck(spec, replace(base, output=output, start_stage=stage, prompt=prompt), streamed=streamed)


def recheck(
    spec: FormatSpec, case: CaseResult, tools: Sequence[Tool] = ROUND_TRIP_TOOLS, *, streamed: bool = True
) -> CaseResult:
    """Parse a continuation case's output from its recorded stage and compare partial + parsed with the
    finished message (also what re-checking a recorded report does)."""
    partial = case.continued

    def parse_joined(
        spec: FormatSpec, text: str, tools: Sequence[Tool], _opened: bool, cuts: Sequence[int] | None
    ) -> dict[str, Any]:
        return joined(parse_from_stage(spec, text, tools, case.start_stage, cuts))

    def joined(got: dict[str, Any]) -> dict[str, Any]:
        for key in ("content", "reasoning_content"):
            got[key] = (partial.get(key) or "") + (got.get(key) or "")
        return got

    def stream_joined(
        spec: FormatSpec, pieces: Sequence[str], tools: Sequence[Tool]
    ) -> tuple[dict[str, Any], list[str]]:
        from workbench.runtime.parsing import ParseOptions

        options = ParseOptions(enable_thinking=True, start_stage=case.start_stage or None)
        got, violations = stream_contract(spec, pieces, tools, options)
        return joined(got), violations

    status, reason, parsed, mismatches = check_output(
        spec,
        case.id,
        case.output,
        case.expected,
        thinking_opened=case.start_stage == "reasoning",
        compare_ids=False,
        tools=tools,
        parse=parse_joined,
        stream=stream_joined,
        streamed=streamed,
    )
    if reason:
        reason = f"parsed from the stage {case.start_stage!r} the prompt leaves: {reason}"
    return replace(case, status=status, reason=reason, parsed=parsed, mismatches=mismatches)


def parse_from_stage(
    spec: FormatSpec, text: str, tools: Sequence[Tool], stage: str, cuts: Sequence[int] | None
) -> dict[str, Any]:
    """Parse ``text`` with the spec's stream parser started in ``stage``, in one piece or cut at ``cuts``."""
    from workbench.runtime.parsing import ParseOptions, StreamParser

    options = ParseOptions(enable_thinking=True, start_stage=stage or None)
    parser = StreamParser(spec, list(tools), options=options)
    last = 0
    for cut in [*(cuts or ()), len(text)]:
        parser.feed(text[last:cut])
        last = cut
    return parser.finish().message.to_contract()


def _partial_contract(case: ContinuationCase) -> dict[str, str]:
    """The text the prompt already holds, per field: what the parsed continuation is appended to.  With the
    answer continued, finished reasoning is in the prompt whole."""
    if case.field == "content":
        return {"content": case.partial_content, "reasoning_content": case.reasoning or ""}
    return {"content": "", "reasoning_content": case.partial_reasoning or ""}


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0]
