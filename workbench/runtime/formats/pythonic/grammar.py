"""Pythonic calls (Llama 3.2, LFM2): ``[get_weather(city="Paris", days=3), other()]``.

Keyword values are Python literals, written by the one value encoding
(:func:`workbench.runtime.values.write_python`): strings and numbers as JSON writes them (valid Python),
booleans as ``True``/``False`` and null as ``None``; nested objects and arrays keep JSON syntax, which the
pythonic parsers accept.  A spec whose template writes every value with ``tojson``
(``tools.json_literals``) gets JSON values, ``true``/``false``/``null`` included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import (
    Element,
    GrammarError,
    any_text,
    const,
    ebnf,
    one_of,
    repeat,
    seq,
)
from workbench.runtime.grammar.tool_grammar import (
    MAX_PARALLEL_CALLS,
    ToolGrammar,
    ordered_parameters,
    tool_properties,
)
from workbench.runtime.values import PYTHON_STRING_EBNF, schema_types


class PythonicGrammar(ToolGrammar):
    name = "pythonic"

    def call_body(self, tool: Tool) -> Element:
        props, required = tool_properties(tool)
        items = [
            (seq(const(key + "="), self.value(tool.name, key, sub)), key in required) for key, sub in props
        ]
        namespace = self.t.function_namespace
        separator = self.t.arg_separator or ", "
        return seq(const(namespace + tool.name + "("), ordered_parameters(items, separator), const(")"))

    def value(self, tool_name: str, key: str, schema: Any) -> Element:
        alternatives = self.value_alternatives(schema)
        types = schema_types(schema)
        if self.lenient and (not types or "string" in types):
            # reading mode: a string as Python's repr writes it (``city='Paris'``), which the parser reads
            alternatives.append(ebnf(PYTHON_STRING_EBNF))
        return one_of(self.canonical_value(tool_name, key, schema), *alternatives)

    def canonical_value(self, tool_name: str, key: str, schema: Any) -> Element:
        """The value as :func:`~workbench.runtime.values.write_python` writes it, held to the schema; JSON
        where the template writes JSON literals (``tools.json_literals``: ``enabled=true``)."""
        if self.t.json_literals:
            return self.json_value(schema, f"tool {tool_name!r} parameter {key!r}")
        return self.python_canonical(tool_name, key, schema)

    def section(self, tools: Sequence[Tool], *, parallel: bool) -> Element:
        if not tools:
            raise GrammarError("no tools to build a tool-call grammar for")
        any_call = one_of(*(self.call(tool) for tool in tools))
        calls = (
            seq(any_call, repeat(seq(const(", "), any_call), 0, MAX_PARALLEL_CALLS - 1))
            if parallel
            else any_call
        )
        end = self.t.section_end
        return seq(const(self.t.section_start + "["), calls, const("]"), self.gap_before(end), const(end))

    def plain_answer(self, tools: Sequence[Tool] = ()) -> Element:
        """A bare list (no section marker) is announced by ``[`` and a tool's name: free text may hold any
        other bracket (an answer wrapper ``[ANSWER]``, a citation ``[1]``)."""
        if self.t.section_start.strip() or not tools:
            return super().plain_answer(tools)
        ns = self.t.function_namespace
        return any_text(excludes=tuple(f"[{ns}{tool.name}(" for tool in tools))

    @property
    def trigger(self) -> str:
        return self.t.section_start.strip() or "["
