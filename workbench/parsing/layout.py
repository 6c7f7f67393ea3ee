"""The layout machine: a turn read as the spec's :class:`~workbench.spec.TurnLayout` says (spec v3).

Everything the turn machine does (reasoning, content, tool sections, the engine policies), plus:

* the layout's ``lead`` (text the model writes before anything else, history's ``Assistant:``) is read
  as a marker at the start of the output, never as content;
* **headed messages**: at the layout's opener (or at its channel literal, when the role part of a header
  is left out), a pure lookahead reads the header.  First exactly as the template writes it (one of the
  message kinds, or a call as the tools spec's pattern says); then, when all headers share a closer, as a
  set of attributes in any order: the header up to the closer holds a call's recipient piece (the name
  follows it), or a kind's channel word.  A header that names no channel is the answer
  (``E-PARSE-CHANNEL-MISSING``); a header of another role (``roles`` without the assistant's opener) is a
  message that is not the model's: its body is skipped.
* a message body runs to one of its kind's ends (or an end of turn, or the next header); a call's body is
  its arguments, read by the tools spec's parser, then its end.
* outside a verbatim block, ``escape`` in front of a marker makes the marker text (the escape itself is
  released as a marker, so event texts still add up to the input); inside a verbatim block nothing is a
  marker.

Header lookaheads are pure and bounded, and partial markers at the end of a chunk are held back by the
scans, so one-shot parsing and any chunking give the same message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.chat import Tool
from workbench.parsing.builder import CallLog
from workbench.parsing.core import Gen
from workbench.parsing.lookahead import NAME_RX, Fail, Look
from workbench.parsing.markers import MarkerSet, core_of, marker_set
from workbench.parsing.options import ParseOptions
from workbench.parsing.tools_base import ToolParser
from workbench.parsing.turn import END, MSG, TurnMachine
from workbench.spec import FormatSpec, pattern_literal

#: The longest header read as a set of attributes.
HEADER_LIMIT = 256
_WORD = re.compile(r"[\w\-.]+")


@dataclass
class Kind:
    """A message kind as the machine matches it."""

    kind: str
    header: str  # after the opener, edges stripped
    word: str  # the channel word (or the header itself when the layout has no channel literal)
    ends: list[str]


@dataclass
class MessageHeader:
    kind: str  # reasoning | content | call | foreign
    spans: list[list[Any]] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    name: str = ""
    call_id: str = ""
    no_channel: bool = False


def _channel_word(header: str, channel: str) -> str:
    """The word after the channel literal in a header (the whole header without one)."""
    if channel:
        at = header.find(channel)
        if at < 0:
            return ""
        m = _WORD.match(header, at + len(channel))
        return m.group(0) if m else ""
    return header.strip()


class LayoutMachine(TurnMachine):
    """Reads a turn laid out as ``spec.layout`` says; see the module docstring."""

    def __init__(
        self,
        spec: FormatSpec,
        tools: Sequence[Tool] | None,
        options: ParseOptions,
        format_cls: type[ToolParser] | None,
    ) -> None:
        super().__init__(spec, tools, options, format_cls)
        lay = spec.layout
        self.layout = lay
        self.lead = core_of(lay.lead)
        self.opener = core_of(lay.opener)
        self.closer = core_of(lay.closer)
        self.channel = core_of(lay.channel)
        self.roles = core_of(lay.roles)
        self.kinds = [
            Kind(
                m.kind,
                core_of(m.header),
                _channel_word(core_of(m.header), self.channel),
                [core_of(e) for e in m.ends if core_of(e)],
            )
            for m in lay.messages
        ]
        self.all_ends = sorted({e for k in self.kinds for e in k.ends})
        self.recipient, self.call_word = self._call_pieces()
        self.msg_triggers = [t for t in (self.opener, self.channel, self.roles) if t] if lay.headed else []
        for t in self.msg_triggers:
            self.kind_of[t] = MSG
        for e in self.all_ends:
            self.kind_of.setdefault(e, END)
        self._sets.clear()
        if lay.headed and (self.opened or options.start_stage in ("content", "answer")):
            # The prompt left the output inside a message's body: no header is to be read first, so the
            # header text the prompt wrote for the first message is not read in front of the output.
            self.buf, self._silent, self.base = "", 0, 0

    # ------------------------------------------------------------------------------------------ setup
    def _call_pieces(self) -> tuple[str, str]:
        """(the literal right before the call's name, the call's channel word), from the tools spec's
        call header (``call_start`` and the pattern's parts before the arguments)."""
        t = self.spec.tools
        if not self.layout.headed or not t.pattern.defined:
            return "", ""
        text = t.call_start
        for part in t.pattern.call:
            if part == "$name":
                break
            text += "" if part.startswith("$") and not part.startswith("$$") else pattern_literal(part)
        if text.startswith(self.layout.opener):
            text = text[len(self.layout.opener) :]
        elif core_of(text).startswith(self.opener):
            text = core_of(text)[len(self.opener) :]
        word = _channel_word(text, self.channel)
        pieces = text.split()
        return (pieces[-1] if pieces else ""), word

    def content_markers(self) -> MarkerSet:
        active = self.tools_active
        ms = self._sets.get(active)
        if ms is None:
            cores = [*self.end_cores, *self.wrap_cores, *(self.triggers if active else [])]
            cores += [*self.msg_triggers, *self.all_ends]
            ms = self._sets[active] = marker_set(cores)
        return ms

    # ------------------------------------------------------------------------------------------ phases
    def run(self) -> Gen[None]:
        if self.lead:
            r = yield from self.lookahead(self._lead)
            if r is not None:
                self.emit_spans(r[0].spans)
        if not self.layout.headed:
            yield from super().run()
            return
        if self.reasoning_on and self.opened:
            kind = next((k for k in self.kinds if k.kind == "reasoning"), None)
            yield from self.body("reasoning", kind.ends if kind else [core_of(self.spec.reasoning.end)])
        yield from self.content()

    def _lead(self, look: Look) -> None:
        look.ws()
        look.lit(self.lead)

    # ------------------------------------------------------------------------------------------ messages
    def message(self, lead: int) -> Gen[bool]:
        found = yield from self.lookahead(self._header, lead=lead, limit=HEADER_LIMIT + 64)
        if found is None:
            if self.fmt is not None and self.tools_active:
                header = yield from self.fmt.header(lead)
                if header is not None:
                    self.emit("marker", lead)
                    yield from self.tool_section(header)
                    return True
            return False
        _, h = found
        self.emit("marker", lead)
        if h.kind == "call":
            return (yield from self._call(h))
        self.emit_spans(h.spans)
        if h.no_channel:
            self.out.diagnose(
                "E-PARSE-CHANNEL-MISSING",
                "a message header names no channel: read as the answer",
                self.offset(),
                "info",
            )
        if h.kind == "foreign":
            yield from self.skip_body()
            return True
        kind = h.kind if (h.kind != "reasoning" or self.reasoning_on) else "content"
        yield from self.body(kind, h.ends)
        return True

    def _call(self, h: MessageHeader) -> Gen[bool]:
        assert self.fmt is not None
        call: CallLog | None
        if self.known_tool(h.name):
            call = self.open_call(h.name, h.call_id)
        else:
            call = None
            self.unknown_tool(h.name)
        self.emit_spans(h.spans, call.index if call is not None else None)
        complete = yield from self.fmt.body(call)  # type: ignore[attr-defined]
        if call is not None and not call.dropped:
            self._called = True
        return bool(complete) or True

    def _header(self, look: Look) -> MessageHeader:
        """Read a message header (pure); Fail when the text here is none."""
        at_opener = look.opt(self.opener) if self.opener else False
        if not at_opener:
            if self.roles and look.peek(self.roles) and not (self.opener and look.peek(self.opener)):
                return self._foreign(look)
            if not (self.channel and look.peek(self.channel)):
                raise Fail
        start_i, start_spans = look.i, [list(s) for s in look.spans]
        for k in self.kinds:  # exactly as the template writes it
            look.i, look.spans = start_i, [list(s) for s in start_spans]
            try:
                look.ws()
                look.lit(k.header)
            except Fail:
                continue
            return MessageHeader(k.kind, look.spans, k.ends)
        look.i, look.spans = start_i, [list(s) for s in start_spans]
        if not self.closer:
            raise Fail
        return self._attributes(look)

    def _attributes(self, look: Look) -> MessageHeader:
        """The header up to the closer, read as a set of attributes."""
        buf = look.buf
        k = buf.find(self.closer, look.i)
        if k < 0:
            if len(buf) - look.i > HEADER_LIMIT:
                raise Fail
            look.need()
        text = buf[look.i : k]
        if len(text) > HEADER_LIMIT or "\n" in text.strip():
            raise Fail
        stops = [x for x in (self.opener, self.roles, *self.all_ends, *self.end_cores) if x]
        if any(x in text for x in stops):
            raise Fail
        if self.recipient and self.recipient in text:
            at = text.find(self.recipient) + len(self.recipient)
            while at < len(text) and text[at] in " \t":
                at += 1
            m = NAME_RX.match(text, at)
            if m is None:
                raise Fail
            look.span("marker", m.start())
            look.span("tool_name", m.end() - m.start())
            look.span("marker", len(text) - m.end())
            look.span("marker", len(self.closer))
            return MessageHeader("call", look.spans, name=m.group(0))
        word = _channel_word(text, self.channel)
        found = next((kd for kd in self.kinds if kd.word and kd.word == word), None)
        if found is None and not self.channel:
            found = next((kd for kd in self.kinds if kd.word and kd.word in text.split()), None)
        look.span("marker", len(text) + len(self.closer))
        if found is not None:
            return MessageHeader(found.kind, look.spans, found.ends)
        content = next((kd for kd in self.kinds if kd.kind == "content"), None)
        no_channel = bool(self.channel) and self.channel not in text
        return MessageHeader(
            "content", look.spans, content.ends if content else self.all_ends, no_channel=no_channel
        )

    def _foreign(self, look: Look) -> MessageHeader:
        """Another role's message header: from ``roles`` to the closer (or the end of the line)."""
        end = self.closer or "\n"
        k = look.buf.find(end, look.i)
        if k < 0:
            if len(look.buf) - look.i > HEADER_LIMIT:
                raise Fail
            look.need()
        if k - look.i > HEADER_LIMIT:
            raise Fail
        look.span("marker", k - look.i + len(end))
        return MessageHeader("foreign", look.spans, self.all_ends)

    # ------------------------------------------------------------------------------------------ bodies
    def body(self, kind: str, ends: Sequence[str]) -> Gen[None]:
        """A reasoning or answer body up to one of ``ends`` (consumed), an end of turn, or a new header."""
        stops = marker_set([*ends, *self.end_cores, *self.msg_triggers, *self.all_ends])
        while True:
            m, stop = self.scan(stops)
            n = stop - self.pos
            if kind == "reasoning":
                self.out.add_reasoning(self.emit("reasoning", n))
            else:
                self.emit_content(n)
            if m is None:
                if self.final:
                    if kind == "reasoning":
                        self.out.diagnose(
                            "E-STREAM-TRUNCATED", "the output ended inside a reasoning message", self.offset()
                        )
                    return
                yield from self.wait()
                continue
            core = m.group(0)
            if core in ends or core in self.all_ends:
                self.emit("marker", len(core))
                return
            if self.kind_of.get(core) == END:
                self.emit("marker", len(core))
                self._after_end = True
                return
            return  # a new header ends the body

    def skip_body(self) -> Gen[None]:
        """Another role's message body: released as markers up to an end (consumed) or a new header."""
        stops = marker_set([*self.all_ends, *self.end_cores, *self.msg_triggers])
        while True:
            m, stop = self.scan(stops)
            self.emit("marker", stop - self.pos)
            if m is None:
                if self.final:
                    return
                yield from self.wait()
                continue
            core = m.group(0)
            if core in self.all_ends or self.kind_of.get(core) == END:
                self.emit("marker", len(core))
            return
