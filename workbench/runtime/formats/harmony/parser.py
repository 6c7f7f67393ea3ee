"""Harmony / OpenChatML 2.2 (gpt-oss): a turn is a sequence of channelled messages.

Grammar (OpenChatML 2.2 §6, with HIP-1's compatibility rules)::

    <|start|>ROLE[ to=DEST][ call_id=ID]...[<|channel|>CHANNEL[ to=DEST][ json]][<|constrain|>TYPE]
    <|message|>BODY
    ( <|end|> | <|call|> | <|return|> )

- ``analysis`` is reasoning, ``commentary`` and ``final`` are content, a message without a channel is
  ``final`` (1.x back-compat);
- a recipient ``to=functions.NAME`` (in the role header or after the channel) makes the message a tool
  call whose body is the arguments, closed by ``<|call|>``;
- the output usually starts inside the first header, because the prompt ends with ``<|start|>assistant``;
- ``<|literal|>...<|endliteral|>`` is opaque: no control token is recognised inside it;
- outside a literal block, a control token with its ``<`` doubled is text: ``<<|start|>`` reads as the
  text ``<|start|>`` (§3; the extra ``<`` is released as a marker, so the event texts still add up to the
  input).  Inside a tool call's JSON arguments the JSON decides where they end, so no escape is read there.

The spec's error taxonomy (§14) becomes diagnostic codes: E-PARSE-HEADER (malformed header),
E-PARSE-CHANNEL-MISSING (assistant message without a channel, info), E-BODY-CONSTRAINT-VIOLATION (a body
that does not parse as its ``<|constrain|>`` type), E-CALL-SCHEMA (arguments not matching the tool),
E-STREAM-TRUNCATED (the stream ended inside a header, a call, or without ``<|return|>``/``<|call|>``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.formats.harmony.markers import (
    ANALYSIS,
    CALL,
    CHANNEL,
    CONSTRAIN,
    CONTROL,
    END,
    ENDLITERAL,
    ESCAPES,
    FUNCTIONS,
    HEADER_TOKENS,
    LITERAL,
    MESSAGE,
    RETURN,
    START,
    TERMINATORS,
)
from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import MORE, Gen, Machine
from workbench.runtime.parsing.lookahead import Fail, Look
from workbench.runtime.parsing.markers import core_of, marker_set
from workbench.runtime.parsing.options import ParseOptions
from workbench.runtime.spec import FormatSpec

_CHANNEL_RX = re.compile(r"<\|channel\|>\s*([\w\-]+)((?:[ \t]+[^\s<]+)*)")
_TO_RX = re.compile(r"\bto=([^\s<]+)")
_CALL_ID_RX = re.compile(r"\bcall_id=([^\s<]+)")
_CONSTRAIN_RX = re.compile(r"<\|constrain\|>\s*([^\s<]*)")
_ROLE_RX = re.compile(r"<\|start\|>\s*([^\s<=]+)(?=\s|<|$)")
_CONTINUATION_RX = re.compile(r"\s*(?:to=|<\|channel\|>|<\|constrain\|>|<\|message\|>)")
_HEADER_LIMIT = 512


@dataclass
class HarmonyHeader:
    spans: list[list[Any]] = field(default_factory=list)
    role: str = "assistant"
    channel: str = ""
    recipient: str = ""
    call_id: str = ""
    constrain: str = ""

    @property
    def tool_name(self) -> str:
        r = self.recipient
        return r[len(FUNCTIONS) :] if r.startswith(FUNCTIONS) else r


class HarmonyMachine(Machine):
    """Parses a Harmony turn; see the module docstring."""

    def __init__(self, spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> None:
        super().__init__(spec, tools, options)
        ends = [core_of(e) for e in (*spec.end_markers, spec.eos_token)]
        self.end_cores = [e for e in ends if e and e not in CONTROL]
        self.top_markers = marker_set([*CONTROL, *ESCAPES, *self.end_cores])
        self.body_markers = marker_set([*TERMINATORS, START, CHANNEL, LITERAL, *self.end_cores])
        self.text_markers = marker_set([*TERMINATORS, START, CHANNEL, LITERAL, *ESCAPES, *self.end_cores])
        self.extract = options.extract_reasoning
        self.parse_tools = options.parse_tools
        self.terminated = False
        # After <|end|> / <|call|> the next message must open with a header: text before it belongs to no
        # channel (P5), so it is not content (nor does it end reasoning).
        self.outside = False

    # ------------------------------------------------------------------------------------------ top level
    def run(self) -> Gen[None]:
        if self.options.start_stage == "reasoning" and self.extract:
            # The prompt left the output inside an analysis message's body (reasoning being continued with
            # ``continue_final_message``): that body comes first, then the turn goes on as usual.
            yield from self.body("reasoning", None)
            if self.done_flag():
                return
        first = True
        boundary = True
        while True:
            if first:
                first = False
                cont = yield from self.lookahead(self._continuation)
                if cont is not None:
                    done = yield from self.message(lead=0)
                    if done:
                        return
                    continue
            m, limit, lead = yield from self.boundary_scan(lambda: self.top_markers, boundary)
            if lead >= 0 and m is None:  # whitespace between messages that nothing follows
                self.emit("marker", lead)
                return
            if lead < 0:
                lead = 0
                boundary = False
                self._content(limit - self.pos)
                if m is None:
                    if self.final:
                        return
                    yield from self.wait()
                    continue
            assert m is not None  # every path without a marker returned or waited above
            token = m.group(0)
            if token in ESCAPES:
                self._content(lead)
                self._escape(token, self._content)
                boundary = False
                continue
            boundary = True
            if token in HEADER_TOKENS:
                self.outside = False
                done = yield from self.message(lead)
                if done:
                    return
                continue
            if token == LITERAL:
                self.emit("marker", lead)
                yield from self.literal("content", None)
                continue
            self.emit("marker", lead + len(token))  # a stray terminator or end-of-turn marker
            if token == RETURN or token in self.end_cores:
                self.terminated = True

    def _continuation(self, look: Look) -> bool:
        """The output continues the prompt's ``<|start|>assistant`` header (`` to=..``, ``<|channel|>``)."""
        if look.at_end():
            look.need()
        m = _CONTINUATION_RX.match(look.buf, look.i)
        if m is None:
            rest = look.buf[look.i :]
            if (
                any(tok.startswith(rest.lstrip()) for tok in ("to=", CHANNEL, CONSTRAIN, MESSAGE))
                and rest.strip()
            ):
                look.need()
            if not rest.strip():
                look.need()
            raise Fail
        return True

    def _escape(self, token: str, release: Any) -> None:
        """An escaped control token: the doubled ``<`` is a marker, the token is released as text."""
        self.emit("marker", 1)
        release(len(token) - 1)

    def _content(self, n: int) -> None:
        if not self.outside:
            self.out.add_content(self.emit("content", n))
            return
        self.warn_once(
            "E-PARSE-HEADER", "text after the end of a message without a new <|start|> header: ignored"
        )
        self.emit("marker", n)

    # ------------------------------------------------------------------------------------------ messages
    def _header(self, look: Look) -> HarmonyHeader:
        look.ws()
        k = look.buf.find(MESSAGE, look.i)
        if k < 0:
            if len(look.buf) - look.i > _HEADER_LIMIT:
                raise Fail
            look.need()
        text = look.buf[look.i : k]
        if len(text) > _HEADER_LIMIT or "\n" in text or any(t in text for t in (*TERMINATORS, LITERAL)):
            raise Fail
        if START in text[len(START) :] if text.startswith(START) else START in text:
            raise Fail
        h = HarmonyHeader()
        specials: list[tuple[int, int, str]] = []
        role = _ROLE_RX.match(text)
        if role:
            h.role = role.group(1)
        ch = _CHANNEL_RX.search(text)
        if ch:
            h.channel = ch.group(1)
            extra = ch.group(2).split()
            for word in extra:
                if not word.startswith(("to=", "call_id=", "intent=", "name=", "content_type=")):
                    h.constrain = h.constrain or word
        to = _TO_RX.search(text)
        if to:
            h.recipient = to.group(1)
            start = to.start(1) + (len(FUNCTIONS) if h.recipient.startswith(FUNCTIONS) else 0)
            specials.append((start, to.end(1), "tool_name"))
        cid = _CALL_ID_RX.search(text)
        if cid:
            h.call_id = cid.group(1)
            specials.append((cid.start(1), cid.end(1), "tool_id"))
        con = _CONSTRAIN_RX.search(text)
        if con and con.group(1):
            h.constrain = con.group(1)
        at = 0
        for s, e, kind in sorted(specials):
            look.span("marker", s - at)
            look.span(kind, e - s)
            at = e
        look.span("marker", len(text) - at)
        look.span("marker", len(MESSAGE))
        return h

    def message(self, lead: int) -> Gen[bool]:
        """One message from its header on; returns True when the input ended."""
        found = yield from self.lookahead(self._header, lead=lead, limit=_HEADER_LIMIT + 64)
        if found is None:
            if self.final:
                self.truncated("a message header")
                self.emit("marker", len(self.buf) - self.pos)
                return True
            self.out.diagnose("E-PARSE-HEADER", "malformed message header", self.offset(), "error")
            m = self.top_markers.search(self.buf, self.pos + lead)
            token_len = len(m.group(0)) if m is not None and m.start() == self.pos + lead else 0
            self.emit("marker", lead + max(token_len, 1))
            return False
        look, h = found
        self.emit("marker", lead)
        if h.role not in ("assistant", ""):
            self.emit_spans(look.spans)
            yield from self.body("marker", None)
            return self.done_flag()
        if not h.channel:
            self.out.diagnose(
                "E-PARSE-CHANNEL-MISSING", "message without a channel (read as final)", self.offset(), "info"
            )
        if h.recipient and self.parse_tools:
            yield from self.call_message(look, h)
            return self.done_flag()
        if h.channel == ANALYSIS:
            kind = "reasoning" if self.extract else "content"
            header_kind = "marker" if self.extract else "content"
            spans = [[header_kind if k == "marker" else k, n] for k, n in look.spans]
            texts = self.emit_spans(spans)
            if not self.extract:
                self.out.add_content(texts.get("content", ""))
            yield from self.body(kind, None, verbatim_end=not self.extract)
            return self.done_flag()
        self.emit_spans(look.spans)
        yield from self.body("content", None)
        return self.done_flag()

    def done_flag(self) -> bool:
        return self.final and self.pos >= len(self.buf)

    def call_message(self, look: Look, h: HarmonyHeader) -> Gen[None]:
        name = h.tool_name
        call: CallLog | None = None
        if not self.known_tool(name):
            self.unknown_tool(name)
        else:
            call = self.open_call(name, h.call_id)
        index = call.index if call is not None else None
        self.emit_spans(look.spans, index)
        declared = "despite <|constrain|>json" if h.constrain.lower() == "json" else ""
        is_json, status = yield from self.typed_json_body(call, self.body_markers, declared)
        if is_json:
            if status != MORE:
                yield from self.body("marker", call)
            return
        yield from self.body("tool_args" if call is not None else "marker", call, raw_args=True)

    def body(
        self, kind: str, call: CallLog | None, *, verbatim_end: bool = False, raw_args: bool = False
    ) -> Gen[None]:
        """Body text up to its terminator, emitted as ``kind``; consumes the terminator."""
        index = call.index if call is not None else None
        while True:
            m, stop = self.scan(self.text_markers)
            text = self.emit(kind, stop - self.pos, index)
            self._account(kind, text, call, raw_args)
            if m is None:
                if self.final:
                    if call is not None:
                        self.truncated(f"tool call {call.index}")
                    else:
                        self.out.diagnose(
                            "E-STREAM-TRUNCATED",
                            "the output ended without <|return|> or <|call|>",
                            self.offset(),
                            "info",
                        )
                    return
                yield from self.wait()
                continue
            token = m.group(0)
            if token in ESCAPES:
                self.emit("marker", 1, index)
                self._account(kind, self.emit(kind, len(token) - 1, index), call, raw_args)
                continue
            if token == LITERAL:
                yield from self.literal(kind, call, raw_args=raw_args)
                continue
            if token in (START, CHANNEL):
                return  # a new message without a terminator
            end_kind = "content" if verbatim_end else "marker"
            end_text = self.emit(end_kind, len(token), index)
            if verbatim_end:
                self.out.add_content(end_text)
            if call is not None:
                call.closed = call.closed or token == CALL
                if raw_args and not call.args:
                    call.add_args("")
            if token == RETURN or token in self.end_cores:
                self.terminated = True
            self.outside = token in (END, CALL)
            return

    def _account(self, kind: str, text: str, call: CallLog | None, raw_args: bool) -> None:
        if kind == "tool_args" and call is not None and raw_args and text:
            call.add_args(text)
        else:
            self.record(kind, text)

    def literal(self, kind: str, call: CallLog | None, *, raw_args: bool = False) -> Gen[None]:
        """``<|literal|>`` ... ``<|endliteral|>``: opaque text, no token recognised inside."""
        index = call.index if call is not None else None
        self.emit("marker", len(LITERAL), index)
        ends = marker_set([ENDLITERAL])
        while True:
            m, stop = self.scan(ends)
            text = self.emit(kind, stop - self.pos, index)
            self._account(kind, text, call, raw_args)
            if m is not None:
                self.emit("marker", len(ENDLITERAL), index)
                return
            if self.final:
                self.truncated("a literal block")
                return
            yield from self.wait()
