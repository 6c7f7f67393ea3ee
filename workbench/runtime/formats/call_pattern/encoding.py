"""A value encoding of its own (:class:`~workbench.runtime.spec.ValueEncoding`): write and read it.

Some 2026 templates write arguments as an object with bare keys and a special token around strings
(``{city:<|q|>Paris<|q|>,n:3}``).  That is neither JSON nor raw text, so it gets one writer and one reader,
shared by the parser, the sample writer and the grammar (which spells the same rules as EBNF): every value
the writer produces reads back equal.

The reader is a plain recursive descent over complete text; the parser calls it once the value's extent is
known (:class:`ExtentScanner` finds it incrementally, so the cost stays linear when text arrives in chunks).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from workbench.runtime.spec import ValueEncoding

_NUMBER_RX = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_SCALAR_RX = re.compile(r"[\w.+\-]+")
_BARE_KEY_RX = re.compile(r"[A-Za-z_$][\w$.\-]*")
#: Nesting deeper than this is refused (a diagnostic, never a RecursionError).
MAX_DEPTH = 64


class EncodingError(ValueError):
    """The text is not a value of the encoding; the message says where."""


def is_json_like(enc: ValueEncoding) -> bool:
    """True when the encoding is JSON itself (any spacing): plain JSON tools then apply."""
    return (
        enc.string_open == '"' and enc.string_close == '"' and enc.escape == "json" and enc.key_quote == '"'
    )


def write(value: Any, enc: ValueEncoding) -> str:
    """``value`` (a JSON value) in the encoding."""
    if isinstance(value, dict):
        members = [f"{_key(str(k), enc)}{enc.key_sep}{write(v, enc)}" for k, v in value.items()]
        return "{" + enc.item_sep.join(members) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + enc.item_sep.join(write(v, enc) for v in value) + "]"
    if isinstance(value, str):
        return enc.string_open + _escape(value, enc) + enc.string_close
    if isinstance(value, float) and not math.isfinite(value):
        raise EncodingError(f"{value!r} has no spelling in this encoding")
    return json.dumps(value)


def _key(key: str, enc: ValueEncoding) -> str:
    if enc.key_quote == '"':
        return json.dumps(key, ensure_ascii=False)
    return enc.key_quote + key + enc.key_quote


def _escape(text: str, enc: ValueEncoding) -> str:
    if enc.escape == "json":
        return json.dumps(text, ensure_ascii=False)[1:-1]
    return text


def read(text: str, enc: ValueEncoding) -> Any:
    """The JSON value ``text`` spells in the encoding (surrounding whitespace allowed).

    Raises:
        EncodingError: not a complete value, or text after it.
    """
    reader = _Reader(text, enc)
    reader.ws()
    value = reader.value(0)
    reader.ws()
    if reader.i != len(text):
        raise EncodingError(f"unexpected text after the value at offset {reader.i}")
    return value


class _Reader:
    def __init__(self, text: str, enc: ValueEncoding) -> None:
        self.text = text
        self.enc = enc
        self.i = 0

    def ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t\r\n":
            self.i += 1

    def expect(self, lit: str) -> None:
        if not lit:
            return
        if not self.text.startswith(lit, self.i):
            raise EncodingError(f"expected {lit!r} at offset {self.i}")
        self.i += len(lit)

    def sep(self, lit: str) -> bool:
        """Consume a separator (its spacing is lenient: models vary it)."""
        save = self.i
        self.ws()
        core = lit.strip()
        if core and self.text.startswith(core, self.i):
            self.i += len(core)
            self.ws()
            return True
        if not core and lit:
            return True
        self.i = save
        return False

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise EncodingError(f"nested deeper than {MAX_DEPTH} levels")
        t, i, enc = self.text, self.i, self.enc
        if t.startswith(enc.string_open, i):
            return self.string()
        if t.startswith("{", i):
            return self.obj(depth)
        if t.startswith("[", i):
            return self.arr(depth)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if t.startswith(word, i):
                self.i += len(word)
                return val
        m = _NUMBER_RX.match(t, i)
        if m is None:
            raise EncodingError(f"no value at offset {i}")
        self.i = m.end()
        return json.loads(m.group(0))

    def string(self) -> str:
        enc = self.enc
        self.expect(enc.string_open)
        if enc.escape == "none":
            end = self.text.find(enc.string_close, self.i)
            if end < 0:
                raise EncodingError("unterminated string")
            out = self.text[self.i : end]
            self.i = end + len(enc.string_close)
            return out
        j = self.i
        while True:
            if j >= len(self.text):
                raise EncodingError("unterminated string")
            if self.text[j] == "\\":
                j += 2
                continue
            if self.text.startswith(enc.string_close, j):
                break
            j += 1
        try:
            out = json.loads('"' + self.text[self.i : j] + '"')
        except ValueError as exc:
            raise EncodingError(f"bad escape in a string at offset {self.i}: {exc}") from None
        self.i = j + len(enc.string_close)
        return str(out)

    def key(self) -> str:
        q = self.enc.key_quote
        if q == '"':
            m = re.compile(r'"(?:[^"\\]|\\.)*"').match(self.text, self.i)
            if m is None:
                raise EncodingError(f"expected a quoted key at offset {self.i}")
            self.i = m.end()
            return str(json.loads(m.group(0)))
        if q:
            self.expect(q)
            end = self.text.find(q, self.i)
            if end < 0:
                raise EncodingError("unterminated key")
            out = self.text[self.i : end]
            self.i = end + len(q)
            return out
        m = _BARE_KEY_RX.match(self.text, self.i)
        if m is None:
            raise EncodingError(f"expected a key at offset {self.i}")
        self.i = m.end()
        return m.group(0)

    def obj(self, depth: int) -> dict[str, Any]:
        self.expect("{")
        self.ws()
        out: dict[str, Any] = {}
        if self.text.startswith("}", self.i):
            self.i += 1
            return out
        while True:
            self.ws()
            key = self.key()
            if not self.sep(self.enc.key_sep):
                raise EncodingError(f"expected {self.enc.key_sep.strip()!r} after key {key!r}")
            out[key] = self.value(depth + 1)
            if self.closed_or_next("}"):
                return out

    def arr(self, depth: int) -> list[Any]:
        self.expect("[")
        self.ws()
        out: list[Any] = []
        if self.text.startswith("]", self.i):
            self.i += 1
            return out
        while True:
            self.ws()
            out.append(self.value(depth + 1))
            if self.closed_or_next("]"):
                return out

    def closed_or_next(self, closer: str) -> bool:
        """After a member or an item: True when ``closer`` ends the container (consumed), False when the
        item separator follows (consumed); anything else is an error.  Objects and arrays share it."""
        self.ws()
        if self.text.startswith(closer, self.i):
            self.i += 1
            return True
        if not self.sep(self.enc.item_sep):
            raise EncodingError(f"expected {self.enc.item_sep.strip()!r} or {closer!r} at offset {self.i}")
        return False


class ExtentScanner:
    """Finds where one encoded value ends, fed the text incrementally (each character looked at once).

    ``advance(buf, i, final) -> (j, done)``: resumes at ``i``; ``done`` when the value ended at ``j`` (a
    top-level container closed, or a scalar ended).  Strings are skipped whole, so brackets inside them do
    not count.
    """

    def __init__(self, enc: ValueEncoding) -> None:
        self.enc = enc
        self.depth = 0
        self.in_string = False
        self.started = False
        self.escape = False

    def advance(self, buf: str, i: int, final: bool) -> tuple[int, bool]:
        enc = self.enc
        n = len(buf)
        while i < n:
            if self.in_string:
                if enc.escape == "json" and self.escape:
                    self.escape = False
                    i += 1
                    continue
                if enc.escape == "json" and buf[i] == "\\":
                    self.escape = True
                    i += 1
                    continue
                if buf.startswith(enc.string_close, i):
                    self.in_string = False
                    i += len(enc.string_close)
                    if self.depth == 0:
                        return i, True
                    continue
                # The length first: slicing ``buf[i:]`` at every character made a long string quadratic.
                if (
                    not final
                    and len(buf) - i < len(enc.string_close)
                    and enc.string_close.startswith(buf[i:])
                ):
                    return i, False  # a closer may be cut by the chunk boundary
                i += 1
                continue
            if not self.started and buf[i] in " \t\r\n":
                i += 1
                continue
            if buf.startswith(enc.string_open, i):
                self.started = True
                self.in_string = True
                i += len(enc.string_open)
                continue
            if not final and len(buf) - i < len(enc.string_open) and enc.string_open.startswith(buf[i:]):
                return i, False
            ch = buf[i]
            self.started = True
            if ch in "{[":
                self.depth += 1
            elif ch in "}]":
                self.depth -= 1
                if self.depth <= 0:
                    return i + 1, True
            elif self.depth == 0:
                m = _SCALAR_RX.match(buf, i)
                if m is None:
                    return i, True  # no value starts here (an empty slot): nothing to consume
                if m.end() < n or final:
                    return m.end(), True
                return i, final
            i += 1
        # At the end of the input: complete only when no value started (an empty slot); a value cut off
        # inside a string or a container is not done, and the caller reports the truncation.
        return i, final and not self.started
