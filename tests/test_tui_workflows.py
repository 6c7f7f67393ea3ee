"""The TUI's plumbing: workflows without the app, intent messages, worker results and worker failures."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest
from textual.message import Message as TextualMessage

from tests.test_tui_app import SIZE, RecordingApp, demo_done, make_app, settle
from workbench.export import ExportError
from workbench.tui import messages as msg
from workbench.tui.controllers import analysis as analysis_flow
from workbench.tui.controllers import export as export_flow
from workbench.tui.controllers.engine import EngineController, EngineStopped
from workbench.tui.controllers.generate import prepare_generation
from workbench.tui.demo import demo_parser, demo_source, demo_steps
from workbench.tui.errors import Refused
from workbench.tui.failures import failure_message
from workbench.tui.steps import ControlRefused, ReplayDriver, StepLog
from workbench.tui.workspace import Workspace

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------------------------------- no app
def test_the_engine_controller_replays_into_the_log_and_posts_only_messages() -> None:
    steps = demo_steps()[:12]
    log, posted = StepLog(), []
    engine = EngineController(log, posted.append, replay_delay=0.0)
    engine.install(ReplayDriver(steps, demo_parser))
    engine.control("run")
    assert [s.token_text for s in log.all()] == [s.token_text for s in steps]
    assert log.message is not None and log.message.reasoning_content
    kinds = [type(m).__name__ for m in posted]
    assert kinds[0] == "EngineStateChanged" and kinds[-1] == "EngineStateChanged"
    assert set(kinds[1:-1]) == {"StepsAdvanced"}
    first, last = posted[0], posted[-1]
    assert isinstance(first, msg.EngineStateChanged) and first.running
    assert isinstance(last, msg.EngineStateChanged) and not last.running and last.finished


def test_an_engine_refusal_is_raised_for_the_failure_handler_not_posted() -> None:
    posted: list[TextualMessage] = []
    engine = EngineController(StepLog(), posted.append, replay_delay=0.0)
    engine.install(ReplayDriver(demo_steps()[:3], demo_parser))
    with pytest.raises(ControlRefused, match="recorded constraint"):
        engine.control("constraint", False)
    assert posted == []


def test_an_engine_error_mid_run_becomes_a_stop_notice_naming_the_cause() -> None:
    class Exploding(ReplayDriver):
        def step(self) -> Any:
            raise RuntimeError("the model fell over")

    engine = EngineController(StepLog(), lambda m: None, replay_delay=0.0)
    engine.install(Exploding(demo_steps()[:3], demo_parser))
    with pytest.raises(EngineStopped) as caught:
        engine.control("run")
    report = failure_message("engine-control", "engine-control:run", caught.value)
    assert isinstance(report, msg.EngineFailed) and report.severity == "error"
    assert report.notice == "generation stopped: the model fell over"


def test_each_worker_group_fails_into_its_own_result_message() -> None:
    boom = ExportError("NOT validated: 3/5 applicable cases pass; pass --force")
    export = failure_message("export", "export:spec", boom)
    assert isinstance(export, msg.ExportDone) and export.target == "spec" and "3/5" in export.error
    session = failure_message("session", "session:/tmp/x.json", ValueError("bad  \n json"))
    assert isinstance(session, msg.ModelFailed) and session.error == "session /tmp/x.json: bad json"
    assert isinstance(failure_message("analysis", "analysis", ValueError("x")), msg.AnalysisFailed)
    assert failure_message("render-preview", "render-preview", ValueError("x")) is None  # loud default


def test_workflows_refuse_with_a_reason_before_any_worker_starts() -> None:
    ws = Workspace(source=demo_source())
    with pytest.raises(Refused, match="no model"):
        prepare_generation(ws, msg.RequestGenerate("hi"))
    with pytest.raises(Refused, match="no spec to export"):
        export_flow.prepare_export(ws, msg.RequestExport("spec", "out.json"))
    with pytest.raises(Refused, match="analyze the template first"):
        analysis_flow.prepare_validation(ws)


def test_the_analysis_workflow_reports_the_sha256_of_the_analysed_text() -> None:
    ws = Workspace(source=demo_source())
    done = analysis_flow.compute_analysis(analysis_flow.prepare_analysis(ws))
    assert re.fullmatch(r"[0-9a-f]{64}", done.template_sha)
    assert done.template_sha == hashlib.sha256(ws.template_text.encode()).hexdigest()
    analysis_flow.accept_analysis(ws, done)
    assert not ws.template_dirty and ws.spec == done.analysis.spec
    ws.template_text += "\n"
    assert ws.template_dirty


# ---------------------------------------------------------------------------------------------- pilot
class RecordingMessages(RecordingApp):
    """The app with the messages it handled recorded (after handling them)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[TextualMessage] = []

    async def _on_message(self, message: TextualMessage) -> None:
        await super()._on_message(message)
        self.seen.append(message)


async def test_analysis_done_carries_a_64_hex_sha_of_the_template_text() -> None:
    app = RecordingMessages(demo_source(), load_model=False, analyze=True, replay_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        done = [m for m in app.seen if isinstance(m, msg.AnalysisDone)]
        assert len(done) == 1
        assert re.fullmatch(r"[0-9a-f]{64}", done[0].template_sha)
        assert done[0].template_sha == demo_source().sha256 == app.workspace.analysis_sha
        assert app.workspace.analysis is done[0].analysis


async def test_a_screens_intent_message_starts_the_workflow(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[export_flow.ExportJob] = []

    def run_export(job: export_flow.ExportJob) -> msg.ExportDone:
        runs.append(job)
        return msg.ExportDone(job.target, job.path)

    monkeypatch.setattr(export_flow, "run_export", run_export)
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        app.screen.post_message(msg.RequestExport("spec", "somewhere.json", force=True))
        await settle(app, pilot)
        assert [(j.target, j.path, j.force) for j in runs] == [("spec", "somewhere.json", True)]
        assert runs[0].spec == app.workspace.spec
        assert any("wrote somewhere.json" in n for n in app.notes)


async def test_a_screens_analysis_request_reanalyses_the_edited_text() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.workspace.template_text = demo_source().text.replace("# Tools", "# Functions")
        app.screen.post_message(msg.RequestAnalysis())
        await settle(app, pilot)
        assert app.workspace.analysis is not None and not app.workspace.template_dirty
        assert app.workspace.analysis_sha == app.workspace.template_sha != demo_source().sha256


async def test_a_failing_worker_becomes_exactly_one_notification() -> None:
    def broken() -> None:
        raise RuntimeError("a bug in a stage\nover two lines")

    app = make_app(start_mode="template")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = len(app.notes)
        app._start_worker(broken, group="mystery")
        await settle(app, pilot)
        assert app.notes[before:] == ["a bug in a stage over two lines"]
        assert app.is_running


async def test_an_engine_failure_stops_the_run_with_one_notice() -> None:
    class Exploding(ReplayDriver):
        def step(self) -> Any:
            raise RuntimeError("the model fell over")

    app = make_app(start_mode="inspector")
    async with app.run_test(size=SIZE) as pilot:
        app.install_replay(demo_steps()[:5], demo_parser, label="demo")
        app.engine.install(Exploding(demo_steps()[:5], demo_parser))
        await pilot.press("r")
        await settle(app, pilot)
        assert [n for n in app.notes if "fell over" in n] == ["generation stopped: the model fell over"]
        assert not app.workspace.running and app.is_running


async def test_the_model_state_reactive_reaches_the_workspace_and_the_generate_screen() -> None:
    app = make_app(start_mode="generate")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.model_state == app.workspace.model_state == "skipped"
        app.post_message(msg.ModelFailed("torch is missing"))
        await settle(app, pilot)
        assert app.model_state == app.workspace.model_state == "failed"
        app.screen.post_message(msg.RequestGenerate("hello"))
        await settle(app, pilot)
        assert any(n == "no model: torch is missing" for n in app.notes), app.notes


def test_the_step_log_records_a_step_with_its_message_and_a_rewind_reparses() -> None:
    from workbench.runtime.chat import Message

    log = StepLog()
    steps = demo_steps()[:3]
    for i, step in enumerate(steps):
        assert log.record(step, Message("assistant", content=str(i))) == i + 1
    assert log.message == Message("assistant", content="2")
    epoch = log.epoch
    assert log.truncate(1, Message("assistant", content="0")) == 1
    assert log.epoch == epoch + 1 and log.message == Message("assistant", content="0")
    assert log.record(steps[1], None, ("parse hiccup",)) == 2  # no message: the previous one stays
    assert log.message == Message("assistant", content="0") and log.diagnostics == ("parse hiccup",)


def test_an_export_notice_names_the_way_round_a_refusal() -> None:
    refused = export_flow.export_notice(msg.ExportDone("spec", "", error="NOT validated; pass --force"))
    assert refused.severity == "error" and refused.text.endswith("(shift+s exports anyway)")
    wrote = export_flow.export_notice(msg.ExportDone("tests", "out.py", warnings=("2 cases skipped",)))
    assert wrote == export_flow.Notice("wrote out.py — 2 cases skipped", "Export tests")
