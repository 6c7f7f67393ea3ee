"""The message as parsed so far: append-only logs of content, reasoning and tool calls.

Everything here only grows (text is never retracted), which is what lets
:mod:`workbench.runtime.parsing.deltas` turn growth into OpenAI ``chat.completion.chunk`` deltas by
remembering list lengths, and lets ``current()`` be cheap.  The one exception is a call whose arguments turn
out to be invalid JSON when it closes: it stays in the log (its deltas were sent) but is marked ``dropped``
and left out of the message (DeepSeek RFC §3.2.6: drop it, keep its siblings).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.runtime.chat import Message, ToolCall
from workbench.runtime.events import Diagnostic


@dataclass
class CallLog:
    """One tool call under construction.

    ``index`` is the tool index events and deltas use (0, 1, ... over calls that were opened).  ``args``
    holds the JSON text fragments in order; their concatenation is the arguments text.
    """

    index: int
    name: str | None = None
    id: str = ""
    args: list[str] = field(default_factory=list)
    closed: bool = False
    dropped: bool = False
    id_expected: bool = False
    #: Whether the call's own closing marker arrived (None: the format has none, ``closed`` decides).
    ended: bool | None = None
    #: Where the call's text starts in the recording of its tool section (``unclosed_calls="content"``).
    record_at: int = 0

    @property
    def finished(self) -> bool:
        """The call is complete: its closing marker arrived, or (formats without one) its arguments ended."""
        return self.closed if self.ended is None else self.ended and self.closed

    @property
    def arguments(self) -> str:
        return "".join(self.args)

    def add_args(self, fragment: str) -> None:
        if fragment:
            self.args.append(fragment)


def _joined(cache: tuple[str, int], pieces: list[str]) -> tuple[str, int]:
    """``(text of the first n pieces, n)`` brought up to all ``pieces``: the views are read after every
    token, so each read joins only the pieces added since the last one."""
    text, n = cache
    if n != len(pieces):
        text += "".join(pieces[n:])
    return text, len(pieces)


class MessageBuilder:
    """Accumulates the message; see the module docstring."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[CallLog] = []
        self.diagnostics: list[Diagnostic] = []
        self._content_cache = ("", 0)
        self._reasoning_cache = ("", 0)

    def add_content(self, text: str) -> None:
        if text:
            self.content.append(text)

    def add_reasoning(self, text: str) -> None:
        if text:
            self.reasoning.append(text)

    def open_call(self, name: str | None = None, call_id: str = "") -> CallLog:
        call = CallLog(index=len(self.calls), name=name, id=call_id)
        self.calls.append(call)
        return call

    def diagnose(self, code: str, message: str, offset: int | None = None, severity: str = "warning") -> None:
        self.diagnostics.append(Diagnostic(code=code, message=message, offset=offset, severity=severity))

    # ------------------------------------------------------------------------------------------ views
    def content_text(self) -> str:
        self._content_cache = _joined(self._content_cache, self.content)
        return self._content_cache[0]

    def reasoning_text(self) -> str:
        self._reasoning_cache = _joined(self._reasoning_cache, self.reasoning)
        return self._reasoning_cache[0]

    def current(self) -> Message:
        """The message so far (does not change state).  Calls without a name yet are left out."""
        calls = tuple(
            ToolCall(name=c.name, arguments=c.arguments, id=c.id)
            for c in self.calls
            if c.name is not None and not c.dropped
        )
        content = self.content_text()
        reasoning = self.reasoning_text()
        return Message(
            role="assistant",
            content=content if content else None,
            reasoning_content=reasoning if reasoning else None,
            tool_calls=calls,
        )
