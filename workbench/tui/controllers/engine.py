"""Driving the engine: starting a generation and the inspector's controls (step, run, rewind, force,
constraint).

Everything here runs in thread workers and talks to the UI only through ``post`` (the app's
``post_message``) and the thread-safe :class:`~workbench.tui.steps.StepLog`, which is the step channel: the
log holds every step, so the coalesced ``StepsAdvanced`` message loses nothing.  The controller never writes
a workspace field; a new driver reaches the workspace in a ``DriverReady`` message.  Failures are raised,
not reported here: the app handles every worker failure in one place (``workbench.tui.failures``).

One lock serialises the controls, so a step pressed during a run waits instead of racing it.  The
controller owns the current driver: a control acts on whatever driver is current when it gets the lock, so
a step pressed while a new generation is still being built steps the new one.  The UI thread sets only the
pause flag (it is what stops a run) and installs a replay's driver between runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from textual.message import Message as TextualMessage

from workbench.generation.loaded import LoadedModel
from workbench.generation.step import Step
from workbench.runtime.chat import Message, Tool
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.errors import Severity, one_line
from workbench.tui.steps import ControlRefused, Driver, GeneratorDriver, ReplayDriver, StepLog

if TYPE_CHECKING:
    from workbench.generation.generate import Generator

MAX_NEW_TOKENS = 256

Post = Callable[[TextualMessage], object]
Control = Literal["step", "run", "rewind", "constraint", "force", "jump", "where", "why", "try"]


class EngineStopped(WorkbenchError):
    """An engine job ended early; the message is the notice the user reads, ``severity`` how loud."""

    def __init__(self, notice: str, severity: Severity = "warning") -> None:
        super().__init__(notice)
        self.severity: Severity = severity


@dataclass(frozen=True)
class GenerationRequest:
    """Everything a new generation needs, captured on the UI thread when the user sends a message."""

    loaded: LoadedModel
    model_name: str
    spec: FormatSpec
    template: TemplateSource
    messages: list[Message]
    tools: list[Tool]
    tool_choice: Any  # "auto" | "required" | "none" | {"type": "function", "function": {"name": ...}}
    constrain: bool
    kwargs: dict[str, Any]
    start_paused: bool = False
    parallel: bool = True
    # The conversation as the template receives it (OpenAI dicts, tool-call arguments as dicts, as
    # transformers passes them); ``messages`` is the same as Message objects, for a saved session.
    prompt_messages: tuple[dict[str, Any], ...] = ()


class EngineController:
    """The engine lock, the pause flag and the step loop (no Textual widgets, no workspace writes)."""

    def __init__(self, log: StepLog, post: Post, *, replay_delay: float = 0.03) -> None:
        self.log = log
        self.post = post
        self.replay_delay = replay_delay
        self.lock = threading.Lock()
        self.pause = threading.Event()
        self.driver: Driver | None = None

    def install(self, driver: Driver) -> None:
        """Make ``driver`` the one the controls act on (UI thread; a recorded session's replay)."""
        self.driver = driver

    # ------------------------------------------------------------------ jobs (worker threads)
    def generate(self, request: GenerationRequest) -> None:
        """Build a generator for ``request``, hand its driver to the UI, and run it (worker thread)."""
        with self.lock:
            try:
                generator = make_generator(request)
            except Exception as exc:  # GenerationError, GrammarError, TemplateError, ...
                raise EngineStopped(f"cannot start: {one_line(exc)}", "error") from exc
            driver = GeneratorDriver(generator, request.loaded.tokenizer, label=request.model_name)
            self.driver = driver
            self.post(msg.DriverReady(driver))
            try:
                driver.prefill()  # the prompt's forward: the longest wait, and a pause may arrive during it
            except Exception as exc:
                raise EngineStopped(f"cannot start: {one_line(exc)}", "error") from exc
            if request.start_paused or self.pause.is_set():
                why = "started paused" if request.start_paused else "paused"
                self.post_state(
                    driver, running=False, notice=f"{why} before the first token: space steps, r runs"
                )
                return
            self._run_locked(driver, MAX_NEW_TOKENS)

    def control(self, op: Control, arg: Any = None) -> None:
        """Apply one inspector control to the current driver (worker thread); a refusal raises with the
        reason.  Without a driver there is nothing to do (the app has already said so)."""
        with self.lock:
            driver = self.driver
            if driver is None:
                return
            try:
                self._control_locked(driver, op, arg)
            except (ControlRefused, EngineStopped):
                raise
            except Exception as exc:  # ForceRefused and any engine error: say why, the app keeps going
                raise EngineStopped(f"{op}: {one_line(exc)}") from exc

    def _control_locked(self, driver: Driver, op: Control, arg: Any) -> None:
        if op == "step":
            step = driver.step()
            if step is None:
                self.post_state(driver, running=False, notice="finished: nothing more to step")
                return
            self._record(driver, step)
        elif op == "run":
            self._run_locked(driver, MAX_NEW_TOKENS if not isinstance(driver, ReplayDriver) else 10**9)
            return
        elif op == "rewind":
            total = driver.rewind(int(arg))
            message = driver.message() if self.log.message is not None else None
            total = self.log.truncate(total, message, pending=driver.pending)
            self.post(msg.StepsAdvanced(total, self.log.epoch))
        elif op == "constraint":
            driver.set_constrained(bool(arg))
            self.post_state(driver, running=False, notice="constraint on" if arg else "constraint off")
            return
        elif op == "force":
            self._record(driver, driver.force(token_id(driver, str(arg))))
        elif op == "jump":
            for step in driver.jump_forward():
                self._record(driver, step)
        elif op in ("where", "why", "try"):
            # ``arg`` is the question's text, or (text, step) to ask about an earlier step's choice
            text, at = arg if isinstance(arg, tuple) else (arg, None)
            self._ask(driver, op, str(text or ""), at)
            return
        self.post_state(driver, running=False)

    def _ask(self, driver: Driver, op: Control, arg: str, step: int | None = None) -> None:
        """Ask the grammar (no state change) and post the answer: at the next token, or (``step``) at an
        earlier step's choice, replayed on a fresh matcher."""
        at, epoch = (len(self.log) if step is None else step), self.log.epoch
        if op == "where":
            self.post(msg.GrammarAnswered("where", at, epoch, position=driver.where(at=step)))
        elif op == "why":
            answer = driver.why(arg, at=step)
            self.post(msg.GrammarAnswered("why", at, epoch, text=answer.message, ok=answer.allowed))
        else:
            trial = driver.try_string(arg, at=step)
            self.post(
                msg.GrammarAnswered("try", at, epoch, text=f"{arg!r}: {trial.message}", ok=trial.accepted)
            )

    # ------------------------------------------------------------------ helpers (caller holds the lock)
    def _record(self, driver: Driver, step: Step) -> None:
        """Append a step and the message so far to the log, and tell the UI."""
        try:
            diagnostics = driver.diagnostics() if driver.finished else ()
            total = self.log.record(step, driver.message(), diagnostics, pending=driver.pending)
        except Exception as exc:  # a parse hiccup must not stop the stream: it becomes a diagnostic
            total = self.log.record(step, None, (one_line(exc),))
        self.post(msg.StepsAdvanced(total, self.log.epoch))

    def _run_locked(self, driver: Driver, limit: int) -> None:
        """Step until finished, paused or ``limit`` steps."""
        self.post_state(driver, running=True)
        delay = self.replay_delay if isinstance(driver, ReplayDriver) else 0.0
        start = time.perf_counter()
        try:
            for i in range(limit):
                if self.pause.is_set() or driver.finished:
                    break
                step = driver.step()
                if step is None:
                    break
                self._record(driver, step)
                if delay:  # a replay keeps a steady pace: sleep to the schedule, not by a fixed amount
                    time.sleep(max(0.0, start + (i + 1) * delay - time.perf_counter()))
        except Exception as exc:
            raise EngineStopped(f"generation stopped: {one_line(exc)}", "error") from exc
        self.post_state(driver, running=False)

    def post_state(self, driver: Driver | None, *, running: bool, notice: str = "") -> None:
        """Tell the UI the run state (and a notice, when there is one)."""
        self.post(
            msg.EngineStateChanged(
                running=running,
                finished=bool(driver and driver.finished),
                constrained=bool(driver.constrained) if driver else True,
                notice=notice,
            )
        )


# ---------------------------------------------------------------------- composing the core stages
def token_id(driver: Driver, answer: str) -> int:
    """A token id from what the user typed: a number, or text that is exactly one token."""
    text = answer.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    found = driver.token_id_for(answer)
    if found is None:
        raise ControlRefused(f"{answer!r} is not a single token of this vocabulary: give a token id")
    return int(found)


def make_generator(request: GenerationRequest) -> Generator:
    """A generator for the request's spec and (edited) template.

    The engine module is imported here, not at the top: it pulls in the grammar stack, which a TUI that
    never generates (a replay, a template being edited) need not pay for at start-up.
    """
    from workbench.generation.generate import Generator

    return Generator(
        request.loaded,
        request.spec,
        messages=list(request.prompt_messages) or request.messages,
        tools=request.tools,
        tool_choice=request.tool_choice,
        parallel=request.parallel,
        constrain=request.constrain,
        template=request.template,
        reasoning=bool(request.kwargs.get("enable_thinking", True)),
        max_new_tokens=MAX_NEW_TOKENS,
        # The Kwargs tab's switches (reasoning_effort, ...) render the prompt as ``generate --kw`` does.
        template_kwargs={
            k: v for k, v in request.kwargs.items() if k not in ("add_generation_prompt", "enable_thinking")
        },
    )
