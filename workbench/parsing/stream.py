"""The public streaming parser: ``feed`` chunks, get events; ``finish`` for the message.

One-shot parsing is the same machine fed once, so a one-shot parse and any chunking of a stream give the
same message (the property tests check it).  The machine itself is chosen by the spec's tool format (see
:mod:`workbench.parsing.registry`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workbench.chat import Message, Tool
from workbench.events import Diagnostic, Event
from workbench.parsing.options import ParseOptions, ParseResult
from workbench.parsing.registry import build_machine
from workbench.spec import FormatSpec


@dataclass(frozen=True)
class Snapshot:
    """An opaque mark in the stream: how many chunks (and characters) had been fed."""

    chunks: int
    chars: int


class StreamParser:
    """Parses one model output incrementally from a :class:`FormatSpec`.

    ``feed`` returns the events the new text released (text that may still be the start of a marker is held
    back until it is decided; nothing is ever retracted).  ``finish`` releases the rest and returns the
    message; the events it released are kept on :attr:`final_events`.
    """

    def __init__(
        self, spec: FormatSpec, tools: Sequence[Tool] | None = None, *, options: ParseOptions | None = None
    ) -> None:
        self.spec = spec
        # OpenAI-shaped dicts are accepted too (a bad one raises ChatDataError naming the problem).
        self.tools = (
            [t if isinstance(t, Tool) else Tool.from_openai(t) for t in tools] if tools is not None else None
        )
        self.options = options or ParseOptions()
        self._fed: list[str] = []
        self._chars = 0
        self._machine = build_machine(spec, self.tools, self.options)
        self._result: ParseResult | None = None
        self.final_events: list[Event] = []

    # ------------------------------------------------------------------------------------------ streaming
    def feed(self, text: str) -> list[Event]:
        """Add output text; returns the events it released (possibly none)."""
        if self._result is not None:
            raise RuntimeError("feed() after finish(): create a new StreamParser for a new output")
        if not text:
            return []
        self._fed.append(text)
        self._chars += len(text)
        self._machine.push(text)
        self._machine.resume()
        return self._machine.take_events()

    def finish(self) -> ParseResult:
        """Declare the output complete: release held text, close what is open, return the message."""
        if self._result is None:
            machine = self._machine
            machine.final = True
            machine.resume()
            self.final_events = machine.take_events()
            self._result = ParseResult(machine.out.current(), list(machine.out.diagnostics))
        return self._result

    @property
    def finished(self) -> bool:
        return self._result is not None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The diagnostics so far (does not change state)."""
        return list(self._machine.out.diagnostics)

    @property
    def pending(self) -> str:
        """Text fed but not released yet (it may still start a marker); does not change state."""
        return self._machine.unreleased

    def current(self) -> Message:
        """The message as parsed so far (does not change state)."""
        return self._machine.out.current()

    @property
    def builder(self) -> object:
        """The append-only message log (read by :mod:`workbench.parsing.deltas`)."""
        return self._machine.out

    # ------------------------------------------------------------------------------------------ rewind
    def snapshot(self) -> Snapshot:
        """A mark to :meth:`restore` to later (O(1): the parser keeps the text it was fed)."""
        return Snapshot(len(self._fed), self._chars)

    def restore(self, snap: object) -> None:
        """Return to the state right after the input marked by ``snap`` was fed.

        The text is re-parsed from the start (O(n), as rare as a rewind is); the state reached does not depend
        on how the text was chunked, so this is exactly the state the snapshot was taken in.
        """
        if not isinstance(snap, Snapshot) or snap.chunks > len(self._fed):
            raise ValueError("not a snapshot of this parser")
        kept = self._fed[: snap.chunks]
        self._fed = []
        self._chars = 0
        self._machine = build_machine(self.spec, self.tools, self.options)
        self._result = None
        self.final_events = []
        text = "".join(kept)
        if text:
            self.feed(text)
        self._fed = kept


def parse(
    spec: FormatSpec,
    text: str,
    tools: Sequence[Tool] | None = None,
    options: ParseOptions | None = None,
) -> ParseResult:
    """Parse a complete output in one shot (the streaming machine fed once)."""
    parser = StreamParser(spec, tools, options=options)
    parser.feed(text)
    return parser.finish()


def parse_events(
    spec: FormatSpec,
    chunks: Iterable[str],
    tools: Sequence[Tool] | None = None,
    options: ParseOptions | None = None,
) -> tuple[list[Event], ParseResult]:
    """Feed ``chunks`` in order; return every event (those ``finish`` released too) and the result."""
    parser = StreamParser(spec, tools, options=options)
    events: list[Event] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    result = parser.finish()
    events.extend(parser.final_events)
    return events, result
