"""What the tag formats share: section and call markers, the function name, call ids, the call loop.

Both tag formats write the function name outside JSON, between markers::

    section_start? ( call_start [id] name_prefix NAME name_suffix  BODY
                     args_end? func_close? call_end? )+ section_end?

and differ only in BODY (JSON arguments, or one tagged element per argument), which subclasses implement.
Whitespace between elements is free; markers are matched by their core (see :mod:`markers`).

A ``call_start`` made of a marker and more text before a ``name_prefix`` (Step-3's
``<｜tool_call_begin｜>function<｜tool_sep｜>`` before ``<steptml:invoke name="``) is matched by its first
marker alone: the rest is optional filler up to the name prefix, which is what marks the name.  Engines
accept (and models write) the call both with and without it.

With ``function_namespace`` (Kimi-K2) a call may be named by a bare counter (``0``).  With one tool in the
request that is the tool; with several, the call's JSON arguments are held back whole and the one tool whose
schema declares every argument key is called (none, or several: not a call, the text stays content).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import Gen
from workbench.runtime.parsing.lookahead import Fail, Look, More
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.parsing.partial_json import MORE, JsonValueScanner, loads_or_none
from workbench.runtime.parsing.tools_base import WHOLE, ToolParser
from workbench.runtime.spec import ToolsSpec


@dataclass
class Header:
    """A call header found by lookahead: what to emit, and who is called."""

    spans: list[list[Any]]
    name: str
    call_id: str
    discard: bool


class TagParser(ToolParser):
    """Base of ``tag_with_json`` and ``tag_with_tagged``; subclasses implement :meth:`body`."""

    def setup(self, t: ToolsSpec) -> None:
        self.call_start, self.call_start_tail = self._split_call_start(core_of(t.call_start))
        self.name_prefix = core_of(t.name_prefix)
        self.name_suffix = core_of(t.name_suffix)
        self.func_close = core_of(t.func_close)
        self.args_start = core_of(t.args_start)
        self.args_end = core_of(t.args_end)
        self.id_prefix = core_of(t.id_prefix)
        self.id_suffix = core_of(t.id_suffix)
        closers = []
        for c in (self.args_end, self.func_close, self.call_end):
            if c and c not in closers:
                closers.append(c)
        self.closers = closers

    @property
    def has_closing_markers(self) -> bool:
        return bool(self.closers or self.sec_end)

    def _split_call_start(self, core: str) -> tuple[str, str]:
        """(required head, optional tail) of the call marker; see the module docstring."""
        end = core.find(">") + 1
        if not core_of(self.t.name_prefix) or end <= 1 or end >= len(core) or not core.startswith(("<", "[")):
            return core, ""
        return core[:end], core[end:].strip()

    def trigger_cores(self) -> list[str]:
        cores = [c for c in (self.sec_start, self.call_start) if c]
        if not cores and self.name_prefix:
            cores = [self.name_prefix]
        return cores

    # --------------------------------------------------------------------------- headers
    def _call_header(self, look: Look) -> tuple[str, str]:
        if self.call_start:
            look.lit(self.call_start)
            look.ws()
            if self.call_start_tail and look.opt(self.call_start_tail):
                look.ws()
        call_id = ""
        if self.t.id_position == "pre_func_name" and self.id_prefix:
            call_id = self._read_id(look)
            look.ws()
        if self.name_prefix and not look.opt(self.name_prefix):
            if not self.call_start:
                raise Fail
            # Filler between the call marker and the name (Step-3's optional "function<｜tool_sep｜>").
            look.skip_to(self.name_prefix, 64, (*self.closers, self.sec_end, self.call_start))
        raw = look.name("tool_name")
        if self.name_suffix:
            look.ws()
            look.lit(self.name_suffix)
        return raw, call_id

    def _read_id(self, look: Look) -> str:
        look.lit(self.id_prefix)
        if self.id_suffix:
            call_id = look.until(self.id_suffix, "tool_id", 128)
            look.lit(self.id_suffix)
        else:
            call_id = look.name("tool_id", 128)
        if not call_id.strip() or "\n" in call_id:
            raise Fail
        return call_id

    def _first_header(self, look: Look) -> tuple[str, str]:
        if self.sec_start and look.opt(self.sec_start):
            look.ws()
        return self._call_header(look)

    def _next_header(self, look: Look) -> tuple[str, str]:
        look.ws()
        if self.sep and look.opt(self.sep):
            look.ws()
        return self._call_header(look)

    def _make_header(self, found: tuple[Look, tuple[str, str]] | None) -> Header | None:
        if found is None:
            return None
        look, (raw, call_id) = found
        resolved = self.resolve_name(raw)
        if resolved is None:
            return None
        name, ns_id = resolved
        discard = not self.m.known_tool(name)
        if discard and self.weak_trigger:
            return None
        return Header(look.spans, name, call_id or ns_id, discard)

    def header(self, lead: int) -> Gen[Header | None]:
        found = yield from self.m.lookahead(self._first_header, lead=lead)
        header = self._make_header(found)
        if header is None and found is not None and self._bare_counter(found[1][0]):
            look, (raw, call_id) = found
            name = yield from self._infer_from_arguments(lead + look.length)
            if name is not None:
                header = Header(look.spans, name, call_id or raw, False)
        return header

    def _bare_counter(self, raw: str) -> bool:
        ns = self.t.function_namespace
        return bool(ns) and raw.isdigit() and self.m.tools is not None and len(self.m.tools) > 1

    def _infer_from_arguments(self, rel: int) -> Gen[str | None]:
        """The one requested tool whose schema declares every key of the JSON arguments at ``pos + rel``."""
        m = self.m
        scanner = JsonValueScanner(self.terminators())
        json_at: list[int] = []  # absolute input offset where the JSON starts, once found

        def advance(buf: str, i: int, final: bool) -> tuple[int, bool]:
            if not json_at:
                look = Look(buf, i, final, 256)
                try:
                    look.ws()
                    if self.args_start and self.args_start != self.name_suffix:
                        look.opt_ws_then(self.args_start)
                        look.ws()
                    if look.at_end():
                        look.need()
                except More:
                    return i, False
                except Fail:
                    return i, True
                i = look.i
                json_at.append(m.base + i)
            j, status = scanner.advance(buf, i, final)
            return j, status != MORE

        state, text = yield from self.hold_whole(rel, advance)
        if state != WHOLE or not json_at:
            return None
        ok, value = loads_or_none(text[json_at[0] - (m.base + m.pos + rel) :])
        if not ok or not isinstance(value, dict) or m.tools is None:
            return None
        matches = []
        for name, t in m.tools.items():
            props = (t.parameters or {}).get("properties")
            if isinstance(props, dict) and set(value) <= set(props):
                matches.append(name)
        return matches[0] if len(matches) == 1 else None

    # --------------------------------------------------------------------------- the call loop
    def section(self, header: Header) -> Gen[None]:
        h: Header | None = header
        while h is not None:
            call: CallLog | None = None
            if h.discard:
                self.m.unknown_tool(h.name)
            else:
                call = self.m.open_call(h.name, h.call_id)
            self.m.emit_spans(h.spans, call.index if call is not None else None)
            complete = yield from self.body(call)
            if not complete:
                return
            found = yield from self.m.lookahead(self._next_header)
            h = self._make_header(found)
        if self.sec_end:
            yield from self.m.opt_marker(self.sec_end)

    def body(self, call: CallLog | None) -> Gen[bool]:
        """Parse one call's body (after the header); False when the input ended inside it."""
        raise NotImplementedError

    def open_body(self, call: CallLog | None) -> Gen[int | None]:
        """What every tagged body starts with: an id between name and arguments, then the optional
        arguments opener; returns the call's tool index (None outside a call)."""
        index = call.index if call is not None else None
        yield from self.read_between_id(call)
        if self.args_start and self.args_start != self.name_suffix:
            yield from self.m.opt_marker(self.args_start, index)
        return index

    def read_between_id(self, call: CallLog | None) -> Gen[None]:
        """A call id written between the name and the arguments (``id_position: between_func_and_args``)."""
        yield from self._read_id_at("between_func_and_args", call)

    def read_post_id(self, call: CallLog | None) -> Gen[None]:
        """A call id written after the arguments (``id_position: post_args``)."""
        yield from self._read_id_at("post_args", call)

    def _read_id_at(self, position: str, call: CallLog | None) -> Gen[None]:
        if self.t.id_position != position or not self.id_prefix:
            return
        found = yield from self.m.lookahead(lambda look: (look.ws(), self._read_id(look)))
        if found is not None:
            texts = self.m.emit_spans(found[0].spans, call.index if call is not None else None)
            if call is not None:
                call.id = texts.get("tool_id", "").strip()

    def close_call(self, call: CallLog | None) -> Gen[None]:
        """Consume the call's closing markers; records on ``call.ended`` whether one was there."""
        index = call.index if call is not None else None
        ended = False
        for core in self.closers:
            ended = (yield from self.m.opt_marker(core, index)) or ended
        if call is not None and self.closers:
            call.ended = ended
