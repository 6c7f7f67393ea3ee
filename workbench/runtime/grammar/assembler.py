"""The one output-grammar assembler: spec, tools and tool choice -> the whole output as ONE structural tag.

Three consumers need the grammar of an output and used to build it three ways: the generator (its phased
:class:`~workbench.runtime.grammar.plan.GrammarPlan`), the structural-tag export, and the serving plug-ins,
which build a tag per request.  The export and the plug-ins call :func:`assemble`; the generator's
:func:`~workbench.runtime.grammar.build.build_grammar` shares its pieces (:func:`normalize_tool_choice`,
:func:`reasoning_gate`, the format's :class:`~workbench.runtime.grammar.tool_grammar.ToolGrammar`,
:data:`WHITESPACE`), so there is one tool-choice rule and one whitespace rule.

The document, in order:

- reasoning (when ``reasoning`` and the format reasons): optional, free text up to the end marker; when the
  output opens the block itself, a few blanks may come before it (:data:`BOUNDED_WHITESPACE`: GLM's template
  renders ``\\n<think>``);
- the answer, by tool choice: ``auto`` free text until the format's trigger, then only the format's tool
  section (one section then whitespace without parallel calls); ``required`` / a tool's name: the tool
  section from the start (after a few blanks, :data:`BOUNDED_WHITESPACE`, and the blank line a format writes
  before it) and a few blanks after it; ``none`` free text that never writes the trigger.

The format's grammar is in reading mode (``lenient``: every spelling of a value the parser reads) with any
JSON whitespace, since a consumer's template may print JSON with other separators than ``json.dumps``; under
a required call each run of blanks in the JSON is bounded (:data:`FORCED_JSON_WHITESPACE`).  Wherever
nothing but the call may follow, the whitespace is bounded: a model that drifts into blanks (a random one
does at once) must still get to its call within ``max_tokens`` (issue 19).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.formats import family
from workbench.runtime.grammar.elements import (
    BOUNDED_WHITESPACE,
    FORCED_JSON_WHITESPACE,
    WHITESPACE,
    Element,
    GrammarError,
    any_text,
    check_structural_tag,
    const,
    one_of,
    optional,
    repeat,
    seq,
    structural_tag,
    tag,
)
from workbench.runtime.grammar.plan import TOOL_CHOICES, ReasoningGate
from workbench.runtime.grammar.tool_grammar import MAX_PARALLEL_CALLS, ToolGrammar
from workbench.runtime.grammar.tool_schemas import check_tool_schemas
from workbench.runtime.spec import FormatSpec

#: The engines' simplified choice for "the one tool given" (vLLM's ``forced``), beside ``auto``,
#: ``required``, ``none`` and a tool's name.
FORCED = "forced"


def normalize_tool_choice(choice: Any, tools: Sequence[Tool]) -> str:
    """``auto`` | ``required`` | ``none`` | a tool's name, from any way a request says it (pure).

    Takes OpenAI's ``{"type": "function", "function": {"name": ...}}`` form, and ``forced`` (a serving
    engine's word for "call the one tool given"), which becomes that tool's name.

    Raises:
        GrammarError: the choice names no known tool, or ``forced`` comes with other than one tool.
    """
    if isinstance(choice, Mapping):
        fn = choice.get("function", choice)
        choice = fn.get("name") if isinstance(fn, Mapping) else None
    if not isinstance(choice, str) or not choice:
        raise GrammarError(f"tool_choice must be auto, required, none or a tool name, not {choice!r}")
    if choice in TOOL_CHOICES:
        return choice
    names = [t.name for t in tools]
    if choice == FORCED and FORCED not in names:
        if len(names) != 1:
            raise GrammarError(f"a forced call names one tool, not {len(names)}")
        return names[0]
    if choice not in names:
        known = ", ".join(names) if names else "no tools were given"
        raise GrammarError(f"tool_choice {choice!r} is not one of the tools ({known})")
    return choice


def grammar_class(format_name: str) -> type[ToolGrammar] | None:
    """The grammar of the format family registered as ``format_name`` (None: no tool calls, or unknown)."""
    fam = family(format_name)
    return fam.grammar if fam is not None else None


def tool_grammar(spec: FormatSpec, **options: Any) -> ToolGrammar | None:
    """The grammar of ``spec``'s calls: its tool format's family grammar, wrapped by the turn layout's when
    the spec has one (a lead, headed messages: spec v3); None when there is no grammar to build.

    ``options`` are the :class:`ToolGrammar` options (``any_whitespace``, ``output_prefix``, ``lenient``,
    ``max_whitespace``)."""
    inner = grammar_class(spec.tools.format)
    if spec.envelope.defined:
        # a family: it imports this module
        from workbench.runtime.formats.envelope.grammar import EnvelopeGrammar

        return EnvelopeGrammar(spec.tools, envelope=spec.envelope, inner=inner, **options)
    if spec.layout.defined:
        from workbench.runtime.formats.layout.grammar import LayoutGrammar  # a family: imports this module

        if inner is None and not spec.layout.headed:
            return None
        return LayoutGrammar(spec.tools, layout=spec.layout, inner=inner, **options)
    return inner(spec.tools, **options) if inner is not None else None


def reasoning_gate(
    spec: FormatSpec, *, reasoning: bool, thinking_opened: bool | None
) -> ReasoningGate | None:
    """Where the unconstrained reasoning region lies, or None when the model will not reason."""
    if not reasoning:
        return None
    start, end = spec.reasoning.start.strip(), spec.reasoning.end.strip()
    fam = family(spec.tools.format)
    implicit = fam.implicit_reasoning if fam is not None else None
    if spec.reasoning.mode == "none" and implicit is not None:
        start, end = implicit  # e.g. Harmony: the analysis channel is part of the format
    elif spec.reasoning.mode == "none" or not end:
        return None
    if thinking_opened is None:
        thinking_opened = spec.output_starts_in_reasoning()
    # A reasoning block with no start marker of its own can only be entered by starting inside it.
    return ReasoningGate(start=start, end=end, starts_inside=bool(thinking_opened) or not start)


def assemble(
    spec: FormatSpec,
    tools: Sequence[Tool],
    tool_choice: Any = "auto",
    *,
    reasoning: bool = True,
    parallel: bool = True,
) -> dict[str, Any]:
    """The whole output under ``tool_choice`` as one xgrammar structural tag (JSON form; pure).

    Args:
        spec: the format.
        tools: the tools the calls may use (for a named choice, the tools it is looked up in).
        tool_choice: ``auto``, ``required``, ``none``, a tool's name, ``forced`` (the one tool given), or
            OpenAI's object form.
        reasoning: the tag starts at the start of the output, so reasoning may come first; False: it starts
            where reasoning ended (or at the output's start, when there is none), as vLLM asks for it.
        parallel: more than one call allowed, when the format has parallel calls (never for a named tool).

    Raises:
        GrammarError: no tools, an unknown choice or tool, a format without tool calls or grammar, a schema
            no grammar is built from.
    """
    tools = list(tools)
    check_tool_schemas(tools)
    if not tools:
        raise GrammarError("a structural tag needs at least one tool")
    choice = normalize_tool_choice(tool_choice, tools)
    forced = choice not in ("auto", "none")
    fmt = tool_grammar(
        spec,
        any_whitespace=True,
        output_prefix=spec.prompt.output_prefix,
        lenient=True,
        max_whitespace=FORCED_JSON_WHITESPACE if forced else None,
    )
    if fmt is None or spec.tools.format == "none":
        raise GrammarError(f"no tool-call grammar for the format {spec.tools.format!r}")
    selected = tools if choice in TOOL_CHOICES else [t for t in tools if t.name == choice]
    multi = parallel and spec.tools.parallel and choice in ("auto", "required")
    gate = reasoning_gate(spec, reasoning=True, thinking_opened=None)
    if choice == "auto":
        answer = _auto_answer(fmt, selected, multi)
    elif choice == "none":
        answer = fmt.plain_answer(selected)
    else:
        section = fmt.section(selected, parallel=multi)
        lead = _forced_lead(fmt, gate is not None, spec.content.start, spec.content.end)
        answer = seq(BOUNDED_WHITESPACE, lead, section, BOUNDED_WHITESPACE)
        wrapper, wrapper_end = spec.content.start, spec.content.end
        if spec.content.mode != "plain" and wrapper.strip() and wrapper_end.strip():
            # calls inside the answer's wrapper, which closes after them (<answer><tool_calls>...</answer>)
            inside = seq(const(wrapper), _forced_lead(fmt, gate is not None), section, const(wrapper_end))
            answer = one_of(answer, seq(BOUNDED_WHITESPACE, inside, BOUNDED_WHITESPACE))
    parts: list[Element] = []
    if reasoning and gate is not None:
        if forced and spec.layout.lead.strip() and not gate.starts_inside:
            # the turn's lead (history's ``Assistant:``) comes before the block the output opens; free text
            # takes it under ``auto``, a forced answer must name it
            parts.append(optional(const(spec.layout.lead)))
        parts.append(reasoning_block(gate))
    document = structural_tag(seq(*parts, answer))
    check_structural_tag(document)
    loaded: dict[str, Any] = json.loads(document)
    return loaded


def reasoning_block(gate: ReasoningGate) -> Element:
    """Optional reasoning, free up to its end marker; a few blanks may precede a block the output opens."""
    if gate.starts_inside:
        return optional(tag("", any_text(), gate.end))
    return optional(seq(BOUNDED_WHITESPACE, tag(gate.start, any_text(), gate.end)))


def _auto_answer(fmt: ToolGrammar, tools: Sequence[Tool], parallel: bool) -> Element:
    """Free text until the trigger, then the tool section (repeated with parallel calls, else once and then
    only the whitespace templates put before the turn's end); or the format's own whole answer."""
    answer = fmt.free_answer(tools, parallel=parallel)
    if answer is not None:
        return answer
    section, free = fmt.section(tools, parallel=parallel), fmt.plain_answer(tools)
    if parallel:
        return seq(repeat(seq(free, section), 0, MAX_PARALLEL_CALLS), free)
    return seq(free, optional(seq(section, WHITESPACE)))


def _forced_lead(fmt: ToolGrammar, has_reasoning: bool, wrapper: str = "", wrapper_end: str = "") -> Element:
    """What may precede a forced call: after a reasoning block (the blank line after ``</think>``, a
    re-opened message), or at the start of an output that did not reason (thinking off).  Where content
    has a wrapper (``<answer>\n``), a template may open it before the calls of an answer without text, and
    may close it again before them (``<answer>\n\n</answer><tool_call>``): the wrapper, or the empty
    wrapper, may come first (the parsers read either as empty content)."""
    leads = [fmt.answer_lead(after_reasoning=False)]
    if has_reasoning:
        after = fmt.answer_lead(after_reasoning=True)
        if after.to_dict() != leads[0].to_dict():
            leads.append(after)
    if wrapper.strip():
        bare = list(leads)
        leads += [seq(const(wrapper), lead) for lead in bare]
        if wrapper_end.strip():
            leads += [seq(const(wrapper), bare[0], const(wrapper_end), lead) for lead in bare]
    return leads[0] if len(leads) == 1 else one_of(*leads)
