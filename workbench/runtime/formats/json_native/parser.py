"""``json_native``: the whole call is a JSON object (optionally in an array, a section or a code block).

Shapes (field names come from the spec): flat ``{"name": N, "arguments": {...}}``; nested
``{"type": "function", "function": {"name": N, "arguments": {...}}}``; name-as-key ``{"N": {...}}``;
array-wrapped ``[{...}, {...}]``; markdown code block ``Action:\\n```json\\n[...]\\n``` `` (Command-R+);
call ids in a string field (``id``) or a generated one (``tool_call_id``).  The object is read member by
member so the arguments value can be streamed while it arrives, whatever the member order; a string-valued
``arguments`` (JSON encoded once more by some models) is decoded when it holds an object.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import MORE, Gen
from workbench.runtime.parsing.lookahead import Fail, Look
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.parsing.partial_json import DONE, STOP, JsonValueScanner, loads_or_none
from workbench.runtime.parsing.tools_base import CUT, LONG, ToolParser
from workbench.runtime.spec import ToolsSpec

CLOSED, TRUNCATED, BAD, TERM = "closed", "truncated", "bad", "term"


@dataclass
class JsonHeader:
    spans: list[list[Any]]
    in_array: bool
    fenced: bool
    name: str | None


class JsonNativeParser(ToolParser):
    name = "json_native"

    def setup(self, t: ToolsSpec) -> None:
        self.call_start = core_of(t.call_start)
        self.block = core_of(t.code_block_marker)
        self.block_lang = t.code_block_language.strip()
        self.name_keys = {t.name_field or "name", "name"}
        self.args_keys = {t.args_field or "arguments", "arguments", "parameters"}
        self.id_keys = {k for k in (t.id_field, t.gen_id_field) if k}
        self.fn_key = t.function_field
        self.name_is_key = t.fun_name_is_key
        self.weak_trigger = not (self.sec_start or self.call_start or self.block)
        self.terms = self.terminators(self.sec_start, self.call_start)
        self.term_cores = [c for c in self.terms.cores if c not in ("[", "{")]

    @property
    def has_closing_markers(self) -> bool:
        return bool(self.sec_end or self.call_end)

    def trigger_cores(self) -> list[str]:
        strong = [c for c in (self.block, self.sec_start, self.call_start) if c]
        return strong or ["{", "["]

    # --------------------------------------------------------------------------- headers
    def _object_start(self, look: Look, in_array: bool) -> JsonHeader:
        """``[call_start] { "first key":`` — decides whether a call object starts here."""
        if self.call_start:
            look.lit(self.call_start)
            look.ws()
        look.char("{")
        look.ws()
        spans = [list(s) for s in look.spans]
        key = look.json_string("marker", 256)
        look.ws()
        look.char(":")
        look.ws()
        name: str | None = None
        if self.name_is_key:
            name = key
            if self.weak_trigger and (self.m.tools is None or name not in self.m.tools):
                raise Fail
        elif key in self.name_keys:
            name = look.json_string("tool_name", 256)
        elif key == self.fn_key and self.fn_key:
            pass
        elif self.weak_trigger or key not in (self.args_keys | self.id_keys | {"type", "id"}):
            raise Fail
        if name is not None and not name.strip():
            raise Fail
        if name is not None and self.weak_trigger and not self.m.known_tool(name, strict=True):
            raise Fail
        return JsonHeader(spans, in_array, False, name)

    def _first(self, look: Look) -> JsonHeader:
        fenced = False
        if self.block and look.opt(self.block):
            look.ws()
            if look.opt("```"):
                fenced = True
                if self.block_lang:
                    look.opt(self.block_lang)
            look.ws()
        elif self.sec_start and look.opt(self.sec_start):
            look.ws()
            if look.opt("```"):
                fenced = True
                look.opt("json")
                look.ws()
        # A call marker that itself starts with "[" (``[CALL]``) is not the opening of a JSON array.
        in_array = not (self.call_start and look.peek(self.call_start)) and look.opt("[")
        if in_array:
            look.ws()
        h = self._object_start(look, in_array)
        h.fenced = fenced
        return h

    def _next_in_array(self, look: Look) -> JsonHeader:
        look.ws()
        look.char(",")
        look.ws()
        return self._object_start(look, True)

    def _next_bare(self, look: Look) -> JsonHeader:
        look.ws()
        for sep in (self.sep, ";"):
            if sep and look.opt(sep):
                look.ws()
                break
        return self._object_start(look, False)

    def header(self, lead: int) -> Gen[JsonHeader | None]:
        found = yield from self.m.lookahead(self._first, lead=lead)
        if found is None:
            return None
        if self.weak_trigger:
            is_call = yield from self._confirm(lead)
            if not is_call:
                return None
        return found[1]

    def _confirm(self, lead: int) -> Gen[bool]:
        """Weak trigger: is the whole JSON value from the trigger a call (see :mod:`tools_base`)?

        A complete value must parse and hold call objects with a name and an arguments field
        (``{"name": "f"}`` alone is prose to vLLM and SGLang).  A value the output cuts off is a call unless
        it already contains what JSON never has outside a string (``{invalid json}``).
        """
        scanner = JsonValueScanner(self.terms)
        last = [DONE]

        def advance(buf: str, i: int, final: bool) -> tuple[int, bool]:
            j, status = scanner.advance(buf, i, final)
            last[0] = status
            return j, status in (DONE, STOP, "bad")

        state, text = yield from self.hold_whole(lead, advance)
        if state == LONG:
            return True
        if state == CUT or last[0] == STOP:
            return not scanner.invalid
        ok, value = loads_or_none(text)
        items = value if isinstance(value, list) else [value]
        return ok and bool(items) and all(self._is_call_object(v) for v in items)

    def _is_call_object(self, value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        if self.fn_key and isinstance(value.get(self.fn_key), dict):
            value = value[self.fn_key]
        if self.name_is_key:
            return len(value) == 1 and isinstance(next(iter(value.values())), dict)
        name = next((value[k] for k in self.name_keys if k in value), None)
        args = next((value[k] for k in self.args_keys if k in value), None)
        return isinstance(name, str) and bool(name.strip()) and isinstance(args, (dict, str))

    # --------------------------------------------------------------------------- calls
    def section(self, header: JsonHeader) -> Gen[None]:
        m = self.m
        h: JsonHeader | None = header
        fenced = header.fenced
        in_array = header.in_array
        while h is not None:
            call: CallLog | None = None
            if h.name is not None and not m.known_tool(h.name):
                m.unknown_tool(h.name)
            else:
                call = m.open_call(None)
                call.id_expected = bool(self.id_keys)
            index = call.index if call is not None else None
            m.emit_spans(h.spans, index)
            status = yield from self._members(call, top=True)
            if call is not None:
                self._finish(call, status)
            if status == TRUNCATED:
                return
            if status == BAD:
                return
            if self.call_end:
                yield from m.opt_marker(self.call_end, index)
            nxt = self._next_in_array if in_array else self._next_bare
            found = yield from m.lookahead(nxt)
            h = found[1] if found is not None else None
        if in_array:
            yield from m.opt_marker("]")
        if fenced:
            yield from m.opt_marker("```")
        if self.sec_end:
            yield from m.opt_marker(self.sec_end)

    def _finish(self, call: CallLog, status: str) -> None:
        m = self.m
        if call.dropped:
            return
        if call.name is None:
            call.dropped = True
            m.out.diagnose(
                "E-CALL-SCHEMA", f"tool call {call.index} has no function name: ignored", m.offset()
            )
            return
        if status == TRUNCATED:
            m.truncated(f"tool call {call.index}")
            return
        if not call.args:
            call.add_args("{}")
        call.closed = True

    def _key(self, look: Look, first: bool, top: bool) -> str | None:
        look.ws()
        for c in self.term_cores:
            if look.peek(c):
                return TERM
        if look.opt("}"):
            return None
        if not first:
            look.char(",")
            look.ws()
            if look.opt("}"):
                return None
        kind = "tool_name" if (self.name_is_key and top) else "marker"
        key = look.json_string(kind, 256)
        look.ws()
        look.char(":")
        look.ws()
        return key

    def _members(self, call: CallLog | None, top: bool) -> Gen[str]:
        """Read an object's members (after its ``{``); returns CLOSED, TERM, TRUNCATED or BAD."""
        m = self.m
        index = call.index if call is not None else None
        first = True
        while True:
            found = yield from m.lookahead(partial(self._key, first=first, top=top))
            if found is None:
                rest = m.buf[m.pos :].lstrip()
                return TRUNCATED if m.final and (not rest or rest[0] in ',"') else BAD
            look, key = found
            if key == TERM:
                return TERM
            m.emit_spans(look.spans, index)
            if key is None:
                return CLOSED
            first = False
            yield from m.ws(index=index)
            if self.name_is_key and top:
                self._set_name(call, key)
                status = yield from self._args(call)
            elif key in self.name_keys and not (self.name_is_key and top):
                status = yield from self._name(call)
            elif key in self.args_keys:
                status = yield from self._args(call)
            elif key in self.id_keys:
                status = yield from self._id(call)
            elif self.fn_key and key == self.fn_key:
                opened = yield from m.lookahead(lambda look: (look.ws(), look.char("{")))
                if opened is None:
                    status = yield from self._skip(call)
                else:
                    m.emit_spans(opened[0].spans, index)
                    status = yield from self._members(call, top=False)
                    if status == TERM:
                        return TERM
            else:
                status = yield from self._skip(call)
            if status in (TRUNCATED, BAD):
                return status

    def _set_name(self, call: CallLog | None, name: str) -> None:
        if call is None or call.name is not None:
            return
        if not self.m.known_tool(name):
            call.dropped = True
            self.m.unknown_tool(name)
            return
        call.name = name

    def _name(self, call: CallLog | None) -> Gen[str]:
        found = yield from self.m.lookahead(lambda look: look.json_string("tool_name", 256))
        if found is None:
            return (yield from self._skip(call))
        self.m.emit_spans(found[0].spans, call.index if call is not None else None)
        self._set_name(call, found[1])
        return CLOSED

    def _id(self, call: CallLog | None) -> Gen[str]:
        m = self.m
        index = call.index if call is not None else None
        found = yield from m.lookahead(lambda look: look.json_string("tool_id", 256))
        if found is not None:
            m.emit_spans(found[0].spans, index)
            if call is not None:
                call.id = found[1]
            return CLOSED
        status, _scanner, raw = yield from m.stream_json(None, self.terms)
        if call is not None and raw.strip():
            call.id = raw.strip()
        return TRUNCATED if status == MORE else CLOSED

    def _skip(self, call: CallLog | None) -> Gen[str]:
        status, _scanner, _raw = yield from self.m.stream_json(None, self.terms)
        return TRUNCATED if status == MORE else (BAD if status == "bad" else CLOSED)

    def _args(self, call: CallLog | None) -> Gen[str]:
        m = self.m
        yield from m.ws(index=call.index if call is not None else None)
        is_string = yield from m.lookahead(lambda look: look.peek('"'))
        if is_string is not None and is_string[1] and call is not None:
            status, _scanner, raw = yield from m.stream_json(None, self.terms)
            if status == MORE:
                return TRUNCATED
            ok, value = loads_or_none(raw)
            inner_ok, inner = loads_or_none(value) if ok and isinstance(value, str) else (False, None)
            call.add_args(value if inner_ok and isinstance(inner, (dict, list)) else raw)
            m.check_schema(call)
            return CLOSED
        status, scanner, raw = yield from m.stream_json(call, self.terms)
        if call is not None:
            m.close_json_call(call, status, scanner, raw, closes=False)
        return TRUNCATED if status == MORE else (BAD if status == "bad" and not raw else CLOSED)
