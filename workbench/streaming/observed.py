"""What a parse run produced, in the one shape the checking rules read.

A run ends either with a finished parse or with the partial parse of what was fed so far (``current()``,
from which OpenAI deltas are computed); both are :class:`~workbench.runtime.chat.Message` values, reduced here
to :class:`Observed` so the checking rules never care how the result was obtained.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.runtime.chat import Message
from workbench.runtime.events import Diagnostic


@dataclass(frozen=True)
class ObservedCall:
    """One tool call as the client sees it; ``arguments`` is the JSON *text* (possibly cut off)."""

    name: str
    arguments: str = ""
    id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments, "id": self.id}


@dataclass(frozen=True)
class Observed:
    """A parse result reduced to what conformance cases assert on.

    ``None`` for content or reasoning means the run produced none (vLLM's convention); the checking rules
    decide whether that differs from ``""``.  ``reasoning_ended`` is only computed for cases that ask
    (``is_reasoning_end``).
    """

    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: tuple[ObservedCall, ...] = ()
    reasoning_ended: bool | None = None
    diagnostics: tuple[str, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
        }
        if self.reasoning_ended is not None:
            out["is_reasoning_end"] = self.reasoning_ended
        if self.diagnostics:
            out["diagnostics"] = list(self.diagnostics)
        return out


def observed_from_message(message: Message, diagnostics: Iterable[Diagnostic] = ()) -> Observed:
    """From a parse's ``Message`` (finished, or the partial one ``current()`` returns)."""
    calls = tuple(ObservedCall(name=c.name, arguments=c.arguments, id=c.id) for c in message.tool_calls)
    return Observed(
        content=message.content,
        reasoning_content=message.reasoning_content,
        tool_calls=calls,
        diagnostics=tuple(d.code for d in diagnostics),
    )


def show(value: Any, limit: int = 160) -> str:
    """A short printable form of a value for difference messages."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
