"""Template switches in the TUI (issue 10 item 6): the Analysis screen lists what each value changes, the
Template screen's Kwargs tab offers them, and a chosen value re-renders the preview and is what the TUI's
validation renders with (the TUI's ``--kw``).

The template is the project's effort-switches.jinja: ``reasoning_effort`` "none" makes the generation prompt
close an empty ``[THINK][/THINK]`` block and drops reasoning; ``clear_thinking`` false keeps the reasoning of
earlier turns.  Those facts come from the template's own header, not from the code under test.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Checkbox, DataTable, Input, Select, Static, TabbedContent

from tests.conftest import PROJECT_TEMPLATES
from tests.test_tui_app import RecordingApp, settle, text_of
from workbench.analysis import Analysis
from workbench.formats import analyze
from workbench.generation.step import Step
from workbench.runtime.chat import Message
from workbench.session import save_session, session_from_generation
from workbench.template.source import TemplateSource, load_template
from workbench.tui.controllers.analysis import extra_pairs, switches_of, validation_kwargs, with_pair
from workbench.tui.controllers.sessions import kwargs_from_session
from workbench.tui.messages import AnalysisDone
from workbench.tui.workspace import RenderKwargs

pytestmark = pytest.mark.anyio
SIZE = (140, 44)
EFFORT = PROJECT_TEMPLATES / "new-formats" / "effort-switches.jinja"


@functools.cache
def effort() -> tuple[TemplateSource, Analysis]:
    source = load_template(str(EFFORT))
    return source, analyze(source)


def make_app(**kwargs: Any) -> RecordingApp:
    source, _ = effort()
    kwargs.setdefault("load_model", False)
    kwargs.setdefault("analyze", False)
    return RecordingApp(source, replay_delay=0.0, **kwargs)


def analysed() -> AnalysisDone:
    source, analysis = effort()
    return AnalysisDone(analysis, template_sha=source.sha256)


# ------------------------------------------------------------------------------------------ pure helpers
def test_the_spec_records_the_two_switches_with_their_effects() -> None:
    _, analysis = effort()
    switches = {s.name: s for s in switches_of(analysis.spec)}
    assert set(switches) == {"reasoning_effort", "clear_thinking"}
    none = next(v for v in switches["reasoning_effort"].values if v.value == "none")
    assert "reasoning not rendered" in none.changes and none.start == "content"
    keep = next(v for v in switches["clear_thinking"].values if v.value is False)
    assert keep.effect == "earlier turns keep their reasoning"
    assert switches_of(None) == []


def test_extra_pairs_are_edited_one_key_at_a_time() -> None:
    extra = 'top_k=3 reasoning_effort="low"'
    assert with_pair(extra, "reasoning_effort", "none") == 'top_k=3 reasoning_effort="none"'
    assert with_pair(extra, "clear_thinking", False) == 'top_k=3 reasoning_effort="low" clear_thinking=false'
    assert with_pair(extra, "reasoning_effort", unset=True) == "top_k=3"
    assert extra_pairs("a=1 broken b=true c=text") == {"a": 1, "b": True, "c": "text"}


def test_session_kwargs_map_onto_the_kwargs_tab() -> None:
    recorded = {"enable_thinking": False, "reasoning_effort": "high", "clear_thinking": False, "n": 2}
    kw = kwargs_from_session(recorded, RenderKwargs(add_generation_prompt=True))
    assert kw == RenderKwargs(
        add_generation_prompt=True,
        enable_thinking=False,
        reasoning_effort="high",
        extra="clear_thinking=false n=2",
    )
    assert {k: v for k, v in kw.to_kwargs().items() if k != "add_generation_prompt"} == recorded
    # A value the generic choice does not offer stays an extra pair (what the switch selects read).
    odd = kwargs_from_session({"reasoning_effort": "none"}, RenderKwargs())
    assert (odd.reasoning_effort, odd.extra) == ("", 'reasoning_effort="none"')


# ------------------------------------------------------------------------------------------ the screens
async def test_analysis_screen_lists_the_switches_and_what_each_value_changes() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(analysed())
        await settle(app, pilot)
        table = app.screen.query_one("#switches", DataTable)
        assert table.display and not app.screen.query_one("#no-switches", Static).display
        rows = [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]
    by_setting = {setting: (start, effect) for setting, effect, start in rows}
    start, effect = by_setting['reasoning_effort="none"']
    assert start == "content"
    assert "generation prompt '[ASSISTANT][THINK][/THINK]'" in effect and "reasoning not rendered" in effect
    assert by_setting['reasoning_effort="low"'][1] == "as the default"
    assert by_setting["clear_thinking=false"][1] == "earlier turns keep their reasoning"


async def test_analysis_screen_says_when_there_are_no_switches() -> None:
    from tests.test_tui_app import demo_done
    from tests.test_tui_app import make_app as demo_app

    app = demo_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        assert not app.screen.query_one("#switches", DataTable).display
        none = app.screen.query_one("#no-switches", Static)
        assert "template switches: none found" in text_of(none)


async def test_kwargs_tab_offers_the_switches_and_a_choice_rerenders_and_revalidates() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(analysed())
        await settle(app, pilot)
        screen = app.screen
        screen.query_one("#inputs", TabbedContent).active = "tab-kwargs"
        screen.query_one("#kw-agp", Checkbox).value = True
        await settle(app, pilot)
        effort_select = screen.query_one("#kw-sw-reasoning_effort", Select)
        labels = [str(label) for label, _ in effort_select._options]  # the offered choices
        assert labels[0] == "(not set)"
        assert any(label.startswith('"none" · generation prompt') for label in labels)
        assert screen.query_one("#kw-sw-clear_thinking", Select).value == ""
        assert not screen.query_one("#kw-effort", Select).display  # the template's own values replace it
        preview = screen.query_one("#preview", Static)
        assert text_of(preview).rstrip().endswith("[ASSISTANT]")  # default effort "low": reasoning open
        effort_select.value = '"none"'
        await settle(app, pilot)
        await pilot.pause(0.1)
        await settle(app, pilot)
        assert app.workspace.kwargs.extra == 'reasoning_effort="none"'
        assert screen.query_one("#kw-extra", Input).value == 'reasoning_effort="none"'
        rendered = text_of(preview)
        assert "Reasoning: none" in rendered and rendered.rstrip().endswith("[ASSISTANT][THINK][/THINK]")
        report = app.workspace.validation
        assert report is not None
        assert any("reasoning_effort='none'" in note for note in report.notes)
        # With reasoning switched off the template renders no reasoning: those cases are unsupported.
        assert report.features()["reasoning"]["status"] == "unsupported"
        assert validation_kwargs(app.workspace) == {"reasoning_effort": "none"}
        effort_select.value = ""
        await settle(app, pilot)
        assert app.workspace.kwargs.extra == ""


async def test_opening_a_session_brings_its_kwargs_to_the_kwargs_tab(tmp_path: Path) -> None:
    source, analysis = effort()
    session = session_from_generation(
        template_text=source.text,
        template_name=source.name,
        spec=analysis.spec,
        model=__import__("workbench.session", fromlist=["ModelRecord"]).ModelRecord(name="tiny"),
        messages=[Message("user", content="Hi")],
        tools=[],
        settings={"enable_thinking": True},
        prompt="",
        steps=[
            Step(
                index=0,
                token_id=5,
                token_text="Hello",
                allowed_count=1,
                vocab_size=10,
                constrained=False,
                region="free",
                text="Hello",
            ),
        ],
        parsed=Message("assistant", content="Hello"),
        template_kwargs={"enable_thinking": True, "reasoning_effort": "none", "clear_thinking": False},
    )
    path = save_session(tmp_path / "s.json", session)
    app = make_app(session=str(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.post_message(analysed())
        await settle(app, pilot)
        screen = app.screen
        assert app.workspace.kwargs.extra == 'reasoning_effort="none" clear_thinking=false'
        assert screen.query_one("#kw-extra", Input).value == app.workspace.kwargs.extra
        assert screen.query_one("#kw-sw-reasoning_effort", Select).value == '"none"'
        assert screen.query_one("#kw-sw-clear_thinking", Select).value == "false"
        assert "Reasoning: none" in text_of(screen.query_one("#preview", Static))


async def test_a_tui_saved_session_records_the_switches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_tui_session_save import STEPS, _fake_generator
    from workbench.session import load_session
    from workbench.tui.steps import GeneratorDriver

    monkeypatch.chdir(tmp_path)
    app = make_app(start_mode="inspector", session_dir=tmp_path / "sessions")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(analysed())
        await settle(app, pilot)
        ws = app.workspace
        ws.kwargs.extra = 'reasoning_effort="none"'
        ws.driver = GeneratorDriver(_fake_generator(), None, label="fake")
        ws.steps.reset(STEPS)
        ws.steps.message = Message("assistant", content="café")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    saved = sorted((tmp_path / "sessions").glob("tui-*.json"))
    assert len(saved) == 1, app.notes
    session = load_session(saved[0])
    assert session.template_kwargs == {"enable_thinking": True, "reasoning_effort": "none"}
    assert json.loads(saved[0].read_text(encoding="utf-8"))["template_kwargs"]["reasoning_effort"] == "none"
