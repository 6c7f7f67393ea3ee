"""TAG_WITH_TAGGED: the name and every argument sit in markers (Qwen3-Coder, GLM 4.6, MiniMax M2, Seed-OSS).

``<function=NAME>\\n<parameter=city>\\nParis\\n</parameter>\\n</function>``.  The grammar is generated from
the spec's own markers rather than from one of xgrammar's fixed XML styles (``qwen_xml``, ``minimax_xml``,
``glm_xml``): those styles hard-code their markers and allow unbounded whitespace between parameters, while
an analysed template brings its exact markers, newlines included, and the parser reads exactly those.

Values follow the one value encoding (:mod:`workbench.runtime.values`, shared with the parser, the samples
and the exports): a string is written raw, up to the value end marker, wherever the schema allows a string
(or says nothing about the type); any other value is written as JSON.  Parameters come in the schema's
order, required ones always, optional ones at will.
"""

from __future__ import annotations

import json
import re
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import (
    Element,
    GrammarError,
    any_text,
    const,
    one_of,
    regex,
    seq,
    tag,
)
from workbench.runtime.grammar.tool_grammar import ToolGrammar, ordered_parameters, tool_properties
from workbench.runtime.values import is_plain_string, write_value, written_raw


class TagWithTaggedGrammar(ToolGrammar):
    name = "tag_with_tagged"

    def call_body(self, tool: Tool) -> Element:
        # The id and the arguments' own markers where the spec has them, as the parser reads them
        # (``tool_tag.open_body``): ``[[invoke=NAME]]\n[[call_id]]ID[[/call_id]][[argument=...``.
        t = self.t
        opener = t.args_start if t.args_start != t.name_suffix else ""
        closing = t.args_end + t.func_close
        return seq(
            self.call_id_at("pre_func_name"),
            const(t.name_prefix),
            self.function_name(tool),
            const(t.name_suffix),
            self.call_id_at("between_func_and_args"),
            const(opener),
            self.arguments(tool),
            self.gap_before(closing or t.call_end or t.section_end) if self.lenient else const(""),
            const(closing),
            self.call_id_at("post_args"),
        )

    # ----------------------------------------------------------------------------- arguments
    def arguments(self, tool: Tool) -> Element:
        props, required = tool_properties(tool)
        unknown = required - {key for key, _sub in props}
        if unknown:
            raise GrammarError(
                f"tool {tool.name!r}: required parameter(s) {', '.join(sorted(unknown))} not in properties"
            )
        items = [(self.parameter(tool.name, key, sub), key in required) for key, sub in props]
        return ordered_parameters(items, self.t.arg_separator)

    def parameter(self, tool_name: str, key: str, schema: Any) -> Element:
        t = self.t
        begin = t.arg_name_prefix + key + t.arg_name_suffix + t.arg_value_prefix
        end = t.arg_value_suffix
        what = f"tool {tool_name!r} parameter {key!r}"

        def json_value() -> Element:
            value = self.json_value(schema, what)
            return seq(const(begin), one_of(value, *self.value_alternatives(schema)), const(end))

        if not written_raw(schema):
            return json_value()
        if not isinstance(schema, dict):
            schema = {}
        values = schema.get("enum", [schema["const"]] if "const" in schema else None)
        if isinstance(values, list) and values:
            return seq(const(begin), one_of(*(const(write_value(v, schema)) for v in values)), const(end))
        if not end.strip():
            if not is_plain_string(schema):
                return json_value()  # no marker ends raw text: the value must end itself
            raise GrammarError(f"{what}: a raw string value needs an end marker, and the spec has none")
        if not is_plain_string(schema):
            # Strings raw, other types as JSON (or their Python spellings): raw text holds them all.
            return tag(begin, any_text(), end)
        pattern = schema.get("pattern")
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if isinstance(pattern, str):
            return seq(const(begin), regex(_strip_anchors(pattern)), const(end))
        if low > 0 or high is not None:
            # A length bound counts characters, and any_text works on bytes (a random model can write
            # invalid UTF-8 there, which decodes to more characters than written): spell the characters out
            # as a character class, which only matches whole UTF-8 characters (surrogates excluded: xgrammar
            # would take them, Python's decoder would not), none of them starting the end marker.
            first = _class_escape(end.strip()[0])
            bound = "" if high is None else str(int(high))
            chars = f"[^{first}\\uD800-\\uDFFF]{{{low},{bound}}}"
            return seq(const(begin), regex(chars), const(end))
        return tag(begin, any_text(), end)


def _strip_anchors(pattern: str) -> str:
    return re.sub(r"^\^|(?<!\\)\$$", "", pattern)


def _class_escape(ch: str) -> str:
    return "\\" + ch if ch in "\\]^-[" else json.dumps(ch)[1:-1]
