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

import importlib
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import AwaitMount, Widget
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.generation.step import Step
from workbench.runtime.chat import Message
from workbench.runtime.parsing import StreamParser
from workbench.runtime.spec import FormatSpec
from workbench.session import new_parser
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.actions import ACTIONS
from workbench.tui.controllers import model as model_flow
from workbench.tui.controllers import sessions as session_flow
from workbench.tui.controllers import spec_file as spec_flow
from workbench.tui.controllers.engine import Control, EngineController
from workbench.tui.errors import Refused, one_line
from workbench.tui.failures import failure_message
from workbench.tui.guard import Guarded
from workbench.tui.key_order import KeyOrder, typed_text
from workbench.tui.keys import acts_while_typing, is_text_field
from workbench.tui.paths import recovery_dir, sessions_dir
from workbench.tui.recovery import edits_digest, unsaved_edits, write_recovery
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.modals import AskScreen, ConfirmScreen, ForceTokenScreen
from workbench.tui.screens.template import TemplateScreen
from workbench.tui.steps import Driver, ReplayDriver
from workbench.tui.workspace import ModelState, Workspace

if TYPE_CHECKING:
    from workbench.generation.step import Step
    from workbench.runtime.parsing import StreamParser

#: The screens imported on first use: mode -> (module, class).
LAZY_SCREENS: dict[str, tuple[str, str]] = {
    "analysis": ("workbench.tui.screens.analysis", "AnalysisScreen"),
    "generate": ("workbench.tui.screens.generate", "GenerateScreen"),
    "inspector": ("workbench.tui.screens.inspector", "InspectorScreen"),
    "export": ("workbench.tui.screens.export", "ExportScreen"),
}


def lazy_screen(mode: str) -> type[WorkbenchScreen]:
    """The screen class of ``mode``, imported now if it was not yet."""
    module, name = LAZY_SCREENS[mode]
    cls: type[WorkbenchScreen] = getattr(importlib.import_module(module), name)
    return cls


def analysis_flow() -> Any:
    """The analysis workflow (``workbench.tui.controllers.analysis``), imported on first use: it pulls in
    the analysis and validation packages, which load in the warm-up worker after the first paint."""
    return importlib.import_module("workbench.tui.controllers.analysis")


def generate_flow() -> Any:
    """The generation workflow (``workbench.tui.controllers.generate``), imported on first use."""
    return importlib.import_module("workbench.tui.controllers.generate")


def export_flow() -> Any:
    """The export workflow (``workbench.tui.controllers.export``), imported on first use: it pulls in every
    export target."""
    return importlib.import_module("workbench.tui.controllers.export")


def warm_imports() -> msg.Warmed:
    """Import what the first analysis needs and the screens not shown yet (worker thread, after the first
    paint): the UI thread then never waits on an import, and the first switch only builds widgets."""
    analysis_flow()
    generate_flow()
    importlib.import_module("workbench.tui.screens.cases")
    for module, _ in LAZY_SCREENS.values():
        importlib.import_module(module)
    export_flow()
    return msg.Warmed()


class WorkbenchApp(Guarded, App[None]):
    """Template Workbench in the terminal (see docs/tui.md)."""

    TITLE = "Template Workbench"
    CSS_PATH = str(Path(__file__).with_name("app.tcss"))
    # The first screen is imported with the app; the others when first shown (their modules pull in the
    # analysis, export and decode views), warmed in a worker thread once the first screen is drawn.
    MODES: ClassVar[dict[str, Any]] = {
        "template": TemplateScreen,
        "analysis": lambda: lazy_screen("analysis")(),
        "generate": lambda: lazy_screen("generate")(),
        "inspector": lambda: lazy_screen("inspector")(),
        "export": lambda: lazy_screen("export")(),
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
        Binding("ctrl+r", "analyze", "Analyze", show=False, priority=True),
        Binding("ctrl+s", "save", "Save (template on Template, else session)", show=False, priority=True),
        Binding("ctrl+o", "load_spec", "Load spec", show=False, priority=True),
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
        session_dir: str | Path | None = None,
        spec: FormatSpec | None = None,
        spec_path: str = "",
    ) -> None:
        super().__init__()
        self.workspace = Workspace(source=source)
        self._start_spec = (spec, spec_path) if spec is not None else None
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
        self._held_keys: list[events.Key | events.Paste] = []
        self.key_order = KeyOrder(self._release_held, self.set_timer)
        self.session_dir = sessions_dir(session_dir)
        #: Every unexpected error reported (``report_error``), as "where: one line"; tests assert it stays
        #: empty, and the recovery copy is made once per state of the edits.
        self.errors: list[str] = []
        self._recovered = ""
        self._quit_asked = False

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
        # Everything else waits until the first screen is drawn: the person sees it at once, and keys act.
        self.call_after_refresh(self._after_first_paint)

    def _after_first_paint(self) -> None:
        self._start_worker(warm_imports, group="warm")

    def on_warmed(self, message: msg.Warmed) -> None:
        """The heavy modules are loaded (or failed to, said in ``message.error``): start the work the
        command line asked for (a session, a spec, the analysis)."""
        if not self.screen_stack:  # the app is closing (quit before the warm-up finished)
            return
        if message.error:
            self.notify(message.error, title="Loading the workbench failed", severity="error")
        if self._session_path:
            self.open_session(self._session_path)
        elif self._start_spec is not None:
            self.install_spec(*self._start_spec)
        elif self._want_analysis:
            self.action_analyze()
        if self._want_model:
            # The model loads when a screen that needs it opens (ensure_model): importing torch and
            # transformers holds the interpreter lock for seconds at a time, and must not do so while the
            # person is reading the template or the analysis.
            self.workspace.model_notice = "the model loads when Generate or the Inspector opens"
            self.changed("model")
        else:
            self.workspace.model_notice = "no model loaded (started without one)"
            self.model_state = "skipped"

    # ------------------------------------------------------------------ unexpected errors and quitting
    def report_error(self, error: BaseException, where: str) -> None:
        """The one handler of unexpected errors: one notification, the traceback in the log, the app stays
        up, and unsaved edits are copied to the recovery folder (once per state of the edits)."""
        import traceback

        self.errors.append(f"{where}: {one_line(error)}")
        self.log.error(f"{where} failed:\n" + "".join(traceback.format_exception(error)))
        note = one_line(error)
        digest = edits_digest(self.workspace)
        if unsaved_edits(self.workspace) and digest != self._recovered:
            try:
                kept = write_recovery(self.workspace, recovery_dir())
            except Exception as exc:  # a full disk must not hide the first error
                note += f"; the unsaved edits could not be copied ({one_line(exc)})"
            else:
                self._recovered = digest
                note += f"; unsaved edits copied to {kept}"
        self.notify(note, title=f"Unexpected error ({where})", severity="error", timeout=15)

    def _handle_exception(self, error: Exception) -> None:
        """Textual's handler of last resort (timers, callbacks, workers that exit on error) ends the app;
        here it reports instead.  Before the app runs, Textual's own handling stays."""
        if not self.is_running:
            super()._handle_exception(error)
            return
        try:
            self.report_error(error, "textual")
        except Exception:
            super()._handle_exception(error)

    async def run_action(
        self,
        action: str | Any,
        default_namespace: Any = None,
        namespaces: Any = None,
    ) -> bool:
        """Every action (a key, the palette, a click) runs here: one that raises is reported, not fatal."""
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except Exception as error:
            self.report_error(error, f"action {action if isinstance(action, str) else '?'}")
            return True

    async def action_quit(self) -> None:
        """``ctrl+q``: quit at once, or ask first when edits would be lost (``ctrl+q`` again: quit)."""
        edits = unsaved_edits(self.workspace)
        if not edits or self._quit_asked:
            self.exit()
            return
        self._quit_asked = True

        def answered(yes: bool | None) -> None:
            self._quit_asked = False
            if yes:
                self.exit()

        self.push_screen(
            ConfirmScreen(
                "Quit and lose the unsaved edits?",
                "Not saved: "
                + "; ".join(edits)
                + ". ctrl+s on Template saves the template, s on Export writes the spec. ctrl+q again quits.",
                yes="Quit",
            ),
            answered,
        )

    def on_unmount(self) -> None:
        """Quitting never waits on a template: renders still running in the render worker are cancelled, so
        a thread stuck in a hostile template cannot keep the process alive after ctrl+q."""
        from workbench.template.render import cancel_renders

        cancel_renders()

    def shown(self, mode: str) -> WorkbenchScreen | None:
        """The screen on top when it is the workbench screen of ``mode`` (not a dialog over it), else None."""
        screen = self.screen
        return screen if isinstance(screen, WorkbenchScreen) and mode == screen.MODE else None

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
        """Switch screens; keys typed until the new screen is drawn wait for it, then act on it in order.

        Textual makes the new mode current at once, before a slow screen has mounted and drawn, so a key
        typed in the meantime would act on a screen that is not there yet (or be lost): typed ahead, ``5``
        then ``s`` must export from the Export screen once it is drawn, as if the switch had been instant.
        """
        if mode != self.current_mode:
            self.switching_mode = True
            self._switch_token += 1
            token = self._switch_token
            # A screen that never reports being drawn must not leave the keyboard dead.
            self.set_timer(2.0, lambda: self.end_mode_switch(token))
        return super().switch_mode(mode)

    def end_mode_switch(self, token: int | None = None) -> None:
        """The switched-to screen is drawn: the keys typed meanwhile act now, in order (``token`` ends only
        that switch)."""
        if token is None or token == self._switch_token:
            self.switching_mode = False
            self._release_held()

    @property
    def typing_ahead(self) -> bool:
        """True while typed input waits or is on its way to a widget (tests wait for it to settle)."""
        return bool(self._held_keys) or self.key_order.pending

    def _release_held(self) -> None:
        """Nothing holds the keyboard back any more: the held input acts, in order, from the app's own
        message loop.  (A Key made in a screen's refresh callback would have that screen as its sender,
        and Textual stops a message from bubbling past its sender, so it never reached the bindings.)"""
        if self._held_keys and not self.switching_mode and not self.key_order.pending:
            self.call_later(self._take_held)

    async def _take_held(self) -> None:
        while self._held_keys and not self.switching_mode:
            event = self._held_keys[0]
            if self.key_order.waiting(event, self._text_field()):
                return  # the key taken before it set the barrier up again: its release resumes here
            self._held_keys.pop(0)
            await self._take(event)

    def _text_field(self) -> Widget | None:
        focused = self.focused
        return focused if focused is not None and is_text_field(focused) else None

    async def on_event(self, event: events.Event) -> None:
        """Input first passes three guards: input typed during a screen switch waits for the new screen,
        input never overtakes the input typed before it (``workbench.tui.key_order``), and typed text
        stays text."""
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            if isinstance(event, events.Key) and event.key == "ctrl+q":
                await super().on_event(event)  # quitting never waits
                return
            if self.switching_mode or self._held_keys or self.key_order.waiting(event, self._text_field()):
                why = "a screen switch is in progress" if self.switching_mode else "earlier input is pending"
                self.log.debug(f"{event!r} held: {why}")
                self._held_keys.append(event)
                return
            await self._take(event)
            return
        await super().on_event(event)

    async def _take(self, event: events.Key | events.Paste) -> None:
        """Give one key or paste to the focused text field, or to the bindings and the focused widget, and
        record it as on its way until it has been handled."""
        field = self._text_field()
        if field is not None and (isinstance(event, events.Paste) or not acts_while_typing(event.key)):
            # Straight to the field: no binding, not even a priority one, sees a typed character.
            field._forward_event(event)
            self.key_order.sent(field.ancestors_with_self, text_only=typed_text(event))
            return
        target: Widget | Screen[Any] = self.focused or self.screen
        await super().on_event(event)
        nodes: list[Any] = [n for n in target.ancestors_with_self if n is not self]
        if self.screen not in nodes:  # an action brought another screen up: wait until it is mounted
            nodes.append(self.screen)
        self.key_order.sent([*nodes, self], text_only=False)

    # ------------------------------------------------------------------ simple actions
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_focus_chat(self) -> None:
        self.switch_mode("generate")
        screen = self.shown("generate")
        if screen is not None:
            screen.focus_chat()  # type: ignore[attr-defined]

    def action_tool_result(self) -> None:
        """Type a tool result for the last assistant turn's call (palette; `t` on Generate)."""
        self.switch_mode("generate")
        screen = self.shown("generate")
        if screen is not None:
            screen.action_tool_result()  # type: ignore[attr-defined]

    def action_new_conversation(self) -> None:
        """Clear the Generate screen's conversation, asking first (palette; `n` on Generate)."""
        self.switch_mode("generate")
        screen = self.shown("generate")
        if screen is not None:
            screen.action_new_conversation()  # type: ignore[attr-defined]

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
        """Re-analyze; asks first when that would discard hand edits of the spec no export has saved."""
        self.confirm_first(
            self.workspace.spec_unsaved,
            self._analyze,
            partial(
                ConfirmScreen,
                "Re-analyze and discard the spec edits?",
                "The spec has hand edits no export has written; a new analysis replaces the spec.",
                yes="Discard and analyze",
            ),
            "kept the edited spec (export it with s on Export to keep it)",
            "Analyze",
        )

    def confirm_first(
        self,
        ask_first: bool,
        proceed: Callable[[], None],
        ask: Callable[[], ConfirmScreen],
        declined: str,
        title: str,
    ) -> None:
        """Run ``proceed`` now, or, when ``ask_first`` (it would discard hand edits of the spec no export has
        saved, or overwrite a file), once the person says yes on the dialog ``ask`` makes; ``declined`` is
        the note when they say no.

        Every action that would lose work asks this one way (no is the default), so nothing is lost
        without a yes.
        """
        if not ask_first:
            proceed()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                proceed()
            else:
                self.notify(declined, title=title)

        self.push_screen(ask(), answered)

    def on_request_analysis(self, message: msg.RequestAnalysis) -> None:
        self.action_analyze()

    def _analyze(self, *, replace_spec: bool = True) -> None:
        source = analysis_flow().prepare_analysis(self.workspace)
        self.changed("analysis")
        job = partial(analysis_flow().compute_analysis, source, replace_spec=replace_spec)
        self._start_worker(job, group="analysis")

    # ------------------------------------------------------------------ a spec from a file
    def action_load_spec(self) -> None:
        """Ask for a spec file (or analyze --json output) and use it from now on (palette; ``ctrl+o``).

        Once: a second ``ctrl+o`` while the dialog is up (pressed again because the first seemed slow)
        stacked a second dialog, which then kept the keys typed after the first one closed."""
        if getattr(self.screen, "purpose", "") == "load-spec":
            return

        def answered(path: str | None) -> None:
            if path and path.strip():
                self._start_worker(partial(spec_flow.read_spec, path.strip()), group="spec", detail=path)

        self.push_screen(
            AskScreen(
                "Load spec",
                "a spec file (workbench export --target spec) or workbench analyze --json output; Generate, "
                "the Inspector and Export use it from now on",
                self.workspace.spec_origin.removeprefix("spec file ") if self.workspace.spec_origin else "",
                purpose="load-spec",
            ),
            answered,
        )

    def on_spec_loaded(self, message: msg.SpecLoaded) -> None:
        """A spec file was read: use it, asking first when that would discard hand edits."""
        self.confirm_first(
            self.workspace.spec_unsaved,
            partial(self.install_spec, message.spec, message.path),
            partial(
                ConfirmScreen,
                "Load the spec and discard the spec edits?",
                "The spec has hand edits no export has written.",
                yes="Discard and load",
            ),
            "kept the edited spec",
            "Load spec",
        )

    def install_spec(self, spec: FormatSpec, path: str) -> None:
        """Make ``spec`` the one every screen uses, validate it against the template, and (once) analyze
        the template for the probes without replacing the spec."""
        ws = self.workspace
        spec_flow.accept_spec(ws, spec, path)
        self.changed("spec")
        note = spec_flow.template_note(ws, spec)
        self.notify(
            f"using {Path(path).name}" + (f"; {note}" if note else ""),
            title="Spec loaded",
            severity="warning" if note else "information",
        )
        if ws.analysis is None and not ws.analysis_running and self._want_analysis:
            self._analyze(replace_spec=False)
        self.action_validate(quiet=True)

    def on_analysis_done(self, message: msg.AnalysisDone) -> None:
        analysis_flow().accept_analysis(self.workspace, message)
        self.changed("analysis")
        self.changed("spec")
        # The analysis checks itself: the template's round-trip renders parsed back with the new spec, so a
        # feature the spec cannot express is a warning now, not a surprise at export.
        self.action_validate(quiet=True)

    def on_analysis_failed(self, message: msg.AnalysisFailed) -> None:
        analysis_flow().accept_analysis_failure(self.workspace, message.error)
        self.changed("analysis")
        self.notify(message.error, title="Analysis failed", severity="error")

    # ------------------------------------------------------------------ spec edits and validation
    def on_request_spec_edit(self, message: msg.RequestSpecEdit) -> None:
        """Install an edited spec and re-validate it (the spec is already checked by ``with_edit``)."""
        analysis_flow().accept_spec_edit(self.workspace, message.spec)
        self.changed("spec")
        if message.note:
            self.notify(message.note, title="Spec edited")
        self.action_validate(quiet=True)

    def action_validate(self, quiet: bool = False) -> None:
        try:
            spec, source = analysis_flow().prepare_validation(self.workspace)
        except Refused as refusal:
            if not quiet:
                self._refuse(refusal)
            return
        self.changed("validation")
        switches = analysis_flow().validation_kwargs(self.workspace)  # the Kwargs tab's, as --kw
        self._start_worker(
            partial(analysis_flow().compute_validation, spec, source, switches), group="validation"
        )

    def action_export(self) -> None:
        """The palette's "Export": on the Export screen it exports; elsewhere it shows that screen."""
        screen = self.shown("export")
        if screen is not None:
            screen.action_export()  # type: ignore[attr-defined]
        else:
            self.switch_mode("export")
            self.notify("choose the target and path, then s exports", title="Export")

    def action_export_validated(self) -> None:
        """Straight to Export with a validated spec; otherwise say what is missing and stay."""
        ws = self.workspace
        if ws.spec is None:
            self.notify("no spec yet: analyze first (a)", title="Export", severity="warning")
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
        from workbench.tui.screens.cases import CasesScreen

        self.push_screen(CasesScreen(report))

    def on_request_validation(self, message: msg.RequestValidation) -> None:
        self.action_validate(quiet=message.quiet)

    def on_validation_done(self, message: msg.ValidationDone) -> None:
        analysis_flow().accept_validation(self.workspace, message)
        self.changed("validation")
        if message.error:
            self.notify(message.error, title="Validation failed", severity="error")
        elif message.report is not None and (warning := analysis_flow().spec_warning(message.report)):
            self.notify(warning, title="The spec misreads the template", severity="warning")

    # ------------------------------------------------------------------ export
    def on_request_export(self, message: msg.RequestExport) -> None:
        """Export the current spec (validated first by the export stage)."""
        try:
            job = export_flow().prepare_export(self.workspace, message)
        except Refused as refusal:
            self._refuse(refusal)
            return
        self.notify(f"exporting {job.target}… (validates first)", title="Export")
        self._start_worker(partial(export_flow().run_export, job), group="export", detail=job.target)

    def on_export_done(self, message: msg.ExportDone) -> None:
        if not message.error and message.spec is not None:
            self.workspace.saved_spec = message.spec
        note = export_flow().export_notice(message)
        self.notify(note.text, title=note.title, severity=note.severity, timeout=note.timeout)

    # ------------------------------------------------------------------ model
    def ensure_model(self) -> None:
        """Start loading the model if it is wanted and not loading or loaded yet (Generate and the
        Inspector call it when they open; so does a request to generate).  No-op otherwise."""
        if self._want_model and self.model_state == "none":
            self.model_state = "loading"
            self._start_worker(
                partial(model_flow.load_model, self._model_ref, self.post_message), group="model"
            )

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
            self._analyze(replace_spec=False)  # the session's spec is what its steps were recorded with
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
        """``ctrl+s``: a dialog that takes a value submits it; the Template screen saves the template file;
        every other screen saves a session."""
        screen = self.screen
        submit = getattr(screen, "action_submit", None)
        if callable(submit):
            submit()
        elif isinstance(screen, TemplateScreen):
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
            saved = session_flow.save_to_sessions(session, self.session_dir)
        except Exception as exc:  # SessionError (folder not writable, ...)
            self.notify(one_line(exc), title="Save session failed", severity="error")
            return
        self.notify(f"saved {saved}", title="Session")

    # ------------------------------------------------------------------ generation and engine controls
    def on_request_generate(self, message: msg.RequestGenerate) -> None:
        """Begin a new generation for the user's message (from the Generate screen)."""
        ws = self.workspace
        self.ensure_model()
        try:
            request = generate_flow().prepare_generation(ws, message)
        except Refused as refusal:
            self._refuse(refusal)
            return
        generate_flow().accept_generation(ws, request)  # the prompt is now the conversation
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

    def _live(self, can: Callable[[Driver], bool], refusal: str, title: str) -> bool:
        """True when there is a driver and it ``can`` do what needs a live model (force a token, ask the
        grammar); else False, having said why (``refusal``): a recorded session replays, it cannot branch."""
        driver = self._require_driver()
        if driver is not None and not can(driver):
            self.notify(refusal, title=title, severity="warning")
            return False
        return driver is not None

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
        if not self._live(
            lambda d: d.can_force,
            "a recorded session cannot be forced: load a model to generate live",
            "Force",
        ):
            return
        last = self.workspace.steps.get(len(self.workspace.steps) - 1)
        self.engine.pause.set()

        def forced(answer: str | None) -> None:
            if answer:
                self._control("force", answer)

        self.push_screen(ForceTokenScreen(last), forced)

    def action_jump_forward(self) -> None:
        """Force the grammar's jump-forward string (the text it allows and nothing else)."""
        if not self._live(
            lambda d: d.can_ask,
            "a recorded session has no grammar matcher: load a model to generate live",
            "Jump forward",
        ):
            return
        self.engine.pause.set()
        self._control("jump")

    def _ask_modal(self, op: Control, title: str, hint: str, value: str = "") -> None:
        if not self._live(
            lambda d: d.can_ask,
            "a recorded session has no grammar matcher: load a model to ask the grammar",
            title,
        ):
            return

        step = self.shown_step() if op == "why" else self.scrubbed_step()
        if step is not None:
            hint += f" (here: step {step + 1}'s choice, the grammar replayed to it)"

        def asked(answer: str | None) -> None:
            if answer:
                self._control(op, answer if step is None else (answer, step))

        self.push_screen(AskScreen(title, hint, value), asked)

    def scrubbed_step(self) -> int | None:
        """The step the inspector is scrubbed back to (its choice is what the grammar is asked about), or
        None at the newest step (the grammar answers for the next token)."""
        selected = getattr(self.shown("inspector"), "selected", -1)
        if 0 <= selected < len(self.workspace.steps) - 1:
            return int(selected)
        return None

    def shown_step(self) -> int | None:
        """The step the inspector shows (scrubbed to, or the newest): "why masked" asks about its choice,
        whose candidates are on screen.  None with no steps (or off the inspector): the next position."""
        screen = self.shown("inspector")
        total = len(self.workspace.steps)
        if screen is None or not total:
            return None
        selected = int(getattr(screen, "selected", -1))
        return selected if 0 <= selected < total else total - 1

    def action_why_masked(self, token: str = "") -> None:
        """Ask why a token (typed, or the one picked in the candidates) was masked at the step shown."""
        self._ask_modal(
            "why",
            "Why is this token masked?",
            "a token's text or id; the grammar answers for the step shown (before any step: the first token)",
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
