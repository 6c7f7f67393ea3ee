"""Pilot tests: each screen's main interactions, headless, with no model and the real analysis of the
default template."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable, Input, Static
from textual.worker import WorkerCancelled, WorkerFailed

from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource
from workbench.tui.actions import ACTIONS
from workbench.tui.app import WorkbenchApp
from workbench.tui.demo import DEMO_TEMPLATE, demo_analysis, demo_parser, demo_source, demo_steps
from workbench.tui.messages import AnalysisDone
from workbench.tui.screens.help import HelpScreen
from workbench.tui.widgets.diff_view import DiffPane
from workbench.tui.widgets.notice import Notice
from workbench.tui.widgets.spans import SpanStream

SIZE = (120, 36)
pytestmark = pytest.mark.anyio  # anyio ships a pytest plugin; no extra dependency needed


class RecordingApp(WorkbenchApp):
    """The app with its notifications recorded, so tests can check what the user was told."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[str] = []

    def notify(self, message: str, **kwargs: Any) -> None:  # type: ignore[override]
        self.notes.append(str(message))
        super().notify(message, **kwargs)


def make_app(**kwargs: Any) -> RecordingApp:
    source = demo_source()
    kwargs.setdefault("load_model", False)
    kwargs.setdefault("analyze", False)
    return RecordingApp(source, replay_delay=0.0, **kwargs)


DEMO_SHA = demo_source().sha256


def demo_done() -> AnalysisDone:
    """What the analysis worker posts for the demo template: the real analysis and the text's sha256."""
    return AnalysisDone(demo_analysis(), template_sha=DEMO_SHA)


async def wait_workers(app: WorkbenchApp) -> None:
    """Wait until no worker runs.  A worker that fails makes ``wait_for_complete`` raise: the app reports
    that failure itself (``on_worker_state_changed``), so the wait just goes on with the others."""
    for _ in range(100):
        try:
            await app.workers.wait_for_complete()
            return
        except (WorkerFailed, WorkerCancelled):  # a replaced worker (exclusive) is cancelled: go on
            await asyncio.sleep(0)


async def settle(app: WorkbenchApp, pilot: Any) -> None:
    """Wait until the app is idle: no worker running, including workers that finished work started (the
    app starts its analysis once a warm-up worker has loaded the heavy modules)."""
    idle = 0
    for _ in range(20):
        await pilot.pause()
        await wait_workers(app)
        await pilot.pause()
        busy = (
            any(w.is_running for w in app.workers)
            or getattr(app, "switching_mode", False)
            or getattr(app, "typing_ahead", False)
        )
        # Idle twice in a row: a message posted after a refresh (the keys held during a screen switch
        # are posted once the new screen is drawn) may start a worker only on the next pass.
        idle = 0 if busy else idle + 1
        if idle == 2:
            return


def text_of(widget: Static) -> str:
    """What a Static shows, as plain text (rich renderables are rendered at a fixed width)."""
    content = widget.content
    if isinstance(content, (str, Text)):
        return str(content)
    console = Console(width=100, file=io.StringIO(), record=True)
    console.print(content)
    return console.export_text()


# ---------------------------------------------------------------------------------------------- template
async def test_template_preview_renders_and_a_syntax_error_names_its_line() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        preview = app.screen.query_one("#preview", Static)
        assert "<|im_start|>user" in text_of(preview)
        notice = app.screen.query_one("#render-error", Notice)
        assert notice.has_class("-hidden")
        editor = app.screen.query_one("#source")
        editor.text = "line one\n{% if %}\n"  # type: ignore[attr-defined]
        await pilot.pause(0.4)
        await settle(app, pilot)
        assert notice.has_class("-error")
        assert "line 2" in text_of(notice)
        assert app.workspace.template_text == "line one\n{% if %}\n"  # the broken edit is kept, not lost
        assert "<|im_start|>user" in text_of(preview)  # the last good preview stays visible


async def test_preview_passes_tool_call_arguments_as_written() -> None:
    """transformers hands a template the arguments object it was given; xml-tagged-args iterates it (and
    refuses a JSON string), so the preview must render what `workbench render` renders, not a string."""
    from workbench.template.render import render
    from workbench.template.source import load_template

    source = load_template("xml-tagged-args")
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
    ]
    app = RecordingApp(source, replay_delay=0.0, load_model=False, analyze=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#messages").text = json.dumps(messages)  # type: ignore[attr-defined]
        await pilot.pause(0.4)
        await settle(app, pilot)
        assert app.screen.query_one("#render-error", Notice).has_class("-hidden")
        ws = app.workspace
        tools = json.loads(ws.tools_json) if ws.tools_json.strip() else None
        kwargs = {**ws.kwargs.to_kwargs(), **source.render_kwargs()}
        expected = render(source.text, messages, tools=tools, **kwargs)
        assert "<parameter=city>\nParis\n</parameter>" in expected
        assert text_of(app.screen.query_one("#preview", Static)).rstrip("\n") == expected.rstrip("\n")


async def test_template_kwargs_and_bad_messages_json_update_the_preview_or_explain() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#kw-agp").value = True  # type: ignore[attr-defined]
        await settle(app, pilot)
        assert text_of(app.screen.query_one("#preview", Static)).endswith("<|im_start|>assistant\n")
        app.screen.query_one("#kw-think").value = False  # type: ignore[attr-defined]
        await settle(app, pilot)
        preview = text_of(app.screen.query_one("#preview", Static))
        assert preview.endswith("assistant\n<think>\n\n</think>\n\n")
        app.screen.query_one("#messages").text = "[{"  # type: ignore[attr-defined]
        await pilot.pause(0.4)
        await settle(app, pilot)
        notice = app.screen.query_one("#render-error", Notice)
        assert notice.has_class("-error") and "messages JSON" in text_of(notice)


async def test_template_edits_survive_a_trip_to_another_screen() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#source").text = "edited {{ 1 + 1 }}"  # type: ignore[attr-defined]
        await pilot.pause()
        app.set_focus(None)
        await pilot.press("3")
        assert app.current_mode == "generate"
        await pilot.press("1")
        await settle(app, pilot)
        assert app.screen.query_one("#source").text == "edited {{ 1 + 1 }}"  # type: ignore[attr-defined]
        assert text_of(app.screen.query_one("#preview", Static)) == "edited 2"


# ---------------------------------------------------------------------------------------------- analysis
async def test_analysis_shows_probes_and_the_selected_probes_diff() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        probes = app.screen.query_one("#probes", DataTable)
        ids = [p.id for p in demo_analysis().probes]
        assert probes.row_count == len(ids) and "T1" in ids  # the analyzer's own probe results
        probes.focus()
        await pilot.press(*["down"] * ids.index("T1"))
        await pilot.pause()
        pane = app.screen.query_one("#diff", DiffPane)
        right = text_of(pane.query_one("#text-b", Static))
        left = text_of(pane.query_one("#text-a", Static))
        call = '<tool_call>\n{"name": "foofoo", "arguments"'
        assert call in right and call not in left
        markers = app.screen.query_one("#markers", DataTable)
        assert "tools.call_start" in {str(k.value) for k in markers.rows}


async def test_editing_a_marker_marks_the_spec_edited_and_rejects_bad_values() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        markers = app.screen.query_one("#markers", DataTable)
        row = [str(k.value) for k in markers.rows].index("reasoning.mode")
        markers.focus()
        markers.move_cursor(row=row)
        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#edit-value", Input)
        field.value = '"sideways"'
        await pilot.press("enter")
        await pilot.pause()
        assert "not one of" in text_of(app.screen.query_one("#edit-error", Static))  # dialog stays open
        field.value = '"delimiter"'
        await pilot.press("enter")
        await settle(app, pilot)
        spec = app.workspace.spec
        assert spec is not None and spec.reasoning.mode == "delimiter" and spec.provenance.edited
        assert "spec edited" in app.screen.query_one("#nav").status  # type: ignore[attr-defined]


async def test_a_template_the_analysis_cannot_read_shows_an_error_panel_not_a_crash() -> None:
    source = TemplateSource(text="{% for m in messages %}{{ m.content }}", name="broken", origin="tests")
    app = RecordingApp(source, load_model=False, analyze=True, replay_delay=0.0, start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        notice = app.screen.query_one("#analysis-notice", Notice)
        assert notice.has_class("-error") and "endfor" in text_of(notice)  # the TemplateError's own words
        assert any("endfor" in n for n in app.notes)
        assert app.workspace.spec is None and not app.workspace.analysis_running
        await pilot.press("5")  # the rest of the app still works
        assert app.current_mode == "export"


# ---------------------------------------------------------------------------------------------- generate
async def test_generate_streams_a_replay_in_span_colours_with_the_parsed_message() -> None:
    app = make_app(start_mode="generate")
    steps = demo_steps()
    async with app.run_test(size=SIZE) as pilot:
        app.install_replay(steps, demo_parser, label="demo")
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        stream = app.screen.query_one("#output", SpanStream)
        assert stream.plain == "".join(s.token_text for s in steps)
        parsed = json.loads(app.screen.parsed_json)  # type: ignore[attr-defined]
        assert parsed["tool_calls"][0]["name"] == "get_weather"
        assert parsed["reasoning_content"].strip().startswith("The user asks")
        assert "finished" in str(app.screen.query_one("#gen-status", Static).render())


async def test_sending_without_a_model_explains_instead_of_failing() -> None:
    app = make_app(start_mode="generate")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await pilot.press(*"hello", "enter")
        await settle(app, pilot)
        assert any("no model" in n for n in app.notes)
        assert app.workspace.driver is None


# ---------------------------------------------------------------------------------------------- inspector
async def test_inspector_step_rewind_and_scrub() -> None:
    app = make_app(start_mode="inspector")
    steps = demo_steps()
    async with app.run_test(size=SIZE) as pilot:
        app.install_replay(steps, demo_parser, label="demo")
        await settle(app, pilot)
        for _ in range(10):
            await pilot.press("space")
            await settle(app, pilot)
        assert len(app.workspace.steps) == 10
        for _ in range(3):
            await pilot.press("backspace")
            await settle(app, pilot)
        assert len(app.workspace.steps) == 7
        assert app.screen.query_one("#facts-pane").border_title == "step 7 of 7"
        assert app.screen.query_one("#candidates", DataTable).row_count == len(steps[6].candidates)
        await pilot.press("left", "left")
        await pilot.pause()
        assert app.screen.query_one("#facts-pane").border_title == "step 5 of 7"


async def test_inspector_strikes_masked_candidates_in_the_constrained_region() -> None:
    app = make_app(start_mode="inspector")
    steps = demo_steps()
    target = next(i for i, s in enumerate(steps) if any(not c.allowed for c in s.candidates))
    async with app.run_test(size=SIZE) as pilot:
        app.install_replay(steps[: target + 1], demo_parser, label="demo")
        await pilot.press("r")
        await settle(app, pilot)
        table = app.screen.query_one("#candidates", DataTable)
        for row, cand in enumerate(steps[target].candidates):
            cell = table.get_row_at(row)[1]
            style = cell.style if isinstance(cell.style, Style) else Style.parse(cell.style or "none")
            assert bool(style.strike) == (not cand.allowed)
        assert "constrained" in text_of(app.screen.query_one("#facts", Static))


async def test_force_and_constraint_are_refused_in_a_replay_with_a_reason() -> None:
    app = make_app(start_mode="inspector")
    async with app.run_test(size=SIZE) as pilot:
        app.install_replay(demo_steps(), demo_parser, label="demo")
        await pilot.press("space")
        await settle(app, pilot)
        await pilot.press("f")
        await pilot.press("c")
        await settle(app, pilot)
        assert any("cannot be forced" in n for n in app.notes)
        assert any("recorded constraint" in n for n in app.notes)
        assert len(app.workspace.steps) == 1


async def test_controls_without_anything_to_step_say_what_to_do() -> None:
    app = make_app(start_mode="inspector")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        await settle(app, pilot)
        assert any("nothing to step" in n for n in app.notes)


# ---------------------------------------------------------------------------------------------- export
async def test_the_spec_target_goes_through_the_export_stage(tmp_path: Path) -> None:
    """The analysed spec of the default template passes validation, so a plain export writes it with the
    validation report attached (the refusal of an unvalidated spec is the next test)."""
    spec = demo_analysis().spec
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        out = tmp_path / "demo.spec.json"
        app.screen.query_one("#export-path", Input).value = str(out)
        app.set_focus(None)
        await pilot.press("s")
        await settle(app, pilot)
        assert any(f"wrote {out}" in n for n in app.notes), app.notes
    written = FormatSpec.from_json(out.read_text())
    assert dataclasses.replace(written, provenance=spec.provenance) == spec
    assert written.provenance.validation is not None and written.provenance.validation["validated"]


async def test_a_refused_export_says_why_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.export import ExportError
    from workbench.tui.controllers import export as export_flow

    calls: list[dict[str, Any]] = []

    def export(target: str, **kwargs: Any) -> Any:
        calls.append({"target": target, **kwargs})
        raise ExportError("NOT validated: 3/5 applicable cases pass; pass --force")

    def write_export(result: Any, path: str) -> Path:
        raise AssertionError("nothing may be written after a refusal")

    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        monkeypatch.setattr(export_flow, "export", export)
        monkeypatch.setattr(export_flow, "write_export", write_export)
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "x.json")
        app.set_focus(None)
        await pilot.press("S")
        await settle(app, pilot)
        assert calls and calls[0]["force"] is True and calls[0]["spec"] == demo_analysis().spec
        assert any("3/5" in n and "shift+s" in n for n in app.notes)
        assert not (tmp_path / "x.json").exists()


async def test_validation_report_reaches_the_export_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.tui.controllers import analysis as analysis_flow

    class Report:
        notes = ("one note",)
        cases = ()
        validated = True  # what the verdict on the top line reads (workbench.tui.verdict)
        applicable = tuple(SimpleNamespace(status="pass") for _ in range(5))

        def summary(self) -> str:
            return "validated: 5/5 applicable cases pass"

        def features(self) -> dict[str, Any]:
            return {
                "tool_call": {"status": "pass", "reason": ""},
                "call_ids": {"status": "unsupported", "reason": "the template drops ids"},
            }

    def validate(source: TemplateSource, spec: FormatSpec | None = None) -> Report:
        assert spec is not None and source.text == DEMO_TEMPLATE
        return Report()

    monkeypatch.setattr(analysis_flow, "validate", validate)
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        report = text_of(app.screen.query_one("#report", Static))
        assert "5/5 applicable cases pass" in report
        assert "unsupported call_ids  the template drops ids" in report


async def test_a_failing_validation_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.template.render import TemplateError
    from workbench.tui.controllers import analysis as analysis_flow

    def validate(source: TemplateSource, spec: FormatSpec | None = None) -> Any:
        raise TemplateError("tool_calls is undefined", line=7, kind="undefined")

    monkeypatch.setattr(analysis_flow, "validate", validate)
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        assert app.workspace.validation is None
        assert "tool_calls is undefined" in app.workspace.validation_summary
        assert any("tool_calls is undefined" in n for n in app.notes)
        assert "validation failed" in text_of(app.screen.query_one("#report", Static))


async def test_a_spec_that_misreads_its_template_is_a_warning() -> None:
    """A template that writes its arguments back to front cannot be described by any spec: after the
    automatic validation the person is told which features the spec cannot express, not left with a
    silent wrong spec."""
    from tests.test_selfcheck import REVERSED_TEXT
    from workbench.template.source import TemplateSource

    source = TemplateSource(text=REVERSED_TEXT, name="reversed-arguments", origin="<test>")
    app = RecordingApp(source, replay_delay=0.0, load_model=False, analyze=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        assert "the spec cannot express: tool_call" in app.workspace.validation_summary
        assert any("the spec cannot express tool_call" in n for n in app.notes)


# ---------------------------------------------------------------------------------------------- app-wide
async def test_help_lists_the_screens_keys_and_closes_with_escape() -> None:
    app = make_app(start_mode="inspector")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        from workbench.tui.screens.help import help_keys

        keys = [k.shown for k in help_keys(app.screen.under) if not k.everywhere]
        assert {"space", "backspace", "f", "c"} <= set(keys)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_command_palette_offers_every_action() -> None:
    app = make_app()
    async with app.run_test(size=SIZE):
        titles = " ".join(c.title for c in app.get_system_commands(app.screen))
        for act in ACTIONS:
            if act.action not in ("help", "quit"):
                assert act.title in titles


async def test_a_recorded_session_opens_and_steps_without_a_model(tmp_path: Path) -> None:
    session_mod = pytest.importorskip("workbench.session")
    steps = demo_steps()
    spec = demo_analysis().spec
    from workbench.runtime.chat import Message, Tool

    session = session_mod.session_from_generation(
        template_text=DEMO_TEMPLATE,
        template_name="demo",
        spec=spec,
        model=session_mod.ModelRecord(name="recorded-model"),
        messages=[Message("user", "weather?")],
        tools=[Tool("get_weather")],
        settings={},
        prompt="",
        steps=steps,
        parsed=Message("assistant", content="", tool_calls=()),
    )
    path = tmp_path / "s.json"
    session_mod.save_session(path, session)
    source = TemplateSource(text="{{ 'other' }}", name="other", origin="tests")
    app = RecordingApp(
        source, session=str(path), load_model=False, analyze=False, replay_delay=0.0, start_mode="inspector"
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.workspace.template_text == DEMO_TEMPLATE
        for _ in range(3):
            await pilot.press("space")
            await settle(app, pilot)
        assert [s.token_text for s in app.workspace.steps.all()] == [s.token_text for s in steps[:3]]


async def test_a_corrupt_session_file_is_a_notification_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"version": 1, "steps": [', encoding="utf-8")
    app = RecordingApp(
        TemplateSource(text=DEMO_TEMPLATE, name="demo", origin="tests"),
        session=str(path),
        load_model=False,
        analyze=False,
        replay_delay=0.0,
        start_mode="inspector",
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert any(n.startswith(f"session {path}:") for n in app.notes), app.notes
        assert app.workspace.driver is None and app.is_running


async def test_malformed_stage_data_becomes_a_notification_not_a_traceback() -> None:
    class Broken:
        def __init__(self) -> None:
            self.spec = demo_analysis().spec
            self.probes = [object()]  # no id, no question: what a half-built stage might hand over
            self.warnings: list[str] = []

    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(AnalysisDone(Broken(), template_sha=DEMO_SHA))  # type: ignore[arg-type]
        await settle(app, pilot)
        assert any("could not draw" in n for n in app.notes)
        assert app.is_running
        await pilot.press("5")  # the rest of the app still works
        assert app.current_mode == "export"


async def test_output_view_wraps_incrementally_to_the_same_rows_as_a_full_wrap() -> None:
    from workbench.runtime.events import Event

    app = make_app(start_mode="generate")
    async with app.run_test(size=(60, 24)) as pilot:
        stream = app.screen.query_one("#output", SpanStream)
        chunks = ["word " * 7, "more\n", "x" * 95, "\n\nend ", "tail " * 12]
        for chunk in chunks:  # one event at a time, as steps arrive
            stream.extend([Event("content", chunk)])
        await pilot.pause()
        width = stream.scrollable_content_region.width
        full = sum(len(Text(line).wrap(app.console, width)) for line in "".join(chunks).split("\n"))
        assert stream.plain == "".join(chunks)
        assert stream.virtual_size.height == full
