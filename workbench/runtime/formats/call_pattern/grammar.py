"""``call_pattern`` grammar: one call of one tool, part by part, with schema-exact arguments.

Literals are constants; ``$name`` is the tool's name; ``$id`` an id the model writes; ``$index`` digits (the
section repeats one call shape, so the counter's value is not held to the call's position: the parser
does not read it either).  Arguments follow the pattern's kind:

- ``json``: xgrammar's JSON-schema grammar;
- ``object``: the schema's properties in schema order in the pattern's encoding; a string property is free
  text up to the string closer (xgrammar's tag element ends free text at a marker), other types by their
  JSON spelling, nested containers by the encoding's generic grammar;
- ``tagged``: one element per property, in the way the pattern writes that property's type (a Python
  literal as the pythonic family writes one).
"""

from __future__ import annotations

import json
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.formats.call_pattern.encoding import write as write_encoded
from workbench.runtime.formats.call_pattern.samples import variant_for
from workbench.runtime.grammar.elements import (
    Element,
    GrammarError,
    any_text,
    const,
    ebnf,
    one_of,
    regex,
    seq,
    tag,
)
from workbench.runtime.grammar.tool_grammar import ToolGrammar, ordered_parameters, tool_properties
from workbench.runtime.spec import ArgVariant, ValueEncoding, pattern_literal
from workbench.runtime.values import PYTHON_LITERAL_EBNF, schema_types

_ID = r"[A-Za-z0-9_\-]{1,40}"
_SCALARS = {
    "integer": r"-?(0|[1-9][0-9]*)",
    "number": r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+\-]?[0-9]+)?",
}


def _ebnf_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def encoded_value_ebnf(enc: ValueEncoding) -> str:
    """Any value in the encoding, as EBNF (``root`` rule); strings exclude the closer's first character."""
    close = enc.string_close or '"'
    first = json.dumps(close[0], ensure_ascii=False)[1:-1]
    if first in "]^-\\[":
        first = "\\" + first
    key = f"{_ebnf_str(enc.key_quote)} [A-Za-z_$] [A-Za-z0-9_$.\\-]* {_ebnf_str(enc.key_quote)}"
    if enc.key_quote == '"':
        key = '"\\"" [^"\\\\]* "\\""'
    chars = f"[^{first}]*" if enc.escape == "none" else f'([^{first}\\\\] | "\\\\" [^\\n])*'
    return "\n".join(
        (
            "root ::= value",
            'value ::= object | array | string | number | "true" | "false" | "null"',
            f'object ::= "{{" (member ({_ebnf_str(enc.item_sep)} member)*)? "}}"',
            f"member ::= {key} {_ebnf_str(enc.key_sep)} value",
            f'array ::= "[" (value ({_ebnf_str(enc.item_sep)} value)*)? "]"',
            f"string ::= {_ebnf_str(enc.string_open)} {chars} {_ebnf_str(close)}",
            'number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+\\-]? [0-9]+)?',
        )
    )


class CallPatternGrammar(ToolGrammar):
    name = "call_pattern"

    def call_body(self, tool: Tool) -> Element:
        p = self.t.pattern
        parts: list[Element] = []
        for part in p.call:
            if part == "$name":
                parts.append(self.function_name(tool))
            elif part == "$id":
                parts.append(regex(_ID))
            elif part == "$index":
                parts.append(regex("[0-9]{1,3}"))
            elif part == "$args":
                parts.append(self.arguments(tool))
            else:
                parts.append(const(pattern_literal(part)))
        return seq(*parts)

    def markers(self) -> tuple[str, ...]:
        base = super().markers()
        extra = [pattern_literal(x).strip() for x in self.t.pattern.call if not x.startswith("$")]
        for v in self.t.pattern.arguments:
            extra += [pattern_literal(x).strip() for x in v.parts if not x.startswith("$")]
        return tuple(dict.fromkeys([*base, *(x for x in extra if x)]))

    # ----------------------------------------------------------------------------- arguments
    def arguments(self, tool: Tool) -> Element:
        p = self.t.pattern
        what = f"tool {tool.name!r}"
        if p.args == "json":
            return self.json_value(tool.parameters, what)
        props, required = tool_properties(tool)
        if p.args == "object":
            enc = p.encoding
            items = []
            for key, sub in props:
                head = enc.key_quote + key + enc.key_quote + enc.key_sep
                items.append((self._encoded(head, sub, ""), key in required))
            return seq(const("{"), ordered_parameters(items, enc.item_sep), const("}"))
        items = [(self._tagged(tool.name, key, sub), key in required) for key, sub in props]
        return ordered_parameters(items, self.t.arg_separator)

    def _encoded(self, head: str, schema: Any, tail: str) -> Element:
        """``head VALUE tail`` with VALUE in the pattern's encoding, as exact as the schema allows."""
        enc = self.t.pattern.encoding
        types = schema_types(schema)
        values = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(values, list) and values:
            return seq(const(head), one_of(*(const(write_encoded(v, enc)) for v in values)), const(tail))
        if types == {"string"}:
            return seq(tag(head + enc.string_open, any_text(), enc.string_close), const(tail))
        if len(types) == 1 and next(iter(types)) in _SCALARS:
            return seq(const(head), regex(_SCALARS[next(iter(types))]), const(tail))
        if types == {"boolean"}:
            return seq(const(head), one_of(const("true"), const("false")), const(tail))
        if types == {"null"}:
            return const(head + "null" + tail)
        return seq(const(head), ebnf(encoded_value_ebnf(enc)), const(tail))

    def _tagged(self, tool_name: str, key: str, schema: Any) -> Element:
        p = self.t.pattern
        types = sorted(schema_types(schema)) or [
            "string",
            "integer",
            "number",
            "boolean",
            "null",
            "array",
            "object",
        ]
        variants: list[ArgVariant] = []
        for name in types:
            v = variant_for(p, name)
            if v is not None and v not in variants:
                variants.append(v)
        if not variants:
            what = f"tool {tool_name!r} parameter {key!r}"
            raise GrammarError(f"{what}: the pattern writes no value of type {', '.join(types)}")
        ways = [self._one_way(v, key, schema, tool_name) for v in variants]
        return ways[0] if len(ways) == 1 else one_of(*ways)

    def _one_way(self, v: ArgVariant, key: str, schema: Any, tool_name: str) -> Element:
        k = v.parts.index("$value")
        head = "".join(key if x == "$key" else pattern_literal(x) for x in v.parts[:k])
        tail = "".join(key if x == "$key" else pattern_literal(x) for x in v.parts[k + 1 :])
        own = (
            {t for t in schema_types(schema) if variant_for(self.t.pattern, t) is v}
            if schema_types(schema)
            else set()
        )
        sub = dict(schema) if isinstance(schema, dict) else {}
        if own and len(own) < len(schema_types(schema)):
            sub["type"] = sorted(own)
        if v.escape == "xml" and tail:  # escaped text: no schema reads it as written
            return tag(head, any_text(), tail)
        if v.value == "raw":
            if not tail:
                raise GrammarError(f"tool {tool_name!r} parameter {key!r}: a raw value needs an end marker")
            # A value closed by blanks alone (``KEY=VALUE\n``) is generated as one line: the parser reads a
            # value that runs over lines up to the next key, a grammar cannot tell that line break apart.
            return tag(head, any_text(), tail)
        if v.value == "encoded":
            return self._encoded(head, sub, tail)
        if v.value == "python":
            value = self.python_canonical(tool_name, key, sub)
            if self.lenient:  # every Python literal the parser reads ('single quoted', {'k': None})
                value = one_of(value, *self.value_alternatives(sub), ebnf(PYTHON_LITERAL_EBNF))
            return seq(const(head), value, const(tail))
        what = f"tool {tool_name!r} parameter {key!r}"
        value = self.json_value(sub, what)
        return seq(const(head), value, const(tail))
