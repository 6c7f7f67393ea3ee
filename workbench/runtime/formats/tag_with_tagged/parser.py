"""``tag_with_tagged``: the name between markers and one tagged element per argument.

Examples: Qwen3-Coder ``<function=NAME>\\n<parameter=city>\\nParis\\n</parameter>\\n</function>``, GLM-4.6
``NAME\\n<arg_key>city</arg_key>\\n<arg_value>Paris</arg_value>``, MiniMax-M2 ``<invoke name="NAME">
<parameter name="city">Paris</parameter></invoke>``.  Values are typed by the tool's JSON schema (see
:mod:`workbench.runtime.values`); the arguments JSON is built as ``{"k": v, ...}`` with the separators
OpenAI-style servers print.  A plain ``string`` parameter is streamed as it arrives (JSON-escaped, with a
trailing newline the closing marker owns held back until the closing tag decides it); any other value is
decoded when its closing tag arrives.  A parameter without a schema type follows
``ParseOptions.untyped_values``.

Some models write the whole call JSON-escaped (GLM-4.6 seen in the wild: ``NAME\\n<arg_key>k</arg_key>\\n
<arg_value>[{\\"id\\": 1}]</arg_value>`` with literal backslashes): between elements the two-character
escapes ``\\n``, ``\\r``, ``\\t`` count as the whitespace they stand for, and a JSON value whose quotes are
escaped is unescaped once (:func:`workbench.runtime.values.convert_tagged`).
"""

from __future__ import annotations

import json
import re

from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import MORE, Gen
from workbench.runtime.parsing.lookahead import Fail, Look
from workbench.runtime.parsing.markers import core_of, marker_set
from workbench.runtime.parsing.tool_tag import TagParser
from workbench.runtime.spec import ToolsSpec
from workbench.runtime.values import convert_tagged, dumps, is_plain_string, schema_types

_JSON_HINT_RX = re.compile(r'\bstring\s*=\s*"?false')
_STRING_SCHEMA = {"type": "string"}
_JSON_SCHEMA = {"type": ["object", "array", "number", "boolean", "null"]}


def _escape(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class TagWithTaggedParser(TagParser):
    name = "tag_with_tagged"

    def setup(self, t: ToolsSpec) -> None:
        super().setup(t)
        self.arg_prefix = core_of(t.arg_name_prefix)
        self.arg_name_suffix = core_of(t.arg_name_suffix)
        self.value_prefix = core_of(t.arg_value_prefix)
        self.value_suffix = core_of(t.arg_value_suffix)
        self.arg_sep = core_of(t.arg_separator)
        self.name_term = self.arg_name_suffix or self.value_prefix
        self.value_end = marker_set([self.value_suffix]) if self.value_suffix else marker_set([])
        # One newline at each end of a string value is the template's line break, not the value: always
        # (issue 3, llama.cpp: models put one there even where the template does not, Seed-OSS), or with
        # ``value_newlines="markers"`` only where the markers carry one (vLLM's Step-3 keeps the rest).
        options = self.m.options
        always = options.value_newlines == "strip"
        before = t.arg_value_prefix if self.value_prefix else t.arg_name_suffix
        self.lead_nl = always or before.endswith("\n")
        self.trail_nl = always or t.arg_value_suffix.startswith(("\n", "\r\n"))
        self.untyped_as_string = options.untyped_values == "string"

    def _arg_header(self, look: Look) -> tuple[str, bool]:
        look.ws_escaped()
        if not self.arg_prefix or not self.name_term:
            raise Fail
        look.lit(self.arg_prefix)
        key = look.until(self.name_term, "tool_args", 128)
        if not key.strip() or "\n" in key.strip() or "<" in key:
            raise Fail
        json_hint = False
        # Attributes between the name and the value (DeepSeek-V3.2 DSML: name="k" string="false">).
        if '"' in key:
            key, _, attrs = key.partition('"')
            json_hint = _JSON_HINT_RX.search(attrs) is not None
        look.lit(self.name_term)
        if self.arg_name_suffix and self.value_prefix:
            look.ws_escaped()
            look.lit(self.value_prefix)
        return key.strip(), json_hint

    def body(self, call: CallLog | None) -> Gen[bool]:
        m = self.m
        index = yield from self.open_body(call)
        body_json = yield from m.lookahead(lambda look: (look.ws(), look.peek("{"))[1])
        if body_json is not None and body_json[1]:
            # Some models write the arguments as one JSON object instead of tagged elements (DSML).
            status, scanner, raw = yield from m.stream_json(call, self.terminators(self.arg_prefix))
            m.close_json_call(call, status, scanner, raw)
            if status == MORE:
                return False
            yield from self.read_post_id(call)
            yield from self.close_call(call)
            return True
        count = 0
        while True:
            found = yield from m.lookahead(self._arg_header)
            if found is None:
                break
            look, (key, json_hint) = found
            m.emit_spans(look.spans, index)
            if call is not None:
                call.add_args(("{" if count == 0 else ", ") + dumps(key) + ": ")
            schema = _JSON_SCHEMA if json_hint else m.param_schema(call.name if call else None, key)
            if self.untyped_as_string and not schema_types(schema):
                schema = _STRING_SCHEMA
            complete = yield from self.value(call, schema)
            count += 1
            if not complete:
                m.truncated(f"argument {key!r}")
                return False
            if self.arg_sep:
                yield from m.opt_marker(self.arg_sep, index)
        if call is not None:
            call.add_args("}" if count else "{}")
            call.closed = True
            m.check_schema(call)
        yield from self.read_post_id(call)
        yield from self.close_call(call)
        return True

    def value(self, call: CallLog | None, schema: object) -> Gen[bool]:
        """Stream one value up to its closing tag; push its JSON to the call.  False if the input ended."""
        m = self.m
        index = call.index if call is not None else None
        kind = "tool_args" if call is not None else "marker"
        streaming = is_plain_string(schema)
        raw: list[str] = []
        first = True
        held = ""
        if streaming and call is not None:
            call.add_args('"')
        ends = self.value_end
        while True:
            found, stop = m.scan(ends)
            text = m.emit(kind, stop - m.pos, index)
            if text:
                raw.append(text)
                if streaming and call is not None:
                    if first:
                        first = False
                        if self.lead_nl and text.startswith("\n"):
                            text = text[1:]
                    text = held + text
                    held = ""
                    if self.trail_nl and text.endswith("\n"):
                        held, text = "\n", text[:-1]
                    call.add_args(_escape(text))
            if found is not None:
                m.emit("marker", len(found.group(0)), index)
                break
            if m.final:
                if streaming and call is not None and held:
                    call.add_args(_escape(held))
                return False
            yield from m.wait()
        if call is not None:
            if streaming:
                call.add_args('"')
            else:
                call.add_args(dumps(convert_tagged("".join(raw), schema, self.lead_nl, self.trail_nl)))
        return True
