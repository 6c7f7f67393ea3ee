"""Events and diagnostics: what streaming parsing yields and what every stage reports.

One ``Event`` per coloured span: the TUI colours characters by ``kind``, the CLI turns events into
OpenAI ``chat.completion.chunk`` deltas.  Concatenating the ``text`` of all events of a stream gives back
exactly the text that was fed (markers included, as ``marker`` events), which is what makes colouring
every character possible.
"""

from __future__ import annotations

from dataclasses import dataclass

EVENT_KINDS = ("reasoning", "content", "tool_name", "tool_args", "tool_id", "marker")


@dataclass(frozen=True)
class Event:
    kind: str
    text: str
    tool_index: int | None = None


@dataclass(frozen=True)
class Diagnostic:
    """A problem found while parsing or analysing; ``code`` is stable (tests and tools match on it)."""

    code: str
    message: str
    offset: int | None = None
    severity: str = "warning"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code, "message": self.message, "severity": self.severity}
        if self.offset is not None:
            out["offset"] = self.offset
        return out
