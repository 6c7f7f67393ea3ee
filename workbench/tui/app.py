"""The workbench app: owns the workspace and the background jobs; screens only show and ask.

Threads: template analysis, model loading, validation and every engine control (step, run, rewind, force,
constraint) run in thread workers.  Workers never touch widgets; they post a message from
:mod:`workbench.tui.messages`, the handler here updates the workspace and tells the visible screen what
changed.  Engine controls share one lock, so a step pressed during a run waits instead of racing it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from workbench.analysis import analyze
from workbench.chat import Message, Tool
from workbench.engine import model as engine_model
from workbench.engine.loaded import LoadedModel
from workbench.engine.step import Step
from workbench.engine.tiny import load_tiny
from workbench.export import export, write_export
from workbench.parsing import StreamParser
from workbench.session import ModelRecord, load_session, new_parser, save_session, session_from_generation
from workbench.spec import FormatSpec
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.actions import ACTIONS
from workbench.tui.errors import one_line
from workbench.tui.screens.analysis import AnalysisScreen
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.export import ExportScreen
from workbench.tui.screens.generate import GenerateScreen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.modals import ForceTokenScreen
from workbench.tui.screens.template import TemplateScreen
from workbench.tui.steps import ControlRefused, GeneratorDriver, ReplayDriver
from workbench.tui.workspace import Workspace
from workbench.validate import validate

if TYPE_CHECKING:
    from workbench.engine.generate import Generator

MAX_NEW_TOKENS = 256


class WorkbenchApp(App[None]):
    """Template Workbench in the terminal (see docs/tui.md)."""

    TITLE = "Template Workbench"
    CSS_PATH = str(Path(__file__).with_name("app.tcss"))
    MODES: ClassVar[dict[str, Any]] = {
        "template": TemplateScreen,
        "analysis": AnalysisScreen,
        "generate": GenerateScreen,
        "inspector": InspectorScreen,
        "export": ExportScreen,
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "switch_mode('template')", "Template", show=False),
        Binding("2", "switch_mode('analysis')", "Analysis", show=False),
        Binding("3", "switch_mode('generate')", "Generate", show=False),
        Binding("4", "switch_mode('inspector')", "Inspector", show=False),
        Binding("5", "switch_mode('export')", "Export", show=False),
        Binding("f1", "switch_mode('template')", "Template", show=False, priority=True),
        Binding("f2", "switch_mode('analysis')", "Analysis", show=False, priority=True),
        Binding("f3", "switch_mode('generate')", "Generate", show=False, priority=True),
        Binding("f4", "switch_mode('inspector')", "Inspector", show=False, priority=True),
        Binding("f5", "switch_mode('export')", "Export", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("ctrl+r", "analyze", "Analyse", show=False, priority=True),
        Binding("ctrl+s", "save_session", "Save session", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        source: TemplateSource,
        *,
        model: str | None = None,
        session: str | None = None,
        load_model: bool = True,
        analyze: bool = True,
        start_mode: str = "template",
        replay_delay: float = 0.03,
    ) -> None:
        super().__init__()
        self.workspace = Workspace(source=source)
        self._model_ref = model
        self._session_path = session
        self._want_model = load_model
        self._want_analysis = analyze
        self._start_mode = start_mode
        self.replay_delay = replay_delay
        self._engine_lock = threading.Lock()
        self._pause = threading.Event()
        self._last_messages: list[Message] = []

    # ------------------------------------------------------------------ lifecycle
    def on_mount(self) -> None:
        self.switch_mode(self._start_mode)
        if self._session_path:
            self.open_session(self._session_path)
        elif self._want_analysis:
            self.action_analyze()
        if self._want_model:
            self.workspace.model_state = "loading"
            self.load_model_job(self._model_ref)
        else:
            self.workspace.model_state = "skipped"
            self.workspace.model_notice = "no model loaded (started without one)"

    def changed(self, topic: str) -> None:
        """Record that ``topic`` changed and let the visible screen redraw what depends on it."""
        self.workspace.bump(topic)
        screen = self.screen
        if isinstance(screen, WorkbenchScreen):
            screen.workspace_changed(topic)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for act in ACTIONS:
            if act.action in ("help", "quit"):
                continue
            yield SystemCommand(f"{act.title}  [{act.keys}]", act.help, partial(self.run_action, act.action))

    # ------------------------------------------------------------------ simple actions
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_focus_chat(self) -> None:
        self.switch_mode("generate")
        screen = self.screen
        if isinstance(screen, GenerateScreen):
            screen.focus_chat()

    # ------------------------------------------------------------------ analysis
    def action_analyze(self) -> None:
        ws = self.workspace
        ws.analysis_running = True
        ws.analysis_error = ""
        self.changed("analysis")
        self.analysis_job(ws.edited_source())

    @work(thread=True, exclusive=True, group="analysis")
    def analysis_job(self, source: TemplateSource) -> None:
        try:
            analysis = analyze(source)
        except Exception as exc:  # TemplateError, or a bug in the stage: shown in its panel, never raised
            self.post_message(msg.AnalysisFailed(one_line(exc)))
            return
        self.post_message(msg.AnalysisDone(analysis, template_sha=source.sha256))

    def on_analysis_done(self, message: msg.AnalysisDone) -> None:
        ws = self.workspace
        ws.analysis_running = False
        ws.analysis = message.analysis
        ws.analysis_sha = message.template_sha
        ws.analysis_error = ""
        ws.spec = message.analysis.spec
        ws.validation = None
        ws.validation_summary = ""
        self.changed("analysis")
        self.changed("spec")

    def on_analysis_failed(self, message: msg.AnalysisFailed) -> None:
        ws = self.workspace
        ws.analysis_running = False
        ws.analysis_error = message.error
        self.changed("analysis")
        self.notify(message.error, title="Analysis failed", severity="error")

    # ------------------------------------------------------------------ spec edits and validation
    def set_spec(self, spec: FormatSpec, *, note: str = "") -> None:
        """Install an edited spec and re-validate it (the spec is already checked by ``with_edit``)."""
        self.workspace.spec = spec
        self.workspace.validation = None
        self.workspace.validation_summary = "edited: validating…"
        self.changed("spec")
        if note:
            self.notify(note, title="Spec edited")
        self.action_validate(quiet=True)

    def action_validate(self, quiet: bool = False) -> None:
        ws = self.workspace
        if ws.spec is None:
            if not quiet:
                self.notify("no spec yet: analyse the template first", severity="warning")
            return
        ws.validation_summary = "validating…"
        self.changed("validation")
        self.validation_job(ws.spec, ws.edited_source())

    @work(thread=True, exclusive=True, group="validation")
    def validation_job(self, spec: FormatSpec, source: TemplateSource) -> None:
        try:
            report = validate(source, spec)
        except Exception as exc:  # TemplateError, or a bug in the stage: a notification, never raised
            self.post_message(msg.ValidationDone(None, "validation failed", error=one_line(exc)))
            return
        self.post_message(msg.ValidationDone(report, report.summary()))

    def on_validation_done(self, message: msg.ValidationDone) -> None:
        ws = self.workspace
        ws.validation = message.report
        ws.validation_summary = (
            message.summary if not message.error else f"validation failed: {message.error}"
        )
        self.changed("validation")
        if message.error:
            self.notify(message.error, title="Validation failed", severity="error")

    # ------------------------------------------------------------------ export
    def start_export(self, target: str, path: str, *, force: bool = False) -> None:
        """Export the current spec as ``target`` to ``path`` (validated first by the export stage)."""
        ws = self.workspace
        if ws.spec is None:
            self.notify("no spec to export yet", severity="warning")
            return
        try:
            tools = ws.parse_tools()
        except ValueError as exc:
            self.notify(str(exc), title="Export", severity="error")
            return
        self.notify(f"exporting {target}… (validates first)", title="Export")
        self.export_job(target, path, ws.spec, ws.edited_source(), tools, force)

    @work(thread=True, exclusive=True, group="export")
    def export_job(
        self, target: str, path: str, spec: FormatSpec, source: TemplateSource, tools: list[Tool], force: bool
    ) -> None:
        try:
            result = export(target, template=source, spec=spec, tools=tools, force=force)
            written = write_export(result, path)
        except Exception as exc:  # ExportError / Unsupported / SessionError say why; a stage bug is shown too
            self.post_message(msg.ExportDone(target, path, error=one_line(exc)))
            return
        self.post_message(msg.ExportDone(target, str(written), warnings=tuple(result.warnings)))

    def on_export_done(self, message: msg.ExportDone) -> None:
        if message.error:
            hint = " (shift+s exports anyway)" if "--force" in message.error else ""
            self.notify(
                message.error + hint, title=f"Export {message.target} refused", severity="error", timeout=10
            )
            return
        extra = "; ".join(message.warnings)
        self.notify(
            f"wrote {message.path}" + (f" — {extra}" if extra else ""), title=f"Export {message.target}"
        )

    # ------------------------------------------------------------------ model
    @work(thread=True, exclusive=True, group="model")
    def load_model_job(self, ref: str | None) -> None:
        try:
            name, loaded, notice = _load_model(ref, lambda text: self.post_message(msg.ModelProgress(text)))
        except Exception as exc:
            self.post_message(msg.ModelFailed(one_line(exc)))
            return
        self.post_message(msg.ModelReady(name, loaded, notice))

    def on_model_progress(self, message: msg.ModelProgress) -> None:
        self.workspace.model_notice = message.text
        self.changed("model")

    def on_model_ready(self, message: msg.ModelReady) -> None:
        ws = self.workspace
        ws.model_state, ws.model_name, ws.loaded_model = "ready", message.name, message.loaded
        ws.model_notice = message.notice
        self.changed("model")
        if message.notice:
            self.notify(message.notice, title="Model", timeout=8)

    def on_model_failed(self, message: msg.ModelFailed) -> None:
        ws = self.workspace
        ws.model_state, ws.model_notice = "failed", message.error
        self.changed("model")
        self.notify(message.error, title="Model not loaded", severity="error", timeout=10)

    # ------------------------------------------------------------------ sessions
    def open_session(self, path: str) -> None:
        self.session_job(path)

    @work(thread=True, exclusive=True, group="session")
    def session_job(self, path: str) -> None:
        try:
            session = load_session(Path(path))
        except Exception as exc:  # SessionError names the problem; anything else is shown the same way
            self.post_message(msg.ModelFailed(f"session {path}: {one_line(exc)}"))
            return
        self.post_message(msg.SessionLoaded(session, path))

    def on_session_loaded(self, message: msg.SessionLoaded) -> None:
        ws = self.workspace
        session = message.session
        steps = list(session.steps)
        self.install_replay(
            steps, lambda: new_parser(session), label=f"session {Path(message.path).name}"
        )
        ws.session_path = message.path
        if session.template.text:
            ws.template_text = session.template.text
            self.changed("template")
        if session.tools:
            ws.tools_json = json.dumps([t.to_openai() for t in session.tools], indent=2, ensure_ascii=False)
        ws.spec = session.spec
        ws.model_name = ws.model_name or f"(recorded with {session.model.name or session.model.ref or '?'})"
        self.changed("spec")
        if self._want_analysis:
            self.action_analyze()
        self.notify(f"{len(steps)} recorded steps: space steps, r replays", title="Session opened")

    def install_replay(
        self, steps: list[Step], new_parser: Callable[[], StreamParser], *, label: str
    ) -> None:
        """Make a recorded step list the inspector's driver (no model needed); ``new_parser`` gives a
        parser for the format the steps were recorded in."""
        ws = self.workspace
        ws.driver = ReplayDriver(steps, new_parser, label=label)
        ws.steps.reset()
        ws.running = False
        ws.constrained = bool(steps and steps[0].constrained)
        self.changed("steps")
        self.changed("engine")

    def action_save_session(self) -> None:
        ws = self.workspace
        if not len(ws.steps) or ws.spec is None:
            self.notify("nothing to save: no steps yet", severity="warning")
            return
        path = Path("sessions") / f"tui-{time.strftime('%Y%m%d-%H%M%S')}.json"
        settings: dict[str, Any] = {"constrain": ws.constrained, "enable_thinking": ws.kwargs.enable_thinking}
        prompt = ""
        if isinstance(ws.driver, GeneratorDriver):
            settings.update(ws.driver.parse_settings())
            prompt = ws.driver.prompt
        try:
            # The steps carry ``Step.text`` (what each fed the parser), which is what the replay feeds.
            session = session_from_generation(
                template_text=ws.template_text,
                template_name=ws.source.name,
                spec=ws.spec,
                model=ModelRecord(name=ws.model_name, ref=self._model_ref or ""),
                messages=list(self._last_messages),
                tools=ws.parse_tools(),
                settings=settings,
                prompt=prompt,
                steps=list(ws.steps.all()),
                parsed=ws.steps.message or Message(role="assistant"),
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            saved = save_session(path, session)
        except Exception as exc:  # SessionError (folder not writable, ...) or bad tools JSON
            self.notify(one_line(exc), title="Save session failed", severity="error")
            return
        self.notify(f"saved {saved}", title="Session")

    # ------------------------------------------------------------------ generation and engine controls
    def start_generation(self, text: str, *, tool_choice: str = "auto", constrain: bool = True) -> None:
        """Begin a new generation for the user message ``text`` (from the Generate screen)."""
        ws = self.workspace
        if ws.model_state != "ready":
            reason = {"loading": "the model is still loading", "failed": f"no model: {ws.model_notice}"}.get(
                ws.model_state, "no model is loaded (start with --model, or open a session to replay)"
            )
            self.notify(reason, title="Cannot generate", severity="warning")
            return
        if ws.spec is None:
            self.notify(
                "no spec yet: the analysis has not finished (or failed)",
                title="Cannot generate",
                severity="warning",
            )
            return
        try:
            tools = ws.parse_tools()
            kwargs = ws.kwargs.to_kwargs()
        except ValueError as exc:
            self.notify(str(exc), title="Cannot generate", severity="error")
            return
        messages = [Message(role="user", content=text)]
        self._last_messages = messages
        self._pause.clear()
        ws.running = True
        ws.steps.reset()
        self.changed("steps")
        self.changed("engine")
        self.generation_job(messages, tools, tool_choice, constrain, kwargs)

    @work(thread=True, exclusive=True, group="engine")
    def generation_job(
        self,
        messages: list[Message],
        tools: list[Tool],
        tool_choice: str,
        constrain: bool,
        kwargs: dict[str, Any],
    ) -> None:
        ws = self.workspace
        with self._engine_lock:
            try:
                loaded = ws.loaded_model
                if loaded is None:
                    raise ControlRefused("no model is loaded")
                if ws.spec is None:
                    raise ControlRefused("no format spec yet: analyse the template first")
                generator = _make_generator(loaded, ws, messages, tools, tool_choice, constrain, kwargs)
                ws.driver = GeneratorDriver(generator, loaded.tokenizer, label=ws.model_name)
            except Exception as exc:  # GenerationError, GrammarError, TemplateError, ...: a notification
                self._post_engine(running=False, notice=f"cannot start: {one_line(exc)}", severity="error")
                return
            self._run_locked(MAX_NEW_TOKENS)

    def _post_engine(self, *, running: bool, notice: str = "", severity: str = "information") -> None:
        drv = self.workspace.driver
        self.post_message(
            msg.EngineStateChanged(
                running=running,
                finished=bool(drv and drv.finished),
                constrained=bool(drv.constrained) if drv else True,
                notice=notice,
                severity=severity,
            )
        )

    def _record(self, step: Step) -> None:
        """Append a step and the message so far to the log, and tell the UI (worker thread)."""
        ws = self.workspace
        drv = ws.driver
        total = ws.steps.append(step)
        if drv is not None:
            try:
                ws.steps.message = drv.message()
            except Exception as exc:  # a parse hiccup must not stop the stream
                ws.steps.diagnostics = (one_line(exc),)
        self.post_message(msg.StepsAdvanced(total, ws.steps.epoch))

    def _run_locked(self, limit: int) -> None:
        """Step until finished, paused or ``limit`` steps (caller holds the engine lock)."""
        ws = self.workspace
        drv = ws.driver
        if drv is None:
            return
        self._post_engine(running=True)
        delay = self.replay_delay if isinstance(drv, ReplayDriver) else 0.0
        notice, severity = "", "information"
        start = time.perf_counter()
        try:
            for i in range(limit):
                if self._pause.is_set() or drv.finished:
                    break
                step = drv.step()
                if step is None:
                    break
                self._record(step)
                if delay:  # a replay keeps a steady pace: sleep to the schedule, not by a fixed amount
                    time.sleep(max(0.0, start + (i + 1) * delay - time.perf_counter()))
        except Exception as exc:
            notice, severity = f"generation stopped: {one_line(exc)}", "error"
        self._post_engine(running=False, notice=notice, severity=severity)

    def _require_driver(self) -> bool:
        if self.workspace.driver is None:
            self.notify(
                "nothing to step yet: send a message on Generate (3), or open a session", severity="warning"
            )
            return False
        return True

    def action_step(self) -> None:
        if self._require_driver():
            self._pause.set()  # a step while running means: stop there
            self.engine_job("step")

    def action_run(self) -> None:
        if self._require_driver():
            self._pause.clear()
            self.engine_job("run")

    def action_pause(self) -> None:
        self._pause.set()

    def action_rewind(self, k: int = 1) -> None:
        if self._require_driver():
            self._pause.set()
            self.engine_job("rewind", k)

    def action_toggle_constraint(self) -> None:
        if self._require_driver():
            self.engine_job("constraint", not self.workspace.constrained)

    def action_force(self) -> None:
        if not self._require_driver():
            return
        drv = self.workspace.driver
        if drv is not None and not drv.can_force:
            self.notify(
                "a recorded session cannot be forced: load a model to generate live",
                title="Force",
                severity="warning",
            )
            return
        last = self.workspace.steps.get(len(self.workspace.steps) - 1)
        self._pause.set()
        self.push_screen(ForceTokenScreen(last), self._forced)

    def _forced(self, answer: str | None) -> None:
        if answer:
            self.engine_job("force", answer)

    @work(thread=True, exclusive=False, group="engine-control")
    def engine_job(self, op: str, arg: Any = None) -> None:
        ws = self.workspace
        with self._engine_lock:
            drv = ws.driver
            if drv is None:
                return
            try:
                if op == "step":
                    step = drv.step()
                    if step is None:
                        self._post_engine(running=False, notice="finished: nothing more to step")
                        return
                    self._record(step)
                elif op == "run":
                    self._run_locked(MAX_NEW_TOKENS if not isinstance(drv, ReplayDriver) else 10**9)
                    return
                elif op == "rewind":
                    total = drv.rewind(int(arg))
                    ws.steps.truncate(total)
                    if ws.steps.message is not None:
                        ws.steps.message = drv.message()
                    self.post_message(msg.StepsAdvanced(len(ws.steps), ws.steps.epoch))
                elif op == "constraint":
                    drv.set_constrained(bool(arg))
                    self._post_engine(running=False, notice="constraint on" if arg else "constraint off")
                    return
                elif op == "force":
                    token_id = _token_id(drv, str(arg))
                    self._record(drv.force(token_id))
            except ControlRefused as exc:
                self._post_engine(running=False, notice=str(exc), severity="warning")
                return
            except Exception as exc:  # ForceRefused and any engine error: say why, keep going
                self._post_engine(running=False, notice=f"{op}: {one_line(exc)}", severity="warning")
                return
            self._post_engine(running=False)

    def on_steps_advanced(self, message: msg.StepsAdvanced) -> None:
        self.changed("steps")

    def on_engine_state_changed(self, message: msg.EngineStateChanged) -> None:
        ws = self.workspace
        ws.running = message.running
        ws.constrained = message.constrained
        self.changed("engine")
        if message.notice:
            self.notify(message.notice, severity=message.severity)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- composing the core stages
def _token_id(drv: Any, answer: str) -> int:
    """A token id from what the user typed: a number, or text that is exactly one token."""
    text = answer.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    token_id = drv.token_id_for(answer)
    if token_id is None:
        raise ControlRefused(f"{answer!r} is not a single token of this vocabulary: give a token id")
    return int(token_id)


def _load_model(ref: str | None, progress: engine_model.Progress) -> tuple[str, LoadedModel, str]:
    """(name, loaded model, notice): the model asked for, else the default when cached, else a tiny one.

    The TUI never starts the default model's 93 MB download by itself: without ``--model`` it uses the
    default only when it is already cached, and says so when it falls back to the tiny random model.
    """
    _leave_a_core_for_the_ui()
    if ref:
        loaded = engine_model.load_model(ref, progress=progress)
        return str(loaded.name), loaded, ""
    if engine_model.default_model_cached():
        loaded = engine_model.load_model(None, progress=progress)
        return str(loaded.name), loaded, ""
    progress("default model not cached: building a tiny local model")
    loaded = load_tiny()
    return (
        str(loaded.name),
        loaded,
        "The default SmolLM2 model is not cached, so a tiny random model is loaded (its output is "
        "noise). Fetch the default once with `workbench generate`, or pass --model.",
    )


def _leave_a_core_for_the_ui() -> None:
    """Run torch on one thread: with two cores, a second torch thread spinning against the UI thread made
    every step several times slower (measured: 1.5 s instead of 0.25 s per SmolLM2 step)."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass


def _make_generator(
    loaded: LoadedModel,
    ws: Workspace,
    messages: list[Message],
    tools: list[Tool],
    tool_choice: str,
    constrain: bool,
    kwargs: dict[str, Any],
) -> Generator:
    """A generator for the current spec and (edited) template.

    The engine module is imported here, not at the top: it pulls in the grammar stack, which a TUI that
    never generates (a replay, a template being edited) need not pay for at start-up.
    """
    from workbench.engine.generate import Generator

    assert ws.spec is not None  # checked by the caller
    return Generator(
        loaded,
        ws.spec,
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        constrain=constrain,
        template=ws.edited_source(),
        reasoning=bool(kwargs.get("enable_thinking", True)),
        max_new_tokens=MAX_NEW_TOKENS,
    )
