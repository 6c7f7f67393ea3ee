"""``recipient``: functionary v3.2 messages addressed with ``>>>RECIPIENT\\n``.

``>>>all\\n`` starts text for the user (content); ``>>>NAME\\n{json}`` is a call to ``NAME`` whose body is
its JSON arguments.  Several messages follow each other in one turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import MORE, Gen
from workbench.runtime.parsing.lookahead import Look
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.parsing.tools_base import ToolParser
from workbench.runtime.spec import ToolsSpec

CONTENT_RECIPIENT = "all"


@dataclass
class RecipientHeader:
    spans: list[list[Any]]
    name: str


class RecipientParser(ToolParser):
    name = "recipient"
    routes_content = True

    def setup(self, t: ToolsSpec) -> None:
        self.prefix = core_of(t.call_start) or core_of(t.name_prefix) or ">>>"
        self.terms = self.terminators(self.prefix)

    def trigger_cores(self) -> list[str]:
        return [self.prefix]

    def _head(self, look: Look) -> str:
        look.lit(self.prefix)
        name = look.name("tool_name", 128)
        look.char("\n")
        return name

    def header(self, lead: int) -> Gen[RecipientHeader | None]:
        found = yield from self.m.lookahead(self._head, lead=lead)
        if found is None:
            return None
        look, name = found
        if name != CONTENT_RECIPIENT and not self.m.options.parse_tools:
            return None
        if name != CONTENT_RECIPIENT and not self.m.known_tool(name):
            self.m.unknown_tool(name)
        return RecipientHeader(look.spans, name)

    def section(self, header: RecipientHeader) -> Gen[None]:
        m = self.m
        if header.name == CONTENT_RECIPIENT:
            m.emit_spans([["marker", sum(int(n) for _, n in header.spans)]])
            return
        call: CallLog | None = m.open_call(header.name) if m.known_tool(header.name) else None
        index = call.index if call is not None else None
        m.emit_spans(header.spans, index)
        yield from m.ws(index=index)
        status, scanner, raw = yield from m.stream_json(call, self.terms)
        m.close_json_call(call, status, scanner, raw)
        if status == MORE:
            return
