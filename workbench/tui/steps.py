"""The step stream between the engine (worker threads) and the views (UI thread).

Workers produce :class:`~workbench.generation.step.Step` records at model speed; the views draw at screen
speed.
:class:`StepLog` is the hand-over point: workers append and truncate under a lock, views read what they have
not seen yet.  Because the log holds every step, the "steps advanced" message the UI receives can be
coalesced (``can_replace``) without losing anything.

A *driver* is what the inspector's controls act on: either a live generator from ``workbench.generation`` or a
recorded session replayed step by step with no model loaded.  Both are only called from worker threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from workbench.generation.step import Step
from workbench.runtime.chat import Message
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.parsing import StreamParser

if TYPE_CHECKING:  # the engine pulls in the grammar stack; a replay-only TUI never needs it
    from workbench.generation.generate import Generator
    from workbench.generation.why import GrammarPosition, StringTest, WhyAnswer

NO_MATCHER = "a recorded session has no grammar matcher: load a model and generate to ask the grammar"


class ControlRefused(WorkbenchError, RuntimeError):
    """A control cannot be applied (e.g. forcing a token in a replay); the message says why."""


@dataclass(frozen=True)
class LogView:
    """What a view needs to catch up: new steps since it last looked, or a rebuild after a rewind."""

    epoch: int
    total: int
    new: tuple[Step, ...]
    rebuilt: bool


class StepLog:
    """Thread-safe, append-mostly record of the current generation's steps.

    ``epoch`` changes whenever earlier steps are dropped (rewind, new generation), so a view that kept an
    incremental rendering knows it must start over.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: list[Step] = []
        self._times: list[float] = []
        self._epoch = 0
        self.message: Message | None = None
        self.diagnostics: tuple[str, ...] = ()
        # Text the parser holds back after the last step (a marker or call being written): the output pane
        # draws it as pending, since no event has released it yet.
        self.pending = ""

    # ------------------------------------------------------------------ mutating (worker threads)
    def append(self, step: Step) -> int:
        with self._lock:
            self._steps.append(step)
            self._times.append(time.perf_counter())
            return len(self._steps)

    def record(
        self, step: Step, message: Message | None, diagnostics: tuple[str, ...] = (), *, pending: str = ""
    ) -> int:
        """Append a step with the parsed message so far (``None`` keeps the previous one) and the text still
        held back; the total."""
        with self._lock:
            self._steps.append(step)
            self._times.append(time.perf_counter())
            if message is not None:
                self.message = message
            if diagnostics:
                self.diagnostics = diagnostics
            self.pending = pending
            return len(self._steps)

    def truncate(self, n: int, message: Message | None = None, *, pending: str = "") -> int:
        """Keep the first ``n`` steps (a rewind), with the message re-parsed for them; the new total."""
        with self._lock:
            if n < len(self._steps):
                del self._steps[n:]
                del self._times[n:]
                self._epoch += 1
                self.diagnostics = ()
            if message is not None and self.message is not None:
                self.message = message
            self.pending = pending
            return len(self._steps)

    def reset(self, steps: Sequence[Step] = ()) -> None:
        with self._lock:
            self._steps = list(steps)
            self._times = [time.perf_counter()] * len(self._steps)
            self._epoch += 1
            self.message = None
            self.diagnostics = ()
            self.pending = ""

    # ------------------------------------------------------------------ reading (UI thread; no state change)
    @property
    def epoch(self) -> int:
        return self._epoch

    def __len__(self) -> int:
        return len(self._steps)

    def get(self, index: int) -> Step | None:
        with self._lock:
            return self._steps[index] if 0 <= index < len(self._steps) else None

    def all(self) -> tuple[Step, ...]:
        with self._lock:
            return tuple(self._steps)

    def view_since(self, seen: int, epoch: int) -> LogView:
        """Steps after ``seen`` when ``epoch`` still holds, else every step with ``rebuilt`` set."""
        with self._lock:
            if epoch != self._epoch or seen > len(self._steps):
                return LogView(self._epoch, len(self._steps), tuple(self._steps), True)
            return LogView(self._epoch, len(self._steps), tuple(self._steps[seen:]), False)

    def tokens_per_second(self, window: int = 32) -> float:
        """Recent generation speed, from the wall-clock times the steps arrived at."""
        with self._lock:
            times = self._times[-window:]
        if len(times) < 2 or times[-1] <= times[0]:
            return 0.0
        return (len(times) - 1) / (times[-1] - times[0])


class Driver(Protocol):
    """What the inspector controls act on.  Every method may block: call from a worker thread only."""

    label: str
    can_force: bool
    can_ask: bool  # has a live grammar matcher to answer "why" (a replay has none)

    @property
    def finished(self) -> bool: ...

    @property
    def pending(self) -> str: ...

    def prefill(self) -> None: ...

    def diagnostics(self) -> tuple[str, ...]: ...

    def jump_forward(self) -> list[Step]: ...

    def where(self, at: int | None = None) -> GrammarPosition: ...

    def why(self, token: str, at: int | None = None) -> WhyAnswer: ...

    def try_string(self, text: str, at: int | None = None) -> StringTest: ...

    @property
    def constrained(self) -> bool: ...

    def step(self) -> Step | None: ...

    def rewind(self, k: int) -> int: ...

    def force(self, token_id: int) -> Step: ...

    def set_constrained(self, on: bool) -> None: ...

    def message(self) -> Message: ...

    def token_id_for(self, text: str) -> int | None: ...


class ReplayDriver:
    """Steps through a recorded list of steps: no model, no tokenizer, the same controls where they apply.

    The message is the stream parser's, fed the text each step gave the parser when it was recorded
    (``Step.fed_text``), so a replay shows exactly what the live run showed, for every format.
    """

    can_force = False
    can_ask = False

    def __init__(
        self, steps: Sequence[Step], new_parser: Callable[[], StreamParser], *, label: str = "session replay"
    ) -> None:
        self._steps = list(steps)
        self._cursor = 0
        self._new_parser = new_parser
        self._parser = new_parser()
        self.label = label

    @property
    def finished(self) -> bool:
        return self._cursor >= len(self._steps)

    @property
    def constrained(self) -> bool:
        step = self._steps[self._cursor - 1] if self._cursor else (self._steps[0] if self._steps else None)
        return bool(step and step.constrained)

    @property
    def position(self) -> int:
        return self._cursor

    def step(self) -> Step | None:
        if self.finished:
            return None
        step = self._steps[self._cursor]
        self._cursor += 1
        self._parser.feed(step.fed_text)
        return step

    def rewind(self, k: int) -> int:
        self._cursor = max(0, self._cursor - max(0, k))
        self._parser = self._new_parser()
        for step in self._steps[: self._cursor]:
            self._parser.feed(step.fed_text)
        return self._cursor

    @property
    def pending(self) -> str:
        return str(self._parser.pending)

    def prefill(self) -> None:
        """Nothing to read: a replay has no prompt to run."""

    def diagnostics(self) -> tuple[str, ...]:
        return ()

    def force(self, token_id: int) -> Step:
        raise ControlRefused("a recorded session cannot be forced: load a model to generate live")

    def jump_forward(self) -> list[Step]:
        raise ControlRefused(NO_MATCHER)

    def where(self, at: int | None = None) -> GrammarPosition:
        raise ControlRefused(NO_MATCHER)

    def why(self, token: str, at: int | None = None) -> WhyAnswer:
        raise ControlRefused(NO_MATCHER)

    def try_string(self, text: str, at: int | None = None) -> StringTest:
        raise ControlRefused(NO_MATCHER)

    def set_constrained(self, on: bool) -> None:
        raise ControlRefused("a recorded session keeps its recorded constraint: load a model to change it")

    def message(self) -> Message:
        return self._parser.current()

    def token_id_for(self, text: str) -> int | None:
        return None


class GeneratorDriver:
    """Adapter from ``workbench.generation.generate.Generator`` to :class:`Driver` (no logic of its own)."""

    can_force = True
    can_ask = True

    def __init__(self, generator: Generator, tokenizer: Any, *, label: str) -> None:
        self._gen = generator
        self._tokenizer = tokenizer
        self.label = label
        self._constrained = bool(generator.constrain)

    @property
    def finished(self) -> bool:
        return bool(self._gen.finished)

    @property
    def constrained(self) -> bool:
        return self._constrained

    def step(self) -> Step | None:
        if self._gen.finished:
            return None
        step: Step = self._gen.step()
        return step

    def rewind(self, k: int) -> int:
        self._gen.rewind(k)
        return len(self._gen.steps)

    def force(self, token_id: int) -> Step:
        step: Step = self._gen.force(token_id)
        return step

    def set_constrained(self, on: bool) -> None:
        self._gen.set_constrained(on)
        self._constrained = on

    @property
    def pending(self) -> str:
        return self._gen.pending

    def prefill(self) -> None:
        self._gen.prefill()

    def diagnostics(self) -> tuple[str, ...]:
        """The finished message's diagnostics as ``CODE: message`` lines (a cut-off call says so here)."""
        result = self._gen.message()
        return tuple(f"{d.code}: {d.message}" for d in result.diagnostics)

    def jump_forward(self) -> list[Step]:
        return self._gen.apply_jump_forward()

    def _asked(self, at: int | None) -> Any:
        """The live generator (the next token), or the grammar replayed to step ``at``'s choice."""
        return self._gen if at is None else self._gen.position_before(at)

    def where(self, at: int | None = None) -> GrammarPosition:
        from workbench.generation import why

        return why.position(self._asked(at))

    def why(self, token: str, at: int | None = None) -> WhyAnswer:
        from workbench.generation import why

        return why.why_masked(self._asked(at), token)

    def try_string(self, text: str, at: int | None = None) -> StringTest:
        from workbench.generation import why

        return why.try_string(self._asked(at), text)

    def message(self) -> Message:
        message: Message = self._gen.message().message
        return message

    @property
    def prompt(self) -> str:
        """The rendered prompt the generator continues (recorded in a saved session)."""
        return self._gen.prompt

    def parse_settings(self) -> dict[str, bool]:
        """The parser options the generator's own ``message()`` uses, as session settings.

        A saved session is replayed with ``workbench.session.parse_options_for(settings)``; without these
        a prompt that opened reasoning would be replayed as if it had not, and the message would differ.
        """
        from workbench.generation.generate import parse_settings

        return parse_settings(self._gen)

    def token_id_for(self, text: str) -> int | None:
        """The id of ``text`` when it is exactly one token of the model's vocabulary."""
        tok = self._tokenizer
        if tok is None:
            return None
        vocab_id = tok.convert_tokens_to_ids(text) if hasattr(tok, "convert_tokens_to_ids") else None
        unk = getattr(tok, "unk_token_id", None)
        if isinstance(vocab_id, int) and vocab_id >= 0 and vocab_id != unk:
            return vocab_id
        ids = tok.encode(text, add_special_tokens=False)
        return int(ids[0]) if len(ids) == 1 else None
