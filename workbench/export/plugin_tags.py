"""Each request's structural tag, built in the serving process from the exported spec and the request's tools.

A serving engine constrains a tool call with an xgrammar structural tag it asks the tool parser for, per
request: the tools, the tool choice (``auto``: free text, a call once the format's trigger appears;
``required``: at least one call and nothing else; ``forced``: one call of the named tool) and whether the
tag must also cover the reasoning (vLLM passes ``reasoning=False``: its reasoning parser keeps the grammar
off until reasoning ends; with ``reasoning=True`` the tag lets reasoning run free first).  The tags cannot
be written out at export time (the tools come with the request), so this module is vendored into every
plug-in (as ``<plugin>._runtime.tags``, beside the vendored grammar builder) and builds the tag from the
same pieces as :func:`workbench.grammar.build.build_output_grammar`: the format family's
:class:`~workbench.grammar.tool_grammar.ToolGrammar` in reading mode (every spelling the parser reads, any
JSON whitespace), so what the tag allows, the plug-in's parser reads back.

Arguments always follow the tool's schema, ``strict`` or not: most formats spell arguments per parameter
(``<parameter=city>``, ``<arg_key>``), so there is no schema-free spelling to relax to.

Like :mod:`.plugin_core` it may import only the vendored runtime and the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.chat import Tool
from workbench.errors import WorkbenchError
from workbench.formats import family
from workbench.grammar.build import reasoning_gate, tool_grammar
from workbench.grammar.elements import (
    Element,
    GrammarError,
    any_text,
    check_structural_tag,
    one_of,
    optional,
    regex,
    repeat,
    seq,
    structural_tag,
    tag,
)
from workbench.grammar.tool_grammar import MAX_PARALLEL_CALLS
from workbench.grammar.tool_schemas import check_tool_schemas
from workbench.spec import FormatSpec

#: The tool choices engines hand a builder (vLLM's simplified choice: ``forced`` = the one named tool).
CHOICES = ("auto", "required", "forced")

# Templates put whitespace after the last call, before the turn's end, and before a reasoning block or a
# forced call (Firefunction's `` functools[...]``).
_WS: Element = regex(r"[ \t\n]*")


def has_grammar(spec: FormatSpec) -> bool:
    """Whether the format's calls have a grammar to build tags from (no tool calls: nothing to constrain,
    and the plug-in does not opt in to structural tags at all)."""
    fam = family(spec.tools.format)
    return fam is not None and fam.grammar is not None


def request_tools(tools: Sequence[Any]) -> list[Tool]:
    """The request's function tools (OpenAI dicts or pydantic models of them) as workbench tools.

    Raises:
        WorkbenchError: a tool is not ``{"type": "function", "function": {"name": ...}}``-shaped.
    """
    out = []
    for i, raw in enumerate(tools):
        data = raw.model_dump() if hasattr(raw, "model_dump") else raw
        fn = data.get("function", data) if isinstance(data, Mapping) else None
        if not isinstance(fn, Mapping):
            raise GrammarError(f"tools[{i}]: expected a function tool")
        clean = {"name": fn.get("name"), "description": fn.get("description") or ""}
        if isinstance(fn.get("parameters"), Mapping):
            clean["parameters"] = fn["parameters"]
        out.append(Tool.from_openai({"type": "function", "function": clean}, where=f"tools[{i}]"))
    return out


def request_tag(
    spec: FormatSpec,
    tools: Sequence[Any],
    choice: str,
    *,
    reasoning: bool = False,
    parallel: bool = True,
) -> dict[str, Any]:
    """The structural tag (xgrammar JSON) for one request.

    Args:
        spec: the exported format.
        tools: the tools the call may use (for ``forced``: the named one; more than one is refused).
        choice: ``auto`` | ``required`` | ``forced``, or a tool's name (``forced`` to that tool).
        reasoning: the tag starts at the start of the output, so reasoning (free text up to the format's
            end marker) may come first; False: it starts where reasoning ended (or the output, without it).
        parallel: more than one call allowed (when the format has parallel calls; never for ``forced``).

    Raises:
        WorkbenchError: no tools, an unknown choice or tool name, a format without tool calls or grammar,
            a schema no grammar is built from.
    """
    selected = request_tools(tools)
    check_tool_schemas(selected)
    if choice not in CHOICES:
        named = [t for t in selected if t.name == choice]
        if not named:
            raise GrammarError(f"tool_choice {choice!r} is neither {', '.join(CHOICES)} nor a tool's name")
        selected, choice = named, "forced"
    if not selected:
        raise GrammarError("a structural tag needs at least one tool")
    if choice == "forced" and len(selected) != 1:
        raise GrammarError(f"a forced call names one tool, not {len(selected)}")
    fmt = tool_grammar(spec, any_whitespace=True, output_prefix=spec.prompt.output_prefix, lenient=True)
    if fmt is None:
        raise GrammarError(f"no tool-call grammar for the format {spec.tools.format!r}")
    multi = parallel and spec.tools.parallel and choice != "forced"
    gate = reasoning_gate(spec, reasoning=True, thinking_opened=None)
    if choice == "auto":
        answer = fmt.free_answer(selected, parallel=multi)
        if answer is None:
            section, free = fmt.section(selected, parallel=multi), fmt.plain_answer()
            if multi:
                answer = seq(repeat(seq(free, section), 0, MAX_PARALLEL_CALLS), free)
            else:
                answer = seq(free, optional(seq(section, _WS)))
    else:
        section = fmt.section(selected, parallel=multi)
        answer = seq(_WS, _lead(fmt, gate is not None), section, _WS)
    parts: list[Element] = []
    if reasoning and gate is not None:
        if gate.starts_inside:
            parts.append(optional(tag("", any_text(), gate.end)))
        else:  # templates may put a newline before the block (GLM: ``\n<think>``)
            parts.append(optional(seq(_WS, tag(gate.start, any_text(), gate.end))))
    document = structural_tag(seq(*parts, answer))
    check_structural_tag(document)
    loaded: dict[str, Any] = json.loads(document)
    return loaded


def _lead(fmt: Any, has_reasoning: bool) -> Element:
    """What may precede a forced call: after a reasoning block (the blank line after ``</think>``, a
    re-opened message), or at the start of an output that did not reason (thinking off)."""
    leads = [fmt.answer_lead(after_reasoning=False)]
    if has_reasoning:
        after = fmt.answer_lead(after_reasoning=True)
        if after.to_dict() != leads[0].to_dict():
            leads.append(after)
    return leads[0] if len(leads) == 1 else one_of(*leads)


def tag_or_error(spec: FormatSpec, tools: Sequence[Any], choice: str, **kwargs: Any) -> dict[str, Any]:
    """:func:`request_tag`, with the workbench's errors as ``ValueError`` (what serving code turns into a
    400 response) and their first line only."""
    try:
        return request_tag(spec, tools, choice, **kwargs)
    except WorkbenchError as exc:
        raise ValueError(
            f"structural tag: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None
