"""FormatSpec + tools + tool choice -> :class:`GrammarPlan` (the grammars and the phases they govern).

The generator's view of the output grammar: the same pieces as the one assembler
(:mod:`workbench.runtime.grammar.assembler`: the tool-choice rule, the reasoning gate, the format's grammar),
split into the phases the constrained matcher switches between.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.assembler import normalize_tool_choice, reasoning_gate, tool_grammar
from workbench.runtime.grammar.elements import (
    GrammarError,
    check_structural_tag,
    const,
    one_of,
    seq,
    structural_tag,
)
from workbench.runtime.grammar.plan import GrammarPlan
from workbench.runtime.grammar.tool_schemas import check_tool_schemas
from workbench.runtime.spec import FormatSpec


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
            resolve, or more enum values than
            :data:`~workbench.runtime.grammar.tool_schemas.MAX_ENUM_VALUES`), a forced call on a template
            without tool calls, or a format the grammar builder does not know.
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
    if fmt is None or fmt_name == "none":
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
        answer = structural_tag(fmt.plain_answer(selected))
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
        held=fmt.held,
    )
