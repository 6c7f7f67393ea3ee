"""Saves write exactly the file they say (issue 22 item 6): a session recorded with another template never
writes its template over the open template file nor over the project's built-in template; sessions go to
the user data directory (or --session-dir), one unique file per ctrl+s; a replay is labelled with the
session's own template."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from tests.test_tui_app import RecordingApp, settle
from workbench.session import ModelRecord, load_session, save_session, session_from_generation
from workbench.template.source import PROJECT_TEMPLATES, load_template
from workbench.tui.demo import DEMO_TEMPLATE, demo_analysis, demo_steps
from workbench.tui.screens.modals import AskScreen, ConfirmScreen
from workbench.tui.widgets.nav import NavBar

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def other_session(tmp_path: Path) -> Path:
    """A session recorded with a template other than the demo one (its text differs)."""
    from workbench.runtime.chat import Message, Tool

    session = session_from_generation(
        template_text=DEMO_TEMPLATE + "{# the session's own template #}",
        template_name="other-tpl",
        spec=demo_analysis().spec,
        model=ModelRecord(name="recorded-model"),
        messages=[Message("user", "weather?")],
        tools=[Tool("get_weather")],
        settings={},
        prompt="",
        steps=demo_steps(),
        parsed=Message("assistant", content="", tool_calls=()),
    )
    path = tmp_path / "other.session.json"
    save_session(path, session)
    return path


async def _open_session(app: RecordingApp, pilot: Any, path: Path) -> None:
    app.open_session(str(path))
    await settle(app, pilot)


async def test_a_session_of_another_template_never_saves_over_the_open_template(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    open_file = tmp_path / "mine.jinja"
    open_file.write_text(DEMO_TEMPLATE)
    session_path = other_session(tmp_path)
    app = RecordingApp(load_template(open_file), load_model=False, analyze=False, replay_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _open_session(app, pilot, session_path)
        assert app.workspace.source.name == "other-tpl"
        assert "other-tpl" in str(app.screen.query_one(NavBar).render())  # labelled with its own template
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert open_file.read_text() == DEMO_TEMPLATE  # not a byte changed
        assert isinstance(app.screen, AskScreen)  # where to save is asked, with a suggestion
        field = app.screen.query_one("#ask-value", Input)
        assert field.value == str(tmp_path / "other-tpl.jinja")
        await pilot.press("enter")
        await settle(app, pilot)
        saved = tmp_path / "other-tpl.jinja"
        assert saved.read_text().endswith("{# the session's own template #}")
        assert open_file.read_text() == DEMO_TEMPLATE
        assert any(f"saved {saved}" in n for n in app.notes)


async def test_the_projects_built_in_template_is_never_saved_over(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    builtin = PROJECT_TEMPLATES / "chatml-think-tools.jinja"
    before = builtin.read_bytes()
    app = RecordingApp(load_template("chatml-think-tools"), load_model=False, analyze=False, replay_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#source").load_text(DEMO_TEMPLATE + "{# edit #}")  # type: ignore[attr-defined]
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, AskScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert builtin.read_bytes() == before
        # typing the path of an existing file asks before replacing it (default no)
        (tmp_path / "keep.jinja").write_text("precious")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        app.screen.query_one("#ask-value", Input).value = "keep.jinja"
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("enter")
        await settle(app, pilot)
        assert (tmp_path / "keep.jinja").read_text() == "precious"
        assert builtin.read_bytes() == before


async def test_two_saves_within_a_second_write_two_session_files_in_the_data_dir(
    tmp_path: Path, monkeypatch: Any
) -> None:
    work = tmp_path / "checkout"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    session_path = other_session(tmp_path)
    app = RecordingApp(load_template("chatml-think-tools"), load_model=False, analyze=False, replay_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await _open_session(app, pilot, session_path)
        app.switch_mode("inspector")
        await settle(app, pilot)
        for _ in range(5):
            await pilot.press("space")
        await settle(app, pilot)
        monkeypatch.setattr(time, "strftime", lambda fmt: "20260101-000000")  # both in the same second
        await pilot.press("ctrl+s")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        saved = sorted((tmp_path / "data" / "sessions").glob("tui-*.json"))
        assert len(saved) == 2, app.notes
        for path in saved:
            assert len(load_session(path).steps) == 5
        assert not (work / "sessions").exists()  # never into the working folder (the repo's sessions/)


async def test_session_dir_overrides_the_data_dir(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    session_path = other_session(tmp_path)
    app = RecordingApp(
        load_template("chatml-think-tools"),
        load_model=False,
        analyze=False,
        replay_delay=0.0,
        session_dir=tmp_path / "mine",
    )
    async with app.run_test(size=SIZE) as pilot:
        await _open_session(app, pilot, session_path)
        app.switch_mode("inspector")
        await settle(app, pilot)
        await pilot.press("space")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    assert len(list((tmp_path / "mine").glob("tui-*.json"))) == 1
    assert not (tmp_path / "data").exists()


def test_sessions_default_to_the_user_data_dir(monkeypatch: Any) -> None:
    from platformdirs import user_data_dir

    from workbench.tui.paths import sessions_dir

    monkeypatch.delenv("WORKBENCH_DATA_DIR", raising=False)
    assert sessions_dir() == Path(user_data_dir("template-workbench")) / "sessions"
    assert sessions_dir("x") == Path("x")
    assert sessions_dir().is_absolute()  # never the working folder's (the repo's) sessions/
