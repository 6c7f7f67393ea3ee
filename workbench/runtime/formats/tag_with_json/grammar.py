"""TAG_WITH_JSON: the function name sits between markers, the arguments are one JSON object.

Examples: DeepSeek V3.1 ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>``, Functionary
``<function=NAME>{json}</function>``.
"""

from __future__ import annotations

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import Element, const, seq
from workbench.runtime.grammar.tool_grammar import ToolGrammar


class TagWithJsonGrammar(ToolGrammar):
    name = "tag_with_json"

    def arguments(self, tool: Tool) -> Element:
        return self.json_value(tool.parameters, f"tool {tool.name!r}")

    def call_body(self, tool: Tool) -> Element:
        t = self.t
        closing = t.args_end + t.func_close
        return seq(
            self.call_id_at("pre_func_name"),
            const(t.name_prefix),
            self.function_name(tool),
            const(t.name_suffix),
            self.call_id_at("between_func_and_args"),
            const(t.args_start),
            self.arguments(tool),
            self.gap_before(closing or t.call_end or t.section_end),
            const(closing),
            self.call_id_at("post_args"),
        )
