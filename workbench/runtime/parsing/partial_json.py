"""Incremental JSON value boundaries and the repair of a value cut off by a closing marker.

Tool-call arguments are streamed as they arrive, so the parser cannot wait for the whole value and then
call ``json.loads``: it needs to know, chunk by chunk, where the value ends.  :class:`JsonValueScanner`
counts brackets outside strings and resumes exactly where it stopped (no re-scan of earlier text).  It does
not validate: the complete text is validated once with ``json.loads`` when the value ends, which is linear
and exact.  When a closing marker (``</tool_call>``) interrupts an unfinished value, :meth:`closing_suffix`
gives the characters that would close it, which is how ``{"a": 1`` + ``</tool_call>`` is repaired (DeepSeek
RFC §3.2.6, step 2).
"""

from __future__ import annotations

import json
import re
from typing import Any

from workbench.runtime.parsing.markers import MarkerSet, marker_set

_STR_RX = re.compile(r'["\\]')
# Outside strings: a structural character, or a character that can never appear in JSON outside a string.
_OUT_RX = re.compile(r'[{}\[\]"]|[^\s,:0-9.eE+\-truefalsn{}\[\]"]')
_SCALAR_END_RX = re.compile(r"[^0-9A-Za-z.+\-]")
_WS_RX = re.compile(r"\s*")

MORE = "more"  # the value continues past the buffer end
DONE = "done"  # the value is complete
STOP = "stop"  # a terminator marker interrupted the value
BAD = "bad"  # the text does not start a JSON value


class JsonValueScanner:
    """Finds the end of one JSON value incrementally.

    ``advance`` mutates the scanner; call it with the buffer and the index to resume from, it returns the
    index reached and a status.  Text before the returned index has been read and may be released.
    """

    __slots__ = ("esc", "in_str", "invalid", "scalar", "stack", "started", "terminators", "top_string")

    def __init__(self, terminators: MarkerSet | None = None) -> None:
        self.terminators = terminators or marker_set(())
        self.stack: list[str] = []
        self.in_str = False
        self.esc = False
        self.started = False
        self.scalar = False
        self.invalid = False
        self.top_string = False

    def advance(self, buf: str, i: int, final: bool) -> tuple[int, str]:
        n = len(buf)
        stack = self.stack
        while i < n:
            if self.esc:
                self.esc = False
                i += 1
                continue
            if self.in_str:
                m = _STR_RX.search(buf, i)
                if m is None:
                    i = n
                    break
                j = m.start()
                if buf[j] == "\\":
                    self.esc = True
                    i = j + 1
                    continue
                self.in_str = False
                i = j + 1
                if not stack:
                    return i, DONE
                continue
            if not self.started:
                i = _WS_RX.match(buf, i).end()  # type: ignore[union-attr]
                if i >= n:
                    break
                ch = buf[i]
                if ch == "{":
                    stack.append("}")
                elif ch == "[":
                    stack.append("]")
                elif ch == '"':
                    self.in_str = True
                    self.top_string = True
                elif ch in "-0123456789tfn":
                    self.scalar = True
                else:
                    return i, BAD
                self.started = True
                i += 1
                continue
            if self.scalar and not stack:
                m = _SCALAR_END_RX.search(buf, i)
                if m is None:
                    i = n
                    break
                return m.start(), DONE
            m = _OUT_RX.search(buf, i)
            if m is None:
                i = n
                break
            j = m.start()
            ch = buf[j]
            if ch == '"':
                self.in_str = True
                i = j + 1
            elif ch == "{" or ch == "[":
                stack.append("}" if ch == "{" else "]")
                i = j + 1
            elif ch == "}" or ch == "]":
                if stack and stack[-1] == ch:
                    stack.pop()
                else:
                    self.invalid = True
                    if stack:
                        stack.pop()
                i = j + 1
                if not stack:
                    return i, DONE
            else:
                if self.terminators.match_at(buf, j) is not None:
                    return j, STOP
                if not final and self.terminators.could_start_at(buf, j):
                    return j, MORE
                self.invalid = True
                i = j + 1
        if final and self.scalar and not stack and self.started:
            return i, DONE
        return i, MORE

    @property
    def complete_at_top(self) -> bool:
        """True when nothing is open (used after a scalar ended at the buffer end)."""
        return self.started and not self.stack and not self.in_str

    def closing_suffix(self) -> str:
        """The characters that close every open string and container (does not change state)."""
        return ('"' if self.in_str else "") + "".join(reversed(self.stack))


def loads_or_none(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is valid JSON, else ``(False, None)``."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def repair(text: str, scanner: JsonValueScanner) -> str | None:
    """The arguments text made valid by closing what ``scanner`` saw open, or None when that is not enough.

    Trailing commas, colons and dangling escapes make the closed text invalid too; such values are not
    guessed at (dropping characters would rewrite what the model said).
    """
    if scanner.esc:
        return None
    candidate = text + scanner.closing_suffix()
    ok, _ = loads_or_none(candidate)
    return candidate if ok else None
