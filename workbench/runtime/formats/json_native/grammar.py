"""JSON_NATIVE: the whole call is one JSON object, e.g. ``{"name": "f", "arguments": {...}}``.

The call object is described as a JSON schema (name as a ``const``, arguments as the tool's own schema, fields
in the template's order) and handed to xgrammar whole, so xgrammar's schema support covers the arguments and
the wrapper alike.
"""

from __future__ import annotations

from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import Element, seq
from workbench.runtime.grammar.tool_grammar import ToolGrammar

# Call ids the model writes itself (Mistral: nine alphanumerics).  Any id matching this is a valid id for
# every template seen so far, and a fixed length keeps a random model from writing ids forever.
GENERATED_ID_SCHEMA: dict[str, Any] = {"type": "string", "pattern": "^[A-Za-z0-9]{9}$"}


class JsonNativeGrammar(ToolGrammar):
    name = "json_native"

    def call_schema(self, tool: Tool) -> dict[str, Any]:
        t = self.t
        if t.fun_name_is_key:
            return {"type": "object", "properties": {tool.name: tool.parameters}, "required": [tool.name]}
        fields: dict[str, Any] = {t.name_field or "name": {"const": tool.name}}
        fields[t.args_field or "arguments"] = tool.parameters
        if t.id_field:
            fields[t.id_field] = GENERATED_ID_SCHEMA
        required = list(fields)
        if self.lenient and t.gen_id_field and t.gen_id_field not in fields:
            # Reading mode: a template may write the id a server generated (Command R's ``tool_call_id``).
            fields[t.gen_id_field] = {"type": "string"}
        order = [f for f in t.parameter_order if f in fields] + [
            f for f in fields if f not in t.parameter_order
        ]
        inner = {
            "type": "object",
            "properties": {f: fields[f] for f in order},
            "required": [f for f in order if f in required],
        }
        if not t.function_field:
            return inner
        return {
            "type": "object",
            "properties": {"type": {"const": "function"}, t.function_field: inner},
            "required": ["type", t.function_field],
        }

    def call_body(self, tool: Tool) -> Element:
        schema = self.call_schema(tool)
        body = self.json_value(schema, f"tool {tool.name!r}")
        if self.t.array_wrapped:
            return body
        return seq(body, self.gap_before(self.t.call_end or self.t.section_end))

    @property
    def trigger(self) -> str:
        found = super().trigger
        if found:
            return found
        # No marker at all (Llama 3.x): the call is recognised by the opening of its JSON object.
        first = self.t.parameter_order[0] if self.t.parameter_order else (self.t.name_field or "name")
        return '{"' if self.t.fun_name_is_key else '{"' + first + '"'
