"""Bounded, side-effect-free lookahead: decide whether a tool-call header is really there before emitting it.

A trigger such as ``<tool_call>`` or ``[`` only *may* start a tool call: the header after it (section and
call markers, the function name, a call id) has to be read before the parser commits, because once text is
emitted as a tool call it can never be taken back.  :class:`Look` walks the unreleased buffer from a start
offset, records every span it would emit (kind + length), and signals :class:`More` when the buffer ends
before a decision is possible or :class:`Fail` when the text is not a header.  The walk never goes further
than ``limit`` characters, so re-running it after each new chunk stays O(1) per chunk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

# A function name outside JSON: letters, digits, "_-.:/@$" (so "functions.get_weather:0" is one token;
# markup characters such as "<", ">", "(", "\"", "｜" end it).
NAME_RX = re.compile(r"[\w\-.:/@$]+")
WS_RX = re.compile(r"\s*")
# Whitespace, or the two-character escapes a model writing JSON-escaped text uses for it.
ESCAPED_WS_RX = re.compile(r"(?:\s|\\[nrt])*")


class More(Exception):
    """The buffer ended before the lookahead could decide (never raised once the input is final)."""


class Fail(Exception):
    """The text at the lookahead position is not what was expected."""


class Look:
    """A cursor over ``buf`` from ``start`` that records the spans it would emit.

    Does not change any parser state: it only reads ``buf``.  Spans are ``[kind, length]`` pairs in input
    order; consecutive spans of one kind are merged.
    """

    __slots__ = ("buf", "final", "i", "limit", "spans", "start", "values")

    def __init__(self, buf: str, start: int, final: bool, limit: int = 512) -> None:
        self.buf = buf
        self.start = start
        self.i = start
        self.final = final
        self.limit = limit
        self.spans: list[list[object]] = []
        self.values: dict[str, str] = {}

    # ------------------------------------------------------------------------------------------ helpers
    @property
    def length(self) -> int:
        return self.i - self.start

    def need(self) -> None:
        """Signal that more input is needed (or fail when there will be none)."""
        if self.final or self.i - self.start > self.limit:
            raise Fail
        raise More

    def at_end(self) -> bool:
        return self.i >= len(self.buf)

    def span(self, kind: str, n: int) -> None:
        if n <= 0:
            return
        if self.spans and self.spans[-1][0] == kind:
            self.spans[-1][1] = int(self.spans[-1][1]) + n  # type: ignore[call-overload]
        else:
            self.spans.append([kind, n])
        self.i += n
        if self.i - self.start > self.limit:
            raise Fail

    # ------------------------------------------------------------------------------------------ matchers
    def ws(self, kind: str = "marker") -> int:
        """Consume any whitespace (possibly none); returns how much."""
        m = WS_RX.match(self.buf, self.i)
        n = m.end() - self.i if m else 0
        self.span(kind, n)
        return n

    def ws_escaped(self, kind: str = "marker") -> int:
        """Like :meth:`ws`, also consuming the literal escapes ``\\n``, ``\\r``, ``\\t``."""
        m = ESCAPED_WS_RX.match(self.buf, self.i)
        j = m.end() if m else self.i
        if j == len(self.buf) - 1 and self.buf[j] == "\\":
            self.need()  # a backslash at the end may still become an escape
        n = j - self.i
        self.span(kind, n)
        return n

    def peek(self, core: str) -> bool:
        """True when ``core`` starts here; More when the buffer ends inside a possible match."""
        if not core:
            return False
        seg = self.buf[self.i : self.i + len(core)]
        if seg == core:
            return True
        if len(seg) < len(core) and core.startswith(seg):
            self.need()
        return False

    def opt(self, core: str, kind: str = "marker") -> bool:
        """Consume ``core`` if it is here; False (nothing consumed) when it is not."""
        if self.peek(core):
            self.span(kind, len(core))
            return True
        return False

    def lit(self, core: str, kind: str = "marker") -> None:
        """Consume ``core`` or fail."""
        if not self.opt(core, kind):
            raise Fail

    def opt_ws_then(self, core: str, kind: str = "marker") -> bool:
        """Consume optional whitespace followed by ``core``; consume nothing when ``core`` is absent."""
        if not core:
            return False
        save_i, save_spans = self.i, [list(s) for s in self.spans]
        self.ws(kind)
        if self.opt(core, kind):
            return True
        self.i, self.spans = save_i, save_spans
        return False

    def char(self, chars: str, kind: str = "marker") -> str:
        """Consume one character out of ``chars`` or fail."""
        if self.at_end():
            self.need()
        ch = self.buf[self.i]
        if ch not in chars:
            raise Fail
        self.span(kind, 1)
        return ch

    def name(self, kind: str = "tool_name", maxlen: int = 256) -> str:
        """Consume a function name (see NAME_RX); More while it may still continue at the buffer end."""
        m = NAME_RX.match(self.buf, self.i)
        j = m.end() if m else self.i
        if j - self.i > maxlen:
            raise Fail
        if j >= len(self.buf):
            self.need()
        if j == self.i:
            raise Fail
        text = self.buf[self.i : j]
        self.span(kind, j - self.i)
        return text

    def until_first(self, cores: Sequence[str], kind: str, maxlen: int = 256) -> str:
        """Consume text up to (not including) the first of ``cores`` to appear; fails beyond ``maxlen``
        characters.  Everything before the first one found is in the buffer, so no other can come
        earlier: the answer is final as soon as one is found."""
        found = [k for k in (self.buf.find(c, self.i) for c in cores if c) if k >= 0]
        if not found:
            if len(self.buf) - self.i > maxlen:
                raise Fail
            self.need()
        k = min(found)
        if k - self.i > maxlen:
            raise Fail
        text = self.buf[self.i : k]
        self.span(kind, k - self.i)
        return text

    def find_within(self, core: str, maxlen: int) -> int:
        """Where ``core`` next starts, at most ``maxlen`` characters on: fails beyond, waits for more input
        while it may still come.  The bound keeps a header that never ends from holding text back for ever."""
        k = self.buf.find(core, self.i)
        if k < 0:
            if len(self.buf) - self.i > maxlen:
                raise Fail
            self.need()
        if k - self.i > maxlen:
            raise Fail
        return k

    def until(self, core: str, kind: str, maxlen: int = 256) -> str:
        """Consume text up to (not including) ``core``; fails beyond ``maxlen`` characters."""
        k = self.find_within(core, maxlen)
        text = self.buf[self.i : k]
        self.span(kind, k - self.i)
        return text

    def skip_to(self, core: str, maxlen: int = 64, forbid: tuple[str, ...] = ()) -> None:
        """Skip up to ``maxlen`` characters of filler (as markers) to reach ``core`` and consume it.

        Fails when a ``forbid`` marker comes first: filler is tolerated, skipping structure is not.
        """
        k = self.buf.find(core, self.i, self.i + maxlen + len(core))
        if k < 0:
            if len(self.buf) - self.i < maxlen + len(core):
                self.need()
            raise Fail
        filler = self.buf[self.i : k]
        if any(f and f in filler for f in forbid):
            raise Fail
        self.span("marker", k - self.i)
        self.span("marker", len(core))

    def json_string(self, kind: str, maxlen: int = 512) -> str:
        """Consume a complete JSON string literal (quotes as markers, body as ``kind``); return it decoded."""
        if self.at_end():
            self.need()
        if self.buf[self.i] != '"':
            raise Fail
        j = self.i + 1
        n = len(self.buf)
        while True:
            if j >= n:
                if j - self.i > maxlen:
                    raise Fail
                self.need()
            ch = self.buf[j]
            if ch == "\\":
                j += 2
                continue
            if ch == '"':
                break
            if ch == "\n" or j - self.i > maxlen:
                raise Fail
            j += 1
        raw = self.buf[self.i : j + 1]
        try:
            value = json.loads(raw)
        except ValueError:
            raise Fail from None
        body = j - self.i - 1
        self.span("marker", 1)
        self.span(kind, body)
        self.span("marker", 1)
        return str(value)
