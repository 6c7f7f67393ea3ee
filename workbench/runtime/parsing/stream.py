"""The public streaming parser: ``feed`` chunks, get events; ``finish`` for the message.

One-shot parsing is the same machine fed once, so a one-shot parse and any chunking of a stream give the
same message (the property tests check it).  The machine itself is chosen by the spec's tool format (see
:mod:`workbench.runtime.parsing.machine`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workbench.runtime.chat import Message, Tool
from workbench.runtime.events import Diagnostic, Event
from workbench.runtime.parsing.machine import build_machine
from workbench.runtime.parsing.options import ParseOptions, ParseResult
from workbench.runtime.spec import FormatSpec

#: Chunks joined into one piece of the remembered text (see ``StreamParser._remember``).
_FED_GROUP = 1024


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
        # The text fed so far, for ``restore``: pieces of up to _FED_GROUP chunks joined together, so a
        # stream fed a few characters at a time does not keep millions of tiny string objects alive.
        self._fed: list[str] = []
        self._tail = 0  # chunks in the last piece of _fed that is still growing
        self._chunks = 0
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
        self._remember(text)
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
        """The append-only message log (read by :mod:`workbench.runtime.parsing.deltas`)."""
        return self._machine.out

    # ------------------------------------------------------------------------------------------ rewind
    def _remember(self, text: str) -> None:
        self._fed.append(text)
        self._tail += 1
        if self._tail >= _FED_GROUP:  # join the last group: linear overall, one object per group kept
            self._fed[-self._tail :] = ["".join(self._fed[-self._tail :])]
            self._tail = 0
        self._chunks += 1
        self._chars += len(text)

    def snapshot(self) -> Snapshot:
        """A mark to :meth:`restore` to later (O(1): the parser keeps the text it was fed)."""
        return Snapshot(self._chunks, self._chars)

    def restore(self, snap: object) -> None:
        """Return to the state right after the input marked by ``snap`` was fed.

        The text is re-parsed from the start (O(n), as rare as a rewind is); the state reached does not depend
        on how the text was chunked, so this is exactly the state the snapshot was taken in.
        """
        if not isinstance(snap, Snapshot) or snap.chunks > self._chunks or snap.chars > self._chars:
            raise ValueError("not a snapshot of this parser")
        text = "".join(self._fed)[: snap.chars]
        self._fed, self._tail, self._chunks, self._chars = [], 0, 0, 0
        self._machine = build_machine(self.spec, self.tools, self.options)
        self._result = None
        self.final_events = []
        if text:
            self.feed(text)
        self._fed, self._tail, self._chunks, self._chars = (
            ([text] if text else []),
            0,
            snap.chunks,
            snap.chars,
        )


def parse(
    spec: FormatSpec,
    text: str,
    tools: Sequence[Tool] | None = None,
    options: ParseOptions | None = None,
) -> ParseResult:
    """Parse a complete output in one shot (the streaming machine fed once).

    Nobody reads the events of a one-shot parse, so the machine keeps none: for a long output they were
    most of the objects the parse allocated (and the garbage collector scanned).
    """
    parser = StreamParser(spec, tools, options=options)
    parser._machine.keep_events = False
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
