"""FormatSpec + tools + tool choice -> :class:`GrammarPlan` (the grammars and the phases they govern)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.chat import Tool
from workbench.grammar.elements import (
    Element,
    GrammarError,
    any_text,
    check_structural_tag,
    const,
    one_of,
    optional,
    regex,
    repeat,
    seq,
    structural_tag,
    tag,
)
from workbench.grammar.plan import TOOL_CHOICES, GrammarPlan, ReasoningGate
from workbench.grammar.tool_grammar import MAX_PARALLEL_CALLS, ToolGrammar
from workbench.grammar.tool_schemas import check_tool_schemas
from workbench.spec import FormatSpec


def normalize_tool_choice(choice: Any, tools: Sequence[Tool]) -> str:
    """``auto`` | ``required`` | ``none`` | a tool's name; OpenAI's ``{"type": "function", ...}`` form too.

    Raises:
        GrammarError: the choice names no known tool.
    """
    if isinstance(choice, Mapping):
        fn = choice.get("function", choice)
        choice = fn.get("name") if isinstance(fn, Mapping) else None
    if not isinstance(choice, str) or not choice:
        raise GrammarError(f"tool_choice must be auto, required, none or a tool name, not {choice!r}")
    if choice in TOOL_CHOICES:
        return choice
    names = [t.name for t in tools]
    if choice not in names:
        known = ", ".join(names) if names else "no tools were given"
        raise GrammarError(f"tool_choice {choice!r} is not one of the tools ({known})")
    return choice


def _grammar_class(format_name: str) -> type[ToolGrammar] | None:
    """The grammar of the format family registered as ``format_name`` (None: no tool calls, or unknown).

    The registry is read when a grammar is built, not at import: the families import this package's
    machinery, so importing the registry here at load time would be circular.
    """
    from workbench.formats import family

    fam = family(format_name)
    return fam.grammar if fam is not None else None


def tool_grammar(spec: FormatSpec, **options: Any) -> ToolGrammar | None:
    """The grammar of ``spec``'s calls: its tool format's family grammar, wrapped by the layout's when the
    spec has one (a lead, headed messages); None when there is no grammar to build."""
    inner = _grammar_class(spec.tools.format)
    if spec.layout.defined:
        from workbench.formats.layout.grammar import LayoutGrammar

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
    grammar_cls = _grammar_class(spec.tools.format)
    implicit = grammar_cls.implicit_reasoning if grammar_cls is not None else None
    if spec.reasoning.mode == "none" and implicit is not None:
        start, end = implicit  # e.g. Harmony: the analysis channel is part of the format
    elif spec.reasoning.mode == "none" or not end:
        return None
    if thinking_opened is None:
        thinking_opened = spec.output_starts_in_reasoning()
    # A reasoning block with no start marker of its own can only be entered by starting inside it.
    return ReasoningGate(start=start, end=end, starts_inside=bool(thinking_opened) or not start)


def build_grammar(
    spec: FormatSpec,
    tools: Sequence[Tool] = (),
    *,
    tool_choice: Any = "auto",
    parallel: bool = True,
    reasoning: bool = True,
    thinking_opened: bool | None = None,
    any_whitespace: bool = False,
) -> GrammarPlan:
    """Derive the grammars that constrain a model writing in ``spec``'s format.

    Args:
        spec: the format (from the analyzer, a file, or written by hand).
        tools: the tools offered; their ``parameters`` schemas constrain the arguments.
        tool_choice: ``auto`` (free text, the grammar engages at the trigger), ``required`` (a call is
            forced), ``none`` (free text that never announces a call), or one tool's name (that call forced).
        parallel: allow several calls when the spec says the template supports it.
        reasoning: the model may think (``enable_thinking``); thinking is never constrained.
        thinking_opened: the prompt already opened reasoning; None = take it from the spec.
        any_whitespace: let JSON arguments use any whitespace (off by default: small models loop on it).

    Raises:
        GrammarError: unknown tool name, a schema xgrammar cannot compile (or with a ``$ref`` that does not
            resolve, or more enum values than :data:`~workbench.grammar.tool_schemas.MAX_ENUM_VALUES`), a
            forced call on a template without tool calls, or a format the grammar builder does not know.
    """
    tools = list(tools)
    check_tool_schemas(tools)
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise GrammarError(f"two tools are named {tool.name!r}")
        seen.add(tool.name)
    choice = normalize_tool_choice(tool_choice, tools)
    gate = reasoning_gate(spec, reasoning=reasoning, thinking_opened=thinking_opened)
    notes: list[str] = []
    fmt_name = spec.tools.format
    forced = choice not in ("auto", "none")
    if forced and choice == "required" and not tools:
        raise GrammarError("tool_choice=required needs at least one tool")

    fmt = tool_grammar(spec, any_whitespace=any_whitespace, output_prefix=spec.prompt.output_prefix)
    if fmt is None or spec.tools.format == "none":
        if forced:
            why = (
                "the template has no tool calls"
                if fmt_name == "none"
                else f"no grammar for format {fmt_name!r}"
            )
            raise GrammarError(f"cannot force a tool call: {why}")
        if fmt_name != "none":
            notes.append(f"no grammar for tool format {fmt_name!r}: output is unconstrained")
        return GrammarPlan(
            kind="none",
            text="",
            tool_choice=choice,
            tools=tuple(t.name for t in tools),
            parallel=False,
            any_whitespace=any_whitespace,
            reasoning=gate,
            notes=tuple(notes),
        )

    selected = [t for t in tools if t.name == choice] if forced and choice != "required" else tools
    allow_parallel = parallel and spec.tools.parallel and choice in ("auto", "required")
    if parallel and not spec.tools.parallel and len(selected) > 0 and choice in ("auto", "required"):
        notes.append("the spec says the template does not support parallel calls: one call at most")

    answer = section = lead = None
    trigger = fmt.trigger
    if selected and choice != "none":
        section_el = fmt.section(selected, parallel=allow_parallel)
        if forced:
            answer = structural_tag(seq(fmt.answer_lead(after_reasoning=gate is not None), section_el))
            if gate and not gate.starts_inside:
                at_start = seq(fmt.answer_lead(after_reasoning=False), section_el)
                lead = structural_tag(one_of(const(gate.start), at_start))
        else:
            section = structural_tag(section_el)
            whole = fmt.free_answer(selected, parallel=allow_parallel)
            if whole is not None:  # the prompt already wrote the trigger: hold the answer from its start
                answer = structural_tag(seq(fmt.answer_lead(after_reasoning=gate is not None), whole))
                if gate and not gate.starts_inside:
                    at_start = seq(fmt.answer_lead(after_reasoning=False), whole)
                    lead = structural_tag(one_of(const(gate.start), at_start))
    elif choice == "none" and trigger:
        answer = structural_tag(fmt.plain_answer())
        if gate and not gate.starts_inside:
            lead = answer
    notes.extend(fmt.notes)
    for text in (answer, section, lead):
        if text is not None:
            check_structural_tag(text)
    markers = list(fmt.markers())
    if gate:
        markers.extend(m for m in (gate.start, gate.end) if m)
    main = answer or section
    return GrammarPlan(
        kind="structural_tag" if main else "none",
        text=main or "",
        tool_choice=choice,
        tools=tuple(t.name for t in selected),
        parallel=allow_parallel,
        any_whitespace=any_whitespace,
        trigger=trigger if choice in ("auto", "none") else "",
        answer=answer,
        section=section,
        lead=lead,
        reasoning=gate,
        markers=tuple(dict.fromkeys(markers)),
        notes=tuple(notes),
    )


def build_output_grammar(
    spec: FormatSpec, tools: Sequence[Tool], *, any_whitespace: bool = True
) -> dict[str, Any]:
    """The whole assistant output as ONE xgrammar structural tag, for consumers without our matcher (pure).

    The same pieces as :func:`build_grammar` under ``tool_choice=auto``, in one document instead of phases:
    reasoning is free up to its end marker, text is free until the format's trigger, and from the trigger
    on only the format's tool section (the family's :class:`ToolGrammar`) is possible.  Without parallel
    calls one section at most, then only whitespace.  ``any_whitespace`` (on by default here, as
    xgrammar's own ``json_schema`` elements do) lets JSON arguments use any whitespace, since a consumer's
    template may print JSON with other separators than ``json.dumps``.  The grammar is in reading mode
    (``lenient``): values may take every spelling the parser reads, not only the canonical one.

    Raises:
        GrammarError: no tools, no tool-call format, or a format without a grammar.
    """
    tools = list(tools)
    check_tool_schemas(tools)
    if not tools:
        raise GrammarError("the structural tag needs at least one tool")
    fmt = tool_grammar(
        spec, any_whitespace=any_whitespace, output_prefix=spec.prompt.output_prefix, lenient=True
    )
    if fmt is None or spec.tools.format == "none":
        why = "the spec has no tool calls" if spec.tools.format == "none" else "no grammar for this format"
        raise GrammarError(f"{why} (format {spec.tools.format!r})")
    parallel = spec.tools.parallel
    gate = reasoning_gate(spec, reasoning=True, thinking_opened=None)
    answer = fmt.free_answer(tools, parallel=parallel)
    if answer is None:
        section = fmt.section(tools, parallel=parallel)
        free = fmt.plain_answer()
        if parallel:
            answer = seq(repeat(seq(free, section), 0, MAX_PARALLEL_CALLS), free)
        else:
            answer = seq(free, optional(seq(section, _TRAILING_WS)))
    parts = []
    if gate is not None:
        parts.append(optional(tag("" if gate.starts_inside else gate.start, any_text(), gate.end)))
    document = structural_tag(seq(*parts, answer))
    check_structural_tag(document)
    loaded: dict[str, Any] = json.loads(document)
    return loaded


# After the only call of a format without parallel calls: the newlines templates put before the turn's end.
_TRAILING_WS: Element = regex(r"[ \t\n]*")
