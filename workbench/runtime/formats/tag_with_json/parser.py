"""``tag_with_json``: the name between markers, the arguments as one JSON object.

Examples: DeepSeek-V3.1 ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``, Kimi-K2
``<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>``, Mistral
``[TOOL_CALLS]NAME[ARGS]{...}``, functionary v3.1 ``<function=NAME>{...}</function>``.  The arguments are
streamed through as the model wrote them; a markdown fence around them (``\\`\\`\\`json``, DeepSeek-R1) is
accepted and stripped.
"""

from __future__ import annotations

from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import MORE, Gen
from workbench.runtime.parsing.lookahead import Look
from workbench.runtime.parsing.tool_tag import TagParser
from workbench.runtime.spec import ToolsSpec


class TagWithJsonParser(TagParser):
    name = "tag_with_json"

    def setup(self, t: ToolsSpec) -> None:
        super().setup(t)
        self.terms = self.terminators(self.call_start, self.sec_start)

    @staticmethod
    def _fence(look: Look) -> bool:
        look.ws()
        if look.opt("```"):
            look.opt("json")
            return True
        return False

    def body(self, call: CallLog | None) -> Gen[bool]:
        m = self.m
        index = yield from self.open_body(call)
        found = yield from m.lookahead(self._fence)
        fenced = found is not None and found[1]
        if fenced:
            m.emit_spans(found[0].spans, index)  # type: ignore[index]
        yield from m.ws(index=index)
        status, scanner, raw = yield from m.stream_json(call, self.terms)
        m.close_json_call(call, status, scanner, raw)
        if status == MORE:
            return False
        if fenced:
            yield from m.opt_marker("```", index)
        yield from self.read_post_id(call)
        yield from self.close_call(call)
        return True
