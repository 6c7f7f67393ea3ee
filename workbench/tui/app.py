"""The workbench app: composes the screens and owns the resources (workspace, engine controller, workers).

Workflows live in :mod:`workbench.tui.controllers`; the app only wires them: screens post intent messages
(``RequestAnalysis``, ``RequestGenerate``, ``RequestExport``, ...) or trigger app actions, a handler here asks
the workflow to prepare the job on the UI thread, and the job runs in a thread worker.  Workers never touch
widgets or workspace fields: they return or post a result message, and the handler writes it into the
workspace and tells the visible screen what changed.  Workers raise instead of catching; every failure
reaches :meth:`WorkbenchApp.on_worker_state_changed`, which reports it by worker group
(:mod:`workbench.tui.failures`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.generation.step import Step
from workbench.runtime.chat import Message
from workbench.runtime.parsing import StreamParser
from workbench.session import new_parser
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.actions import ACTIONS
from workbench.tui.controllers import analysis as analysis_flow
from workbench.tui.controllers import export as export_flow
from workbench.tui.controllers import generate as generate_flow
from workbench.tui.controllers import model as model_flow
from workbench.tui.controllers import sessions as session_flow
from workbench.tui.controllers.engine import Control, EngineController
from workbench.tui.errors import Refused, one_line
from workbench.tui.failures import failure_message
from workbench.tui.keys import acts_while_typing, is_text_field
from workbench.tui.screens.analysis import AnalysisScreen
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.cases import CasesScreen
from workbench.tui.screens.export import ExportScreen
from workbench.tui.screens.generate import GenerateScreen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.modals import AskScreen, ConfirmScreen, ForceTokenScreen
from workbench.tui.screens.template import TemplateScreen
from workbench.tui.steps import Driver, ReplayDriver
from workbench.tui.workspace import ModelState, Workspace


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
        Binding("ctrl+s", "save", "Save (template on Template, else session)", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    #: Where the model is; the one writer of ``workspace.model_state`` (screens read the workspace).
    model_state: reactive[ModelState] = reactive[ModelState]("none", init=False)

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
        self.engine = EngineController(self.workspace.steps, self.post_message, replay_delay=replay_delay)
        self._last_messages: list[Message] = []
        # A mode switch in progress: keys are dropped until the new screen is drawn (see ``on_event``).
        self.switching_mode = False
        self._switch_token = 0

    @property
    def replay_delay(self) -> float:
        """Seconds between replayed steps (0 replays as fast as the UI takes them)."""
        return self.engine.replay_delay

    @replay_delay.setter
    def replay_delay(self, value: float) -> None:
        self.engine.replay_delay = value

    # ------------------------------------------------------------------ lifecycle
    def on_mount(self) -> None:
        self.switch_mode(self._start_mode)
        if self._session_path:
            self.open_session(self._session_path)
        elif self._want_analysis:
            self.action_analyze()
        if self._want_model:
            self.model_state = "loading"
            self._load_model(self._model_ref)
        else:
            self.workspace.model_notice = "no model loaded (started without one)"
            self.model_state = "skipped"

    def on_unmount(self) -> None:
        """Quitting never waits on a template: renders still running in the render worker are cancelled, so
        a thread stuck in a hostile template cannot keep the process alive after ctrl+q."""
        from workbench.template.render import cancel_renders

        cancel_renders()

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

    # ------------------------------------------------------------------ keys
    def switch_mode(self, mode: str) -> AwaitMount:
        """Switch screens; keys typed until the new screen is drawn are dropped.

        Textual makes the new mode current at once, before a slow screen has mounted and drawn, so a key
        typed in the meantime (an ``s`` meant for a path) would act on a screen the user cannot see yet.
        """
        if mode != self.current_mode:
            self.switching_mode = True
            self._switch_token += 1
            token = self._switch_token
            # A screen that never reports being drawn must not leave the keyboard dead.
            self.set_timer(2.0, lambda: self.end_mode_switch(token))
        return super().switch_mode(mode)

    def end_mode_switch(self, token: int | None = None) -> None:
        """The switched-to screen is drawn: keys act again (``token`` ends only that switch)."""
        if token is None or token == self._switch_token:
            self.switching_mode = False

    async def on_event(self, event: events.Event) -> None:
        """Keys first pass two guards: none act during a screen switch, and typed text stays text."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self.switching_mode and event.key != "ctrl+q":
                self.log.debug(f"key {event.key!r} dropped: a screen switch is in progress")
                return
            focused = self.focused
            if focused is not None and is_text_field(focused) and not acts_while_typing(event.key):
                # Straight to the field: no binding, not even a priority one, sees a typed character.
                focused._forward_event(event)
                return
        await super().on_event(event)

    # ------------------------------------------------------------------ simple actions
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_focus_chat(self) -> None:
        self.switch_mode("generate")
        screen = self.screen
        if isinstance(screen, GenerateScreen):
            screen.focus_chat()

    def action_tool_result(self) -> None:
        """Type a tool result for the last assistant turn's call (palette; `t` on Generate)."""
        self.switch_mode("generate")
        screen = self.screen
        if isinstance(screen, GenerateScreen):
            screen.action_tool_result()

    def action_new_conversation(self) -> None:
        """Clear the Generate screen's conversation, asking first (palette; `n` on Generate)."""
        self.switch_mode("generate")
        screen = self.screen
        if isinstance(screen, GenerateScreen):
            screen.action_new_conversation()

    # ------------------------------------------------------------------ workers and their failures
    def _start_worker(
        self, work: Callable[[], object], *, group: str, detail: str = "", exclusive: bool = True
    ) -> None:
        """Run ``work`` in a thread worker; a result it returns that is a message is posted.

        Workers raise instead of catching: :meth:`on_worker_state_changed` reports every failure.
        """

        def job() -> None:
            result = work()
            # A worker replaced by a newer one of its group (``exclusive``) has a stale result: drop it.
            if isinstance(result, TextualMessage) and not get_current_worker().is_cancelled:
                self.post_message(result)

        name = f"{group}:{detail}" if detail else group
        self.run_worker(job, name=name, group=group, thread=True, exclusive=exclusive, exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker failures are handled: the group's own message, or a loud notification."""
        if event.state != WorkerState.ERROR or event.worker.error is None:
            return
        worker, error = event.worker, event.worker.error
        self.log.error(f"worker {worker.name} failed: {error!r}")
        if worker.is_cancelled:  # replaced by a newer job of its group: its failure is as stale as a result
            return
        message = failure_message(worker.group, worker.name, error)
        if message is not None:
            self.post_message(message)
            return
        self.notify(one_line(error), title=f"{worker.name} failed", severity="error", timeout=10)

    def _refuse(self, refusal: Refused) -> None:
        self.notify(refusal.one_line(), title=refusal.title, severity=refusal.severity)

    # ------------------------------------------------------------------ analysis
    def action_analyze(self) -> None:
        """Re-analyse; asks first when that would discard hand edits of the spec no export has saved."""
        if not self.workspace.spec_unsaved:
            self._analyze()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._analyze()
            else:
                self.notify("kept the edited spec (export it with s on Export to keep it)", title="Analyse")

        self.push_screen(
            ConfirmScreen(
                "Re-analyse and discard the spec edits?",
                "The spec has hand edits no export has written; a new analysis replaces the spec.",
                yes="Discard and analyse",
            ),
            answered,
        )

    def on_request_analysis(self, message: msg.RequestAnalysis) -> None:
        self.action_analyze()

    def _analyze(self) -> None:
        source = analysis_flow.prepare_analysis(self.workspace)
        self.changed("analysis")
        self._start_worker(partial(analysis_flow.compute_analysis, source), group="analysis")

    def on_analysis_done(self, message: msg.AnalysisDone) -> None:
        analysis_flow.accept_analysis(self.workspace, message)
        self.changed("analysis")
        self.changed("spec")
        # The analysis checks itself: the template's round-trip renders parsed back with the new spec, so a
        # feature the spec cannot express is a warning now, not a surprise at export.
        self.action_validate(quiet=True)

    def on_analysis_failed(self, message: msg.AnalysisFailed) -> None:
        analysis_flow.accept_analysis_failure(self.workspace, message.error)
        self.changed("analysis")
        self.notify(message.error, title="Analysis failed", severity="error")

    # ------------------------------------------------------------------ spec edits and validation
    def on_request_spec_edit(self, message: msg.RequestSpecEdit) -> None:
        """Install an edited spec and re-validate it (the spec is already checked by ``with_edit``)."""
        analysis_flow.accept_spec_edit(self.workspace, message.spec)
        self.changed("spec")
        if message.note:
            self.notify(message.note, title="Spec edited")
        self.action_validate(quiet=True)

    def action_validate(self, quiet: bool = False) -> None:
        try:
            spec, source = analysis_flow.prepare_validation(self.workspace)
        except Refused as refusal:
            if not quiet:
                self._refuse(refusal)
            return
        self.changed("validation")
        switches = analysis_flow.validation_kwargs(self.workspace)  # the Kwargs tab's, as --kw
        self._start_worker(
            partial(analysis_flow.compute_validation, spec, source, switches), group="validation"
        )

    def action_export(self) -> None:
        """The palette's "Export": on the Export screen it exports; elsewhere it shows that screen."""
        screen = self.screen
        if isinstance(screen, ExportScreen):
            screen.action_export()
        else:
            self.switch_mode("export")
            self.notify("choose the target and path, then s exports", title="Export")

    def action_export_validated(self) -> None:
        """Straight to Export with a validated spec; otherwise say what is missing and stay."""
        ws = self.workspace
        if ws.spec is None:
            self.notify("no spec yet: analyse first (a)", title="Export", severity="warning")
        elif ws.validation is None or not ws.validation.validated:
            why = ws.validation_summary or "not validated yet (v validates)"
            self.notify(
                f"the spec is not validated: {why}; c shows the cases", title="Export", severity="warning"
            )
        else:
            self.switch_mode("export")

    def action_show_cases(self) -> None:
        """Open the validation cases (failing ones first) with the rendered text beside the parse."""
        report = self.workspace.validation
        if report is None:
            self.notify("no validation report yet: v validates", title="Validation cases", severity="warning")
            return
        self.push_screen(CasesScreen(report))

    def on_request_validation(self, message: msg.RequestValidation) -> None:
        self.action_validate(quiet=message.quiet)

    def on_validation_done(self, message: msg.ValidationDone) -> None:
        analysis_flow.accept_validation(self.workspace, message)
        self.changed("validation")
        if message.error:
            self.notify(message.error, title="Validation failed", severity="error")
        elif message.report is not None and (warning := analysis_flow.spec_warning(message.report)):
            self.notify(warning, title="The spec misreads the template", severity="warning")

    # ------------------------------------------------------------------ export
    def on_request_export(self, message: msg.RequestExport) -> None:
        """Export the current spec (validated first by the export stage)."""
        try:
            job = export_flow.prepare_export(self.workspace, message)
        except Refused as refusal:
            self._refuse(refusal)
            return
        self.notify(f"exporting {job.target}… (validates first)", title="Export")
        self._start_worker(partial(export_flow.run_export, job), group="export", detail=job.target)

    def on_export_done(self, message: msg.ExportDone) -> None:
        if not message.error and message.spec is not None:
            self.workspace.saved_spec = message.spec
        note = export_flow.export_notice(message)
        self.notify(note.text, title=note.title, severity=note.severity, timeout=note.timeout)

    # ------------------------------------------------------------------ model
    def _load_model(self, ref: str | None) -> None:
        self._start_worker(partial(model_flow.load_model, ref, self.post_message), group="model")

    def watch_model_state(self, state: ModelState) -> None:
        self.workspace.model_state = state
        self.changed("model")

    def on_model_progress(self, message: msg.ModelProgress) -> None:
        self.workspace.model_notice = message.text
        self.changed("model")

    def on_model_ready(self, message: msg.ModelReady) -> None:
        ws = self.workspace
        ws.model_name, ws.loaded_model, ws.model_notice = message.name, message.loaded, message.notice
        self.model_state = "ready"
        if message.notice:
            self.notify(message.notice, title="Model", timeout=8)

    def on_model_failed(self, message: msg.ModelFailed) -> None:
        self.workspace.model_notice = message.error
        self.model_state = "failed"
        self.changed("model")  # the notice changed even when the state did not (a second failure)
        self.notify(message.error, title="Model not loaded", severity="error", timeout=10)

    # ------------------------------------------------------------------ sessions
    def open_session(self, path: str) -> None:
        self._start_worker(partial(session_flow.read_session, path), group="session", detail=path)

    def on_session_loaded(self, message: msg.SessionLoaded) -> None:
        session = message.session
        steps = list(session.steps)
        self.install_replay(steps, lambda: new_parser(session), label=f"session {Path(message.path).name}")
        for topic in sorted(session_flow.accept_session(self.workspace, session, message.path)):
            self.changed(topic)
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
        self.engine.install(ws.driver)
        ws.steps.reset()
        ws.running = False
        ws.constrained = bool(steps and steps[0].constrained)
        self.changed("steps")
        self.changed("engine")

    def action_save(self) -> None:
        """``ctrl+s``: the Template screen saves the template file; every other screen saves a session."""
        screen = self.screen
        if isinstance(screen, TemplateScreen):
            screen.action_save_template()
        else:
            self.action_save_session()

    def action_save_session(self) -> None:
        try:
            session = session_flow.build_session(
                self.workspace, model_ref=self._model_ref or "", messages=self._last_messages
            )
        except Refused as refusal:
            self._refuse(refusal)
            return
        except Exception as exc:  # bad tools JSON
            self.notify(one_line(exc), title="Save session failed", severity="error")
            return
        try:
            saved = session_flow.save_to_sessions(session)
        except Exception as exc:  # SessionError (folder not writable, ...)
            self.notify(one_line(exc), title="Save session failed", severity="error")
            return
        self.notify(f"saved {saved}", title="Session")

    # ------------------------------------------------------------------ generation and engine controls
    def on_request_generate(self, message: msg.RequestGenerate) -> None:
        """Begin a new generation for the user's message (from the Generate screen)."""
        ws = self.workspace
        try:
            request = generate_flow.prepare_generation(ws, message)
        except Refused as refusal:
            self._refuse(refusal)
            return
        generate_flow.accept_generation(ws, request)  # the prompt is now the conversation
        self._last_messages = request.messages
        self.engine.pause.clear()
        ws.running = True
        ws.steps.reset()
        self.changed("steps")
        self.changed("engine")
        self._start_worker(partial(self.engine.generate, request), group="engine")

    def on_driver_ready(self, message: msg.DriverReady) -> None:
        self.workspace.driver = message.driver
        self.changed("engine")

    def _require_driver(self) -> Driver | None:
        driver = self.workspace.driver
        if driver is None:
            self.notify(
                "nothing to step yet: send a message on Generate (3), or open a session", severity="warning"
            )
        return driver

    def _control(self, op: Control, arg: Any = None) -> None:
        self._start_worker(
            partial(self.engine.control, op, arg), group="engine-control", detail=op, exclusive=False
        )

    def action_step(self) -> None:
        if self._require_driver():
            self.engine.pause.set()  # a step while running means: stop there
            self._control("step")

    def action_run(self) -> None:
        if self._require_driver():
            self.engine.pause.clear()
            self._control("run")

    def action_pause(self) -> None:
        if not self.workspace.running:
            self.notify("nothing is running: r runs, space steps", title="Pause")
            return
        self.engine.pause.set()
        self.notify("pausing after the current step", title="Pause")

    def action_rewind(self, k: int = 1) -> None:
        if self._require_driver():
            self.engine.pause.set()
            self._control("rewind", k)

    def action_toggle_constraint(self) -> None:
        if self._require_driver():
            self._control("constraint", not self.workspace.constrained)

    def action_force(self) -> None:
        driver = self._require_driver()
        if driver is None:
            return
        if not driver.can_force:
            self.notify(
                "a recorded session cannot be forced: load a model to generate live",
                title="Force",
                severity="warning",
            )
            return
        last = self.workspace.steps.get(len(self.workspace.steps) - 1)
        self.engine.pause.set()

        def forced(answer: str | None) -> None:
            if answer:
                self._control("force", answer)

        self.push_screen(ForceTokenScreen(last), forced)

    def action_jump_forward(self) -> None:
        """Force the grammar's jump-forward string (the text it allows and nothing else)."""
        driver = self._require_driver()
        if driver is None:
            return
        if not driver.can_ask:
            self.notify(
                "a recorded session has no grammar matcher: load a model to generate live",
                title="Jump forward",
                severity="warning",
            )
            return
        self.engine.pause.set()
        self._control("jump")

    def _ask_modal(self, op: Control, title: str, hint: str, value: str = "") -> None:
        driver = self._require_driver()
        if driver is None:
            return
        if not driver.can_ask:
            self.notify(
                "a recorded session has no grammar matcher: load a model to ask the grammar",
                title=title,
                severity="warning",
            )
            return

        step = self.scrubbed_step()
        if step is not None:
            hint += f" (here: step {step + 1}'s choice, the grammar replayed to it)"

        def asked(answer: str | None) -> None:
            if answer:
                self._control(op, answer if step is None else (answer, step))

        self.push_screen(AskScreen(title, hint, value), asked)

    def scrubbed_step(self) -> int | None:
        """The step the inspector is scrubbed back to (its choice is what the grammar is asked about), or
        None at the newest step (the grammar answers for the next token)."""
        screen = self.screen
        if isinstance(screen, InspectorScreen) and 0 <= screen.selected < len(self.workspace.steps) - 1:
            return screen.selected
        return None

    def action_why_masked(self, token: str = "") -> None:
        """Ask why a token (typed, or the one picked in the candidates) is masked at the current position."""
        self._ask_modal(
            "why",
            "Why is this token masked?",
            "a token's text or id; the grammar answers for the next position (after the last step)",
            token,
        )

    def action_try_string(self) -> None:
        """Feed a string to the grammar from the current position (the generator does not move)."""
        self._ask_modal(
            "try",
            "Test a string against the grammar",
            "the grammar reads it from the next position: accepted, or rejected at char N",
        )

    def ask_where(self) -> None:
        """Ask the grammar where it is now (the inspector's grammar view; no state change)."""
        driver = self.workspace.driver
        if driver is not None and driver.can_ask and not self.workspace.running:
            step = self.scrubbed_step()
            self._control("where", None if step is None else ("", step))

    def on_grammar_answered(self, message: msg.GrammarAnswered) -> None:
        ws = self.workspace
        if message.kind == "where":
            ws.grammar_position = message.position
            ws.grammar_at = (message.at, message.epoch)
        else:
            ws.grammar_answer, ws.grammar_answer_ok = message.text, message.ok
            self.notify(
                message.text,
                title="Why" if message.kind == "why" else "Test string",
                severity="information" if message.ok else "warning",
                timeout=8,
            )
        self.changed("grammar")

    def on_steps_advanced(self, message: msg.StepsAdvanced) -> None:
        self.changed("steps")

    def on_engine_state_changed(self, message: msg.EngineStateChanged) -> None:
        ws = self.workspace
        ws.running = message.running
        ws.constrained = message.constrained
        self.changed("engine")
        if message.notice:
            self.notify(message.notice, severity=message.severity)

    def on_engine_failed(self, message: msg.EngineFailed) -> None:
        self.workspace.running = False
        self.changed("engine")
        self.notify(message.notice, severity=message.severity)
