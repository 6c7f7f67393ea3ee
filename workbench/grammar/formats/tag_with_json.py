"""TAG_WITH_JSON: the function name sits between markers, the arguments are one JSON object.

Examples: DeepSeek V3.1 ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>``, Functionary
``<function=NAME>{json}</function>``.
"""

from __future__ import annotations

from workbench.chat import Tool
from workbench.grammar.elements import Element, const, ebnf, json_schema_ebnf, seq
from workbench.grammar.formats.base import ToolFormat


class TagWithJson(ToolFormat):
    name = "tag_with_json"

    def arguments(self, tool: Tool) -> Element:
        return ebnf(json_schema_ebnf(tool.parameters, any_whitespace=self.any_whitespace, what=f"tool {tool.name!r}"))

    def call_body(self, tool: Tool) -> Element:
        t = self.t
        return seq(
            const(t.name_prefix + tool.name + t.name_suffix + t.args_start),
            self.arguments(tool),
            const(t.args_end + t.func_close),
        )
