"""Each request's structural tag, built in the serving process from the exported spec and the request's tools.

A serving engine constrains a tool call with an xgrammar structural tag it asks the tool parser for, per
request: the tools, the tool choice (``auto``: free text, a call once the format's trigger appears;
``required``: at least one call and nothing else; ``forced``: one call of the named tool) and whether the
tag must also cover the reasoning (vLLM passes ``reasoning=False``: its reasoning parser keeps the grammar
off until reasoning ends; with ``reasoning=True`` the tag lets reasoning run free first).  The tags cannot
be written out at export time (the tools come with the request), so this module is vendored into every
plug-in (as ``<plugin>._runtime.serving.tags``, with the rest of the runtime) and builds the tag with the
runtime's one assembler, :func:`workbench.runtime.grammar.assembler.assemble`: the structural-tag export
writes the same document for the same tools and choice, and what the tag allows, the plug-in's parser reads
back.

Arguments always follow the tool's schema, ``strict`` or not: most formats spell arguments per parameter
(``<parameter=city>``, ``<arg_key>``), so there is no schema-free spelling to relax to.

Like all of the runtime it imports only the runtime, the standard library and the declared packages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.formats import family
from workbench.runtime.grammar.assembler import FORCED, assemble
from workbench.runtime.grammar.elements import GrammarError
from workbench.runtime.spec import FormatSpec

#: The tool choices engines hand a builder (vLLM's simplified choice: ``forced`` = the one named tool).
CHOICES = ("auto", "required", FORCED)


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
    """The structural tag (xgrammar JSON) for one request: :func:`assemble` over the request's tools.

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
    return assemble(spec, request_tools(tools), choice, reasoning=reasoning, parallel=parallel)


def tag_or_error(spec: FormatSpec, tools: Sequence[Any], choice: str, **kwargs: Any) -> dict[str, Any]:
    """:func:`request_tag`, with the workbench's errors as ``ValueError`` (what serving code turns into a
    400 response) and their first line only."""
    try:
        return request_tag(spec, tools, choice, **kwargs)
    except WorkbenchError as exc:
        raise ValueError(
            f"structural tag: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None
