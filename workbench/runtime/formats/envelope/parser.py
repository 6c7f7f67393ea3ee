"""Reading a reply written as one JSON object (spec v6, :class:`~workbench.runtime.spec.ReplyEnvelope`).

xLAM writes ``{"thought": "TEXT", "tool_calls": [{"name": ..., "arguments": {...}}]}``; BlueLM
``{"answer": TEXT, "function_calls": [...]}`` after a ``<think>`` block.  The turn machine reads reasoning
in its markers first, as for any turn; where the answer would start, this machine reads the object member by
member instead of scanning for markers:

* a text member (the answer, the reasoning) is a JSON string, streamed as it arrives and decoded escape
  by escape, so a server streaming the reply sends the text, not its JSON spelling; ``null`` holds nothing;
* the calls member is a list of call objects (or one object), each read whole when it closes and written
  as the tools spec's JSON fields say (``name_field``, ``args_field``, ``id_field``, ``function_field``);
* any other member (a status word, a role) is read as JSON and left out of the message.

The events keep the model's text (the invariant: events concatenate to the input); the message gets the
decoded text.  Text that is not an envelope where one should start, and whatever follows the object (the
turn's end marker), are read as the plain turn reads them.  Decoding is per escape, so the result does not
depend on how the text was chunked.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.parsing.core import Gen
from workbench.runtime.parsing.lookahead import Look
from workbench.runtime.parsing.options import ParseOptions
from workbench.runtime.parsing.partial_json import DONE, MORE, JsonValueScanner
from workbench.runtime.parsing.turn import TurnMachine
from workbench.runtime.spec import FormatSpec

_HEX = frozenset("0123456789abcdefABCDEF")
_QUOTE_OR_ESCAPE = re.compile(r'["\\]')


def _open(look: Look) -> None:
    look.ws()
    look.lit("{")


def _next_item(look: Look, first: bool, close: str) -> bool:
    """Past the ``,`` in front of the next item of an object or list (none before the first): True, or
    False at its ``close``."""
    look.ws()
    if look.opt(close):
        return False
    if not first:
        look.lit(",")
        look.ws()
    return True


def _member_head(look: Look, first: bool) -> str | None:
    """``,`` (not before the first member), the key and ``:``; None at the object's ``}``."""
    if not _next_item(look, first, "}"):
        return None
    key = look.json_string("marker", 256)
    look.ws()
    look.lit(":")
    look.ws()
    return key


def _value_start(look: Look) -> str:
    """The first character of the value (whitespace before it consumed)."""
    look.ws()
    if look.at_end():
        look.need()
    return look.buf[look.i]


def _list_item(look: Look, first: bool) -> bool:
    """True at the next item of a list (after its ``,``), False at the list's ``]``."""
    if not _next_item(look, first, "]"):
        return False
    if look.at_end():
        look.need()
    return True


def _head_reader(first: bool) -> Callable[[Look], str | None]:
    return lambda look: _member_head(look, first)


def _item_reader(first: bool) -> Callable[[Look], bool]:
    return lambda look: _list_item(look, first)


def _escape_length(buf: str, i: int) -> int:
    """The length of the JSON escape at ``buf[i]`` (a backslash): 0 when the buffer ends before it is
    complete, -1 when it is no escape.  A high surrogate takes its low half with it, when one follows."""
    if i + 1 >= len(buf):
        return 0
    if buf[i + 1] != "u":
        return 2 if buf[i + 1] in '"\\/bfnrt' else -1
    if i + 6 > len(buf):
        return 0
    if not all(c in _HEX for c in buf[i + 2 : i + 6]):
        return -1
    if 0xD800 <= int(buf[i + 2 : i + 6], 16) <= 0xDBFF:
        if i + 12 > len(buf) and buf[i + 6 : i + 8] in ("", "\\", "\\u"):
            return 0
        if buf[i + 6 : i + 8] == "\\u" and all(c in _HEX for c in buf[i + 8 : i + 12]):
            return 12
    return 6


class EnvelopeMachine(TurnMachine):
    """Reasoning in its markers, then the reply's JSON object, then the turn's end."""

    def __init__(self, spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> None:
        env = spec.envelope
        self.texts = {m.key: m.holds for m in env.members if m.holds in ("content", "reasoning")}
        self.calls_key = env.key("calls")
        super().__init__(spec, tools, options, None)

    # ------------------------------------------------------------------------------------------ the object
    def run(self) -> Gen[None]:
        """A continued message starts inside its text member (the prompt wrote the object up to it: stage
        ``answer`` or ``reasoning``, :meth:`~workbench.runtime.spec.FormatSpec.output_start_stage`);
        anything else starts as a turn does."""
        holds = {"answer": "content", "reasoning": "reasoning"}.get(self.options.start_stage or "")
        if holds is not None and holds in self.texts.values():
            self.emit("marker", self._silent)  # the prompt wrote the object's start: no output of the model's
            yield from self._string(holds)
            yield from self._members(first=False)
            yield from super().content()
            return
        yield from super().run()

    def content(self) -> Gen[None]:
        opened = yield from self.lookahead(_open)
        if opened is not None:
            self.emit_spans(opened[0].spans)
            yield from self._members()
        yield from super().content()  # the turn's end, and any text the model wrote after the object

    def _members(self, *, first: bool = True) -> Gen[None]:
        while True:
            head = yield from self.lookahead(_head_reader(first))
            if head is None:  # not a member: the rest is read as plain text
                self.out.diagnose("E-ENVELOPE", "the reply's JSON object is not well formed", self.offset())
                return
            self.emit_spans(head[0].spans)
            key, first = head[1], False
            if key is None:
                return
            holds = self.texts.get(key)
            if holds is not None:
                yield from self._text(holds)
            elif key == self.calls_key and self.options.parse_tools:
                yield from self._calls()
            else:
                yield from self._skip()

    def _text(self, holds: str) -> Gen[None]:
        """A text member: a JSON string streamed into the message decoded (reasoning goes to the content
        when reasoning is not extracted); any other value holds no text."""
        kind = holds if holds == "content" or self.options.extract_reasoning else "content"
        start = yield from self.lookahead(_value_start)
        if start is None or start[1] != '"':
            yield from self._skip()
            return
        self.emit_spans(start[0].spans)
        self.emit("marker", 1)
        yield from self._string(kind)

    def _string(self, kind: str) -> Gen[None]:
        """A JSON string's body and its closing quote, decoded into ``kind``."""
        while True:
            buf, i = self.buf, self.pos
            stop = _QUOTE_OR_ESCAPE.search(buf, i)
            j = stop.start() if stop is not None else len(buf)
            if j > i:
                self.record(kind, self.emit(kind, j - i))
            if j >= len(buf):
                if self.final:
                    self.truncated("a text of the reply's JSON object")
                    return
                yield from self.wait()
                continue
            if buf[j] == '"':
                self.emit("marker", 1)
                return
            n = _escape_length(buf, j)
            if n == 0 and not self.final:
                yield from self.wait()
                continue
            if n <= 0:  # a stray backslash (or one the output ends on): kept as written
                self.record(kind, self.emit(kind, 1))
                continue
            raw = self.emit(kind, n)
            self.record(kind, json.loads('"' + raw + '"'))

    def _calls(self) -> Gen[None]:
        start = yield from self.lookahead(_value_start)
        if start is None:
            return
        self.emit_spans(start[0].spans)
        if start[1] == "{":
            yield from self._call()
            return
        if start[1] != "[":
            yield from self._skip()
            return
        self.emit("marker", 1)
        first = True
        while True:
            item = yield from self.lookahead(_item_reader(first))
            if item is None:
                self.out.diagnose("E-ENVELOPE", "the reply's list of calls is not well formed", self.offset())
                return
            self.emit_spans(item[0].spans)
            if not item[1]:
                return
            first = False
            yield from self._call()

    def _call(self) -> Gen[None]:
        """One call object, read whole, then recorded as the tools spec's fields say."""
        status, raw = yield from self._value()
        if status == MORE:
            self.truncated("a tool call of the reply's JSON object")
            return
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's JSON decoder goes
            self.out.diagnose(
                "E-CALL-SCHEMA", "a tool call that is not valid JSON was left out", self.offset()
            )
            return
        fields = self.spec.tools
        outer = value if isinstance(value, dict) else {}
        if fields.function_field and isinstance(outer.get(fields.function_field), dict):
            value = outer[fields.function_field]  # OpenAI's {"id": ..., "function": {"name": ...}}
        if fields.fun_name_is_key and isinstance(value, dict) and len(value) == 1:
            name, args0 = next(iter(value.items()))  # {"NAME": ARGS}
            value = {fields.name_field or "name": name, fields.args_field or "arguments": args0}
        name = value.get(fields.name_field or "name") if isinstance(value, dict) else None
        if not isinstance(name, str):
            self.out.diagnose("E-CALL-SCHEMA", "a tool call without a name was left out", self.offset())
            return
        if self.tools is not None and not self.known_tool(name):
            self.unknown_tool(name)
            return
        if self.spec.envelope.flat_calls:  # the arguments beside the name
            skip = {fields.name_field or "name", fields.id_field}
            args: Any = {k: v for k, v in value.items() if k not in skip}
        else:
            args = value.get(fields.args_field or "arguments", {})
        if isinstance(args, str):
            with contextlib.suppress(ValueError, RecursionError):  # a JSON string of the arguments (xLAM's)
                args = json.loads(args)
        call_id = (outer.get(fields.id_field) or value.get(fields.id_field)) if fields.id_field else ""
        call = self.open_call(name, call_id if isinstance(call_id, str) else "")
        call.add_args(json.dumps(args, ensure_ascii=False))
        call.closed = True
        self.check_schema(call)

    def _skip(self) -> Gen[None]:
        """A value that holds nothing for the message: read as JSON, released as markers."""
        status, _ = yield from self._value()
        if status == MORE:
            self.truncated("the reply's JSON object")

    def _value(self) -> Gen[tuple[str, str]]:
        """One JSON value, released as markers; (status, its text)."""
        scanner = JsonValueScanner()
        raw: list[str] = []
        while True:
            i, status = scanner.advance(self.buf, self.pos, self.final)
            raw.append(self.emit("marker", i - self.pos))
            if status == MORE and not self.final:
                yield from self.wait()
                continue
            return (status if status in (DONE, MORE) else "bad"), "".join(raw)


def turn_machine(spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> EnvelopeMachine:
    return EnvelopeMachine(spec, tools, options)


__all__ = ["EnvelopeMachine", "turn_machine"]
