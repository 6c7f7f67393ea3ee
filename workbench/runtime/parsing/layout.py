"""The layout machine: a turn read as the spec's :class:`~workbench.spec.TurnLayout` says (spec v3).

Everything the turn machine does (reasoning, content, tool sections, the engine policies), plus:

* the layout's ``lead`` (text the model writes before anything else, history's ``Assistant:``) is read
  as a marker at the start of the output, never as content;
* **headed messages**: at the layout's opener (or at its channel literal or the bare role opener, when the
  role part of a header is left out), a pure lookahead reads the header.  First exactly as the template
  writes it (one of the message kinds); then, when all headers share a closer, as a set of attributes in
  any order: the header up to the closer holds a call's recipient piece (the function name follows it,
  and the ``ids`` attribute the call id), or a kind's channel word.  A header that names no channel is the
  answer (``E-PARSE-CHANNEL-MISSING``); a header of another role (``roles`` followed by another role word)
  is a message that is not the model's: its body is skipped.  A call whose header is neither is read as
  the tools spec's call pattern says.
* a message body runs to one of its kind's ends (or an end of turn, or the next header).  A call
  message's body is its arguments: JSON when it starts like JSON (a body its header declares JSON but that
  is not: ``E-BODY-CONSTRAINT-VIOLATION``), else the text as it is; other argument kinds are read by the
  tools spec's parser.  Text after a message's end and before the next header belongs to no message when
  the layout has answer messages (``E-PARSE-HEADER``).
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

from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import MORE, Gen
from workbench.runtime.parsing.lookahead import NAME_RX, Fail, Look
from workbench.runtime.parsing.markers import MarkerSet, core_of, marker_set
from workbench.runtime.parsing.turn import END, MSG, TurnMachine
from workbench.runtime.spec import pattern_literal

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
    trail: str = ""  # the blanks the header ends with, when they end it (no closer): part of the header


@dataclass
class MessageHeader:
    kind: str  # reasoning | content | call | foreign
    spans: list[list[Any]] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    name: str = ""
    call_id: str = ""
    no_channel: bool = False
    typed: bool = True  # a call header that declares its body's type (or one the layout never declares)


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

    def setup(self) -> None:
        """The layout's markers on top of the turn's (run at the end of ``TurnMachine.__init__``)."""
        spec, options = self.spec, self.options
        lay = spec.layout
        self.layout = lay
        self.headed = lay.headed
        self.lead = core_of(lay.lead)
        self.opener = core_of(lay.opener)
        self.closer = core_of(lay.closer)
        self.channel = core_of(lay.channel)
        self.roles = core_of(lay.roles)
        self.ids = core_of(lay.ids)
        self.escape = lay.escape
        self.verbatim = tuple(core_of(v) for v in lay.verbatim[:2]) if len(lay.verbatim) >= 2 else ()
        self.kinds = [
            Kind(
                m.kind,
                core_of(m.header),
                _channel_word(core_of(m.header), self.channel),
                [core_of(e) for e in m.ends if core_of(e)],
                "" if core_of(lay.closer) else m.header[len(m.header.rstrip()) :],
            )
            for m in lay.messages
        ]
        self.all_ends = sorted({e for k in self.kinds for e in k.ends})
        self.call_ends = [c for c in (core_of(spec.tools.call_end),) if c]
        self.recipient, self.type_word = self._call_pieces()
        if not self.ids:
            self.ids = self._id_attribute()
        self.msg_triggers: list[str] = []
        if self.headed:
            # Answers and reasoning are messages: their markers are the layout's, not wrappers.
            for c in self.wrap_cores:
                self.kind_of.pop(c, None)
            self.wrap_cores = []
            self.msg_triggers = [t for t in (self.opener, self.channel, self.roles) if t]
            if self.opener:
                # A call that opens like every message is read as one (its header may come in any order).
                self.msg_triggers += [t for t in self.triggers if t.startswith(self.opener)]
                self.triggers = [t for t in self.triggers if not t.startswith(self.opener)]
        for t in self.msg_triggers:
            self.kind_of[t] = MSG
        for e in self.all_ends:
            self.kind_of.setdefault(e, END)
        self.escapes = [self.escape + t for t in self._escapable()] if self.escape else []
        for t in [*self.escapes, *self.verbatim[:1]]:
            self.kind_of[t] = MSG
        self._sets.clear()
        # Text after a message's end belongs to no message when answers are messages of their own.
        self.outside_is_text = not any(k.kind == "content" for k in self.kinds)
        self._outside = False
        if self.headed and (self.opened or options.start_stage in ("content", "answer")):
            # The prompt left the output inside a message's body: no header is to be read first, so the
            # header text the prompt wrote for the first message is not read in front of the output.
            self.buf, self._silent, self.base = "", 0, 0

    # ------------------------------------------------------------------------------------------ setup
    def _call_header_text(self) -> str:
        """A call's header after the opener and before the closer, as the template writes it (the name
        written as ``$name``)."""
        t = self.spec.tools
        text = t.call_start
        for part in t.pattern.call:
            if part == "$args":
                break
            text += part if part.startswith("$") and not part.startswith("$$") else pattern_literal(part)
        if text.startswith(self.layout.opener):
            text = text[len(self.layout.opener) :]
        elif core_of(text).startswith(self.opener):
            text = core_of(text)[len(self.opener) :]
        if self.closer and core_of(text).endswith(self.closer):
            text = core_of(text)[: -len(self.closer)]
        return text

    def _call_pieces(self) -> tuple[str, str]:
        """(the attribute right before the call's name, the word that declares the body's type)."""
        if not self.headed or not self.spec.tools.pattern.defined:
            return "", ""
        text = self._call_header_text()
        before = text.split("$name")[0]
        pieces = before.split()
        recipient = pieces[-1] if pieces else ""
        words = text.split()
        last = words[-1] if words else ""
        type_word = last if len(words) > 1 and last.isalpha() and "$" not in last else ""
        if type_word and type_word == _channel_word(text, self.channel):
            type_word = ""
        return recipient, type_word

    def _id_attribute(self) -> str:
        """The attribute right before the call's id in the call pattern's header (``call_id=`` of
        ``to=$name call_id=$id``), when the layout names none: a header read as attributes keeps its id."""
        if not self.headed or not self.spec.tools.pattern.defined:
            return ""
        before = self._call_header_text().split("$id")
        pieces = before[0].split("$name")[-1].split() if len(before) > 1 else []
        return pieces[-1] if pieces else ""

    def _escapable(self) -> list[str]:
        """The markers an escape turns into text."""
        cores = [self.opener, self.closer, self.channel, self.roles, *self.all_ends, *self.call_ends]
        cores += [*self.verbatim, *self.end_cores]
        return sorted({c for c in cores if c})

    def content_markers(self) -> MarkerSet:
        active = self.tools_active
        ms = self._sets.get(active)
        if ms is None:
            cores = [*self.end_cores, *self.wrap_cores, *(self.triggers if active else [])]
            cores += [*self.msg_triggers, *self.all_ends, *self.escapes, *self.verbatim[:1]]
            ms = self._sets[active] = marker_set(cores)
        return ms

    # ------------------------------------------------------------------------------------------ phases
    def run(self) -> Gen[None]:
        if self.lead:
            r = yield from self.lookahead(self._lead)
            if r is not None:
                self.emit_spans(r[0].spans)
        if not self.headed:
            yield from super().run()
            return
        if self.reasoning_on and self.opened:
            kind = next((k for k in self.kinds if k.kind == "reasoning"), None)
            yield from self.body("reasoning", kind.ends if kind else [core_of(self.spec.reasoning.end)])
            self._outside = True
        yield from self.content()

    def _lead(self, look: Look) -> None:
        look.ws()
        look.lit(self.lead)
        trail = self.layout.lead[len(self.layout.lead.rstrip()) :]
        if trail:
            look.opt(trail)

    def emit_content(self, n: int) -> None:
        if not (self._outside and not self.outside_is_text):
            super().emit_content(n)
            return
        self.drop_text(
            n,
            "E-PARSE-HEADER",
            "text after the end of a message, before the next header: not part of any message",
        )

    # ------------------------------------------------------------------------------------------ messages
    def message(self, lead: int) -> Gen[bool]:
        core = self._marker_at(lead)
        if core in self.escapes:
            self.emit_content(lead)
            self.emit("marker", len(self.escape))
            self.emit_content(len(core) - len(self.escape))
            return True
        if self.verbatim and core == self.verbatim[0]:
            self.emit_content(lead)
            yield from self.verbatim_block("content", None)
            return True
        found = yield from self.lookahead(self._header, lead=lead, limit=HEADER_LIMIT + 64)
        if found is None:
            if self.fmt is not None and self.tools_active:  # a call exactly as the template writes it
                header = yield from self.fmt.header(lead)
                if header is not None:
                    self.emit("marker", lead)
                    self._outside = False
                    yield from self.tool_section(header)
                    self._outside = True
                    return True
            return False
        _, h = found
        self.emit("marker", lead)
        self._outside = False
        if h.kind == "call":
            yield from self._call(h)
        elif h.kind == "foreign":
            self.emit_spans(h.spans)
            yield from self.skip_body()
        elif h.kind == "reasoning" and not self.reasoning_on:
            # Reasoning not extracted (or thinking off): the whole message is answer text, verbatim.
            self.out.add_content(self.emit("content", sum(int(n) for _, n in h.spans)))
            yield from self.body("content", h.ends, verbatim=True)
        else:
            if h.no_channel:
                self.out.diagnose(
                    "E-PARSE-CHANNEL-MISSING",
                    "a message header names no channel: read as the answer",
                    self.offset(),
                    "info",
                )
            self.emit_spans(h.spans)
            yield from self.body(h.kind, h.ends)
        self._outside = True
        return True

    def _marker_at(self, lead: int) -> str:
        found = self.content_markers().match_at(self.buf, self.pos + lead)
        return found or ""

    def _call(self, h: MessageHeader) -> Gen[None]:
        call: CallLog | None = None
        if self.tools_active:
            if self.known_tool(h.name):
                call = self.open_call(h.name, h.call_id)
            else:
                self.unknown_tool(h.name)
        self.emit_spans(h.spans, call.index if call is not None else None)
        if self.fmt is not None and self.spec.tools.pattern.args != "json":
            yield from self.fmt.body(call)  # type: ignore[attr-defined]
        else:
            yield from self.call_body(call, h.typed)
        if call is not None and not call.dropped:
            self._called = True

    def call_body(self, call: CallLog | None, typed: bool) -> Gen[None]:
        """A call message's body: JSON arguments, or the text as it is; then the call's end."""
        ends = [*self.call_ends, *self.all_ends]
        declared = "although its header says so" if typed and self.type_word else ""
        is_json, status = yield from self.typed_json_body(
            call, marker_set([*ends, *self.end_cores]), declared
        )
        if is_json:
            if status != MORE:
                yield from self.raw_body(None, ends)
            return
        yield from self.raw_body(call, ends)

    def raw_body(self, call: CallLog | None, ends: Sequence[str]) -> Gen[None]:
        """Text up to one of ``ends`` (consumed): the call's arguments as they are, or markers."""
        index = call.index if call is not None else None
        kind = "tool_args" if call is not None else "marker"
        stops = marker_set([*ends, *self.end_cores, *self.msg_triggers])
        while True:
            m, stop = self.scan(stops)
            text = self.emit(kind, stop - self.pos, index)
            if call is not None and text:
                call.add_args(text)
            if m is None:
                if self.final:
                    if call is not None:
                        self.truncated(f"tool call {call.index}")
                    return
                yield from self.wait()
                continue
            core = m.group(0)
            if core in ends or self.kind_of.get(core) == END:
                self.emit("marker", len(core), index)
                if call is not None:
                    if not call.args:
                        call.add_args("")
                    call.closed = True
                    call.ended = True
            return

    def _header(self, look: Look) -> MessageHeader:
        """Read a message header (pure); Fail when the text here is none."""
        at_opener = look.opt(self.opener) if self.opener else False
        if not at_opener:
            if self.roles and look.peek(self.roles) and not (self.opener and look.peek(self.opener)):
                save_i, save_spans = look.i, [list(s) for s in look.spans]
                look.lit(self.roles)
                look.ws()
                if not (
                    (self.channel and look.peek(self.channel)) or (self.closer and look.peek(self.closer))
                ):
                    look.i, look.spans = save_i, save_spans
                    return self._foreign(look)
            elif not (self.channel and look.peek(self.channel)):
                raise Fail
        start_i, start_spans = look.i, [list(s) for s in look.spans]
        for k in self.kinds:  # exactly as the template writes it
            look.i, look.spans = start_i, [list(s) for s in start_spans]
            try:
                look.ws()
                look.lit(k.header)
                if k.trail:
                    # a header ended by a newline, not a closer: the newline tells it from a longer one
                    # ('channel=commentary\n' against 'channel=commentary to=functions.NAME\n')
                    look.lit(k.trail)
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
        stops = [x for x in (self.opener, self.roles, *self.all_ends, *self.call_ends, *self.end_cores) if x]
        if any(x in text for x in stops):
            raise Fail
        if self.recipient and self.recipient in text:
            return self._call_attributes(look, text)
        word = _channel_word(text, self.channel)
        found = next((kd for kd in self.kinds if kd.word and kd.word == word), None)
        if found is None and not self.channel:
            found = next((kd for kd in self.kinds if kd.word and kd.word in text.split()), None)
        look.span("marker", len(text) + len(self.closer))
        if found is not None:
            return MessageHeader(found.kind, look.spans, found.ends)
        content = next((kd for kd in self.kinds if kd.kind == "content"), None)
        no_channel = bool(self.channel) and self.channel not in text
        ends = content.ends if content else self.all_ends
        return MessageHeader("content", look.spans, ends, no_channel=no_channel)

    def _call_attributes(self, look: Look, text: str) -> MessageHeader:
        """A call's header read as attributes: the name after the recipient piece, the id after ``ids``."""
        slots: list[tuple[int, int, str]] = []
        at = text.find(self.recipient) + len(self.recipient)
        while at < len(text) and text[at] in " \t":
            at += 1
        m = NAME_RX.match(text, at)
        if m is None:
            raise Fail
        name = m.group(0)
        slots.append((m.start(), m.end(), "tool_name"))
        call_id = ""
        if self.ids and self.ids in text:
            j = text.find(self.ids) + len(self.ids)
            mid = NAME_RX.match(text, j)
            if mid is not None:
                call_id = mid.group(0)
                slots.append((mid.start(), mid.end(), "tool_id"))
        at = 0
        for s, e, kind in sorted(slots):
            look.span("marker", s - at)
            look.span(kind, e - s)
            at = e
        look.span("marker", len(text) - at + len(self.closer))
        typed = not self.type_word or self.type_word in re.split(r"[\s<>|]+", text)
        return MessageHeader("call", look.spans, name=name, call_id=call_id, typed=typed)

    def _foreign(self, look: Look) -> MessageHeader:
        """Another role's message header: from ``roles`` to the closer (or the end of the line)."""
        end = self.closer or "\n"
        k = look.find_within(end, HEADER_LIMIT)
        look.span("marker", k - look.i + len(end))
        return MessageHeader("foreign", look.spans, self.all_ends)

    # ------------------------------------------------------------------------------------------ bodies
    def body(self, kind: str, ends: Sequence[str], *, verbatim: bool = False) -> Gen[None]:
        """A reasoning or answer body up to one of ``ends`` (consumed), an end of turn, or a new header;
        ``verbatim``: the end is answer text too (a message kept whole in the answer)."""
        stops = marker_set(
            [*ends, *self.end_cores, *self.msg_triggers, *self.all_ends, *self.escapes, *self.verbatim[:1]]
        )
        while True:
            m, stop = self.scan(stops)
            self.record(kind, self.emit(kind, stop - self.pos))
            if m is None:
                if self.final:
                    if kind == "reasoning":
                        self.truncated("a reasoning message")
                    return
                yield from self.wait()
                continue
            core = m.group(0)
            if core in self.escapes:
                self.emit("marker", len(self.escape))
                self.record(kind, self.emit(kind, len(core) - len(self.escape)))
                continue
            if self.verbatim and core == self.verbatim[0]:
                yield from self.verbatim_block(kind, None)
                continue
            if core in ends or core in self.all_ends:
                if verbatim:
                    self.record("content", self.emit("content", len(core)))
                else:
                    self.emit("marker", len(core))
                return
            if self.kind_of.get(core) == END:
                self.emit("marker", len(core))
                self._after_end = True
                return
            return  # a new header ends the body

    def verbatim_block(self, kind: str, call: CallLog | None) -> Gen[None]:
        """A verbatim block: its opener and closer are markers, nothing between them is."""
        self.emit("marker", len(self.verbatim[0]))
        ends = marker_set([self.verbatim[1]])
        while True:
            m, stop = self.scan(ends)
            self.record(kind, self.emit(kind, stop - self.pos))
            if m is not None:
                self.emit("marker", len(self.verbatim[1]))
                return
            if self.final:
                self.truncated("a verbatim block")
                return
            yield from self.wait()

    def skip_body(self) -> Gen[None]:
        """Another role's message body: released as markers up to an end (consumed) or a new header."""
        stops = marker_set([*self.all_ends, *self.call_ends, *self.end_cores, *self.msg_triggers])
        while True:
            m, stop = self.scan(stops)
            self.emit("marker", stop - self.pos)
            if m is None:
                if self.final:
                    return
                yield from self.wait()
                continue
            core = m.group(0)
            if core in self.all_ends or core in self.call_ends or self.kind_of.get(core) == END:
                self.emit("marker", len(core))
            return
