"""Keyboard traps: typing stays text, tab leaves the editor, keys during a screen switch wait for the new
screen, and destructive actions ask first (default no)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input, TabbedContent, TextArea

from tests.test_tui_app import demo_done, make_app, settle
from workbench.tui.controllers.sessions import save_to_sessions, unused_session_path
from workbench.tui.keys import acts_while_typing
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.modals import ConfirmScreen
from workbench.tui.widgets.jinja_editor import JinjaEditor

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def test_only_modifier_chords_f_keys_escape_and_tab_act_while_typing() -> None:
    for key in ("ctrl+r", "ctrl+s", "f2", "f12", "escape", "tab", "alt+m"):
        assert acts_while_typing(key), key
    for key in ("1", "a", "s", "question_mark", "space", "S", "backspace", "f"):
        assert not acts_while_typing(key), key


async def test_tab_leaves_the_template_editor_without_editing_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        editor = app.screen.query_one("#source", JinjaEditor)
        editor.focus()
        before = editor.text
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == before
        assert app.focused is not editor
        # ctrl+] indents on purpose.
        editor.focus()
        editor.cursor_location = (0, 0)
        await pilot.press("ctrl+right_square_bracket")
        await pilot.pause()
        assert editor.text.startswith(" ") and editor.text.strip() == before.strip()


async def test_typing_single_keys_into_the_editor_is_text_and_triggers_nothing() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        editor = app.screen.query_one("#source", JinjaEditor)
        editor.focus()
        editor.cursor_location = (0, 0)
        await pilot.press("question_mark", "2", "s", "a", "v", "e")
        await settle(app, pilot)
        assert app.current_mode == "template"
        assert not isinstance(app.screen, HelpScreen)
        assert editor.text.startswith("?2save")
        # The footer offers no single key while the editor has focus; F-keys still switch screens.
        assert all(acts_while_typing(k) for k in app.screen.active_bindings)
        await pilot.press("f2")
        await settle(app, pilot)
        assert app.current_mode == "analysis"


async def test_the_messages_tools_and_kwargs_tabs_are_reachable_by_key_from_the_editor() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#source", JinjaEditor).focus()
        tabs = app.screen.query_one("#inputs", TabbedContent)
        await pilot.press("f7")
        await settle(app, pilot)
        assert tabs.active == "tab-tools" and app.focused is app.screen.query_one("#tools", TextArea)
        await pilot.press("f8")
        await settle(app, pilot)
        assert tabs.active == "tab-kwargs"
        await pilot.press("f6")
        await settle(app, pilot)
        assert tabs.active == "tab-messages" and app.focused is app.screen.query_one("#messages", TextArea)


async def test_keys_typed_during_a_screen_switch_act_once_the_new_screen_is_drawn(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Typed ahead, `5` then `s` exports from the Export screen: the `s` waits until that screen is drawn
    (never acting on a screen not there yet) and is not lost (issue 20's papercut)."""
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        app.switch_mode("export")
        assert app.switching_mode
        await app.on_event(events.Key("s", "s"))
        assert not list(tmp_path.iterdir())  # held while the switch is in progress
        await settle(app, pilot)
        assert not app.switching_mode
        assert app.current_mode == "export"
        assert [p.name for p in tmp_path.iterdir()] == ["chatml-think-tools.spec.json"]  # acted, on Export


async def test_exporting_over_an_existing_file_asks_and_defaults_to_no(tmp_path: Path) -> None:
    target = tmp_path / "out.spec.json"
    target.write_text("precious")
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("s")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("enter")  # the default answer: no
        await settle(app, pilot)
        assert target.read_text() == "precious"
        assert any("kept" in n for n in app.notes)
        await pilot.press("s")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert target.read_text() != "precious"
        assert any(f"wrote {target.resolve()}" in n for n in app.notes)


async def test_reanalysing_an_edited_spec_asks_before_discarding_the_edits() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        spec = app.workspace.spec
        assert spec is not None
        edited = spec.with_edit(**{"tools.call_start": "<call>"})
        from workbench.tui.messages import RequestSpecEdit

        app.post_message(RequestSpecEdit(edited))
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(app, pilot)
        assert app.workspace.spec is not None and app.workspace.spec.tools.call_start == "<call>"
        assert not app.workspace.analysis_running


def test_two_session_saves_in_one_second_never_share_a_name(tmp_path: Path, monkeypatch: Any) -> None:
    import workbench.tui.controllers.sessions as sessions

    def fake_save(path: Path, session: object) -> Path:
        Path(path).write_text("{}")
        return Path(path)

    monkeypatch.setattr(sessions, "save_session", fake_save)
    monkeypatch.setattr(sessions.time, "strftime", lambda fmt: "20260101-000000")
    first = save_to_sessions(object(), tmp_path)  # type: ignore[arg-type]
    second = save_to_sessions(object(), tmp_path)  # type: ignore[arg-type]
    assert first != second and first.exists() and second.exists()
    assert first.is_absolute() and second.name == "tui-20260101-000000-2.json"
    assert unused_session_path(tmp_path, "20260101-000000").name == "tui-20260101-000000-3.json"


async def test_letters_typed_into_an_open_drop_down_search_it_and_fire_no_action() -> None:
    """The tool-choice list searches as you type: `r`, `n`, `?` typed there must not run, clear the
    conversation or open help (a tmux run fired all three)."""
    from textual.widgets import Select
    from textual.widgets._select import SelectOverlay

    app = make_app(start_mode="generate")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        select = app.screen.query_one("#tool-choice", Select)
        select.focus()
        await pilot.press("enter")  # open the list
        await pilot.pause()
        assert isinstance(app.focused, SelectOverlay)
        await pilot.press("r", "question_mark", "n", "e")
        await settle(app, pilot)
        assert app.current_mode == "generate" and not isinstance(app.screen, HelpScreen)
        assert app.workspace.driver is None  # nothing started
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.focused, SelectOverlay)
