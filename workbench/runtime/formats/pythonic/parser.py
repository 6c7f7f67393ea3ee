"""``pythonic``: calls written as a Python list, ``[get_weather(city="Paris"), f()]``.

Llama 3.2/4 write the list bare (optionally inside ``<|python_start|>``...``<|python_end|>``); LFM2 wraps
it in ``<|tool_call_start|>``...``<|tool_call_end|>`` (the spec's section markers).  Keyword arguments only;
each value is a Python literal (strings in either quote, ``True``/``None``, lists, dicts), converted to JSON
when it ends.  A call with a value JSON cannot hold (``b'..'``, ``1e999``) is dropped; its siblings stay.

A bare ``[`` is a weak trigger: the whole list is held back until its ``]`` and must be a Python list of
keyword-only calls with literal values, or it stays content (prose such as ``see [1]``, or vLLM's
"unrecoverable block" ``[f(a='x 'y')]``).  Inside ``<|python_start|>``-style section markers the list is
streamed at once.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import Gen
from workbench.runtime.parsing.lookahead import Fail, Look
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.parsing.tools_base import CUT, LONG, ToolParser
from workbench.runtime.spec import ToolsSpec
from workbench.runtime.values import NotJsonError, dumps, python_literal

_OUT_RX = re.compile(r"[\[\](){}\"',]")
_IDENT_RX = re.compile(r"[A-Za-z_]\w*")

DONE, MORE, BAD = "done", "more", "bad"
_CLOSE = {"[": "]", "(": ")", "{": "}"}


def _dotted_name_end(buf: str, i: int) -> int:
    """The end of the dotted identifier (``a.b.c``) starting at ``i``; ``i`` when none starts there."""
    m = _IDENT_RX.match(buf, i)
    if m is None:
        return i
    end = m.end()
    while end < len(buf) and buf[end] == ".":
        m = _IDENT_RX.match(buf, end + 1)
        if m is None:
            break
        end = m.end()
    return end


class PyValueScanner:
    """Finds the end of one Python literal argument (before a top-level ``,`` or ``)``), incrementally."""

    __slots__ = ("esc", "quote", "stack")

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.quote = ""
        self.esc = False

    def advance(self, buf: str, i: int, final: bool) -> tuple[int, str]:
        n = len(buf)
        while i < n:
            if self.esc:
                self.esc = False
                i += 1
                continue
            if self.quote:
                j = buf.find(self.quote, i)
                k = buf.find("\\", i)
                if k != -1 and (j == -1 or k < j):
                    self.esc = True
                    i = k + 1
                    continue
                if j == -1:
                    return n, MORE
                self.quote = ""
                i = j + 1
                continue
            m = _OUT_RX.search(buf, i)
            if m is None:
                return n, MORE
            j = m.start()
            ch = buf[j]
            if ch in "\"'":
                self.quote = ch
                i = j + 1
            elif ch in "[({":
                self.stack.append(_CLOSE[ch])
                i = j + 1
            elif ch in "])}":
                if not self.stack:
                    return j, DONE if ch == ")" else BAD
                if self.stack.pop() != ch:
                    return j, BAD
                i = j + 1
            elif ch == ",":
                if not self.stack:
                    return j, DONE
                i = j + 1
        return n, MORE


class ListEndScanner:
    """Finds the ``]`` that closes a list of calls starting at ``[``, incrementally (see :meth:`advance`)."""

    __slots__ = ("bad", "inner", "started")

    def __init__(self) -> None:
        self.inner = PyValueScanner()
        self.started = False
        self.bad = False

    def advance(self, buf: str, i: int, final: bool) -> tuple[int, bool]:
        """``(index reached, ended)``; ``bad`` is set when the brackets do not balance as a list."""
        if not self.started:
            self.started = True
            i += 1  # the "["
        while True:
            j, status = self.inner.advance(buf, i, final)
            if status == MORE:
                return j, False
            ch = buf[j]
            if status == DONE and ch == ",":  # between two elements
                i = j + 1
                continue
            self.bad = not (status == BAD and ch == "]")
            return j + 1, True


def is_call_list(text: str) -> bool:
    """True when ``text`` is a Python list of keyword-only calls whose values are literals (Python's, or
    JSON's ``true``/``false``/``null`` spellings, which templates that write values with ``tojson`` print)."""
    source = text.strip()
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    body = tree.body
    if not isinstance(body, ast.List) or not body.elts:
        return False
    for element in body.elts:
        if not isinstance(element, ast.Call) or element.args:
            return False
        func = element.func
        while isinstance(func, ast.Attribute):
            func = func.value
        if not isinstance(func, ast.Name):
            return False
        for keyword in element.keywords:
            if keyword.arg is None:
                return False
            try:
                ast.literal_eval(keyword.value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                segment = ast.get_source_segment(source, keyword.value)
                try:
                    python_literal(segment or "")
                except NotJsonError:
                    return False
    return True


@dataclass
class PyHeader:
    spans: list[list[Any]]
    name: str
    strong: bool


class PythonicParser(ToolParser):
    name = "pythonic"
    weak_trigger = True

    def setup(self, t: ToolsSpec) -> None:
        self.sec_start = core_of(t.section_start) or core_of(t.call_start)
        self.sec_end = core_of(t.section_end) or core_of(t.call_end)

    @property
    def has_closing_markers(self) -> bool:
        return bool(self.sec_end)

    def trigger_cores(self) -> list[str]:
        return [c for c in (self.sec_start, "[") if c]

    def _call_head(self, look: Look) -> str:
        """``name(`` where the name may be dotted (``weather.get_current``).

        Streamed, the buffer may end right after an identifier or a dot: either may still grow into a longer
        dotted name, so the lookahead asks for more instead of deciding on a prefix of the name.
        """
        look.ws()
        name_end = _dotted_name_end(look.buf, look.i)
        if name_end == look.i:
            if look.at_end():
                look.need()
            raise Fail
        if name_end >= len(look.buf) or (look.buf[name_end] == "." and name_end + 1 >= len(look.buf)):
            look.need()
        name = look.buf[look.i : name_end]
        look.span("tool_name", name_end - look.i)
        look.ws()
        look.char("(")
        return name

    def _first(self, look: Look) -> PyHeader:
        strong = bool(self.sec_start) and look.opt(self.sec_start)
        if strong:
            look.ws()
        look.char("[")
        name = self._call_head(look)
        if not strong and not self.m.known_tool(name, strict=True):
            raise Fail
        return PyHeader(look.spans, name, strong)

    def _next(self, look: Look) -> PyHeader:
        look.ws()
        look.char(",")
        name = self._call_head(look)
        return PyHeader(look.spans, name, True)

    def header(self, lead: int) -> Gen[PyHeader | None]:
        found = yield from self.m.lookahead(self._first, lead=lead)
        if found is None:
            return None
        if not found[1].strong:
            scanner = ListEndScanner()
            state, text = yield from self.hold_whole(lead, scanner.advance)
            if (state == CUT and scanner.bad) or (state not in (CUT, LONG) and not is_call_list(text)):
                return None
        return found[1]

    def section(self, header: PyHeader) -> Gen[None]:
        m = self.m
        h: PyHeader | None = header
        while h is not None:
            call: CallLog | None = None
            if m.known_tool(h.name):
                call = m.open_call(h.name)
            else:
                m.unknown_tool(h.name)
            m.emit_spans(h.spans, call.index if call is not None else None)
            complete = yield from self._arguments(call)
            if not complete:
                return
            found = yield from m.lookahead(self._next)
            h = found[1] if found is not None else None
        closed = yield from m.opt_marker("]")
        if closed and self.sec_end:
            yield from m.opt_marker(self.sec_end)

    def _key(self, look: Look, first: bool) -> str | None:
        look.ws("tool_args")
        if look.opt(")", "marker"):
            return None
        if not first:
            look.char(",", "tool_args")
            look.ws("tool_args")
            if look.opt(")", "marker"):
                return None
        m = _IDENT_RX.match(look.buf, look.i)
        if m is None:
            if look.at_end():
                look.need()
            raise Fail
        if m.end() >= len(look.buf):
            look.need()
        key = m.group(0)
        look.span("tool_args", len(key))
        look.ws("tool_args")
        look.char("=", "tool_args")
        look.ws("tool_args")
        return key

    def _arguments(self, call: CallLog | None) -> Gen[bool]:
        """Keyword arguments up to ``)``; False when the input ended inside them."""
        m = self.m
        index = call.index if call is not None else None
        kind = "tool_args" if call is not None else "marker"
        first = True
        broken = False
        while True:
            found = yield from m.lookahead(partial(self._key, first=first))
            if found is None:
                if m.final and not m.buf[m.pos :].strip():
                    m.truncated("a call")
                    return False
                if call is not None:
                    m.drop_call(call, "not a keyword-argument call")
                return not (m.final and m.pos >= len(m.buf))
            look, key = found
            m.emit_spans(look.spans, index)
            if key is None:
                break
            if call is not None and not broken:
                call.add_args(("{" if first else ", ") + dumps(key) + ": ")
            first = False
            scanner = PyValueScanner()
            raw: list[str] = []
            while True:
                i, status = scanner.advance(m.buf, m.pos, m.final)
                text = m.emit(kind, i - m.pos, index)
                raw.append(text)
                if status == MORE:
                    if m.final:
                        m.truncated("a call")
                        return False
                    yield from m.wait()
                    continue
                break
            if status == BAD:
                if call is not None:
                    m.drop_call(call, "unbalanced brackets in an argument")
                return True
            if call is not None and not broken:
                try:
                    call.add_args(dumps(python_literal("".join(raw))))
                except (NotJsonError, ValueError):
                    broken = True
        if call is not None:
            if broken:
                m.drop_call(call, "an argument is not a literal JSON can hold")
            else:
                call.add_args("}" if not first else "{}")
                call.closed = True
                m.check_schema(call)
        return True
