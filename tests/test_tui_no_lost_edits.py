"""No edit is ever lost: the call pattern is edited as a document, an exception in any action is one
notification (the app stays up, the unsaved edits are copied to the recovery folder), and quitting with
unsaved edits asks first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static, TextArea

from tests.test_analysis_helpers import analysis_of
from tests.test_tui_app import RecordingApp, make_app, settle, text_of
from workbench.runtime.spec import FormatSpec, to_plain
from workbench.template.source import load_template
from workbench.tui.screens.analysis import AnalysisScreen
from workbench.tui.screens.modals import ConfirmScreen, EditFieldScreen
from workbench.tui.widgets.jinja_editor import JinjaEditor

pytestmark = pytest.mark.anyio
SIZE = (120, 36)
TYPED = Path(__file__).resolve().parents[1] / "templates" / "new-formats" / "typed-attr-args.jinja"


async def _open_row(app: RecordingApp, pilot: Any, path: str) -> EditFieldScreen:
    table = app.screen.query_one("#markers", DataTable)
    table.focus()
    table.move_cursor(row=[str(k.value) for k in table.rows].index(path))
    await pilot.press("e")
    await pilot.pause()
    assert isinstance(app.screen, EditFieldScreen)
    return app.screen


def _install(app: RecordingApp, spec: FormatSpec) -> None:
    app.workspace.spec = app.workspace.base_spec = spec
    app.changed("spec")


async def test_the_call_pattern_is_edited_as_a_json_document_and_the_edit_is_checked() -> None:
    spec = analysis_of(str(TYPED)).spec
    assert spec.tools.pattern.defined
    app = RecordingApp(
        load_template(TYPED), load_model=False, analyze=False, replay_delay=0.0, start_mode="analysis"
    )
    async with app.run_test(size=SIZE) as pilot:
        _install(app, spec)
        await settle(app, pilot)
        dialog = await _open_row(app, pilot, "tools.pattern")
        document = dialog.query_one("#edit-document", TextArea)
        data = json.loads(document.text)
        assert data == to_plain(spec.tools.pattern)  # the editor starts with the value's JSON form
        # a bad value stays in the dialog with the field named, the text as typed
        document.text = json.dumps({**data, "args": "yaml"})
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, EditFieldScreen)
        assert "yaml" in text_of(app.screen.query_one("#edit-error", Static))
        assert "yaml" in document.text
        # a good value is installed, marked edited and validated again
        data["call"] = [*data["call"][:-1], data["call"][-1] + " "]
        document.text = json.dumps(data)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, AnalysisScreen)
        edited = app.workspace.spec
        assert edited is not None and edited.provenance.edited
        assert list(edited.tools.pattern.call) == data["call"]
        assert app.workspace.validation is not None


async def test_a_nested_part_of_the_pattern_has_a_row_of_its_own() -> None:
    spec = analysis_of(str(TYPED)).spec
    assert spec.tools.pattern.arguments
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        _install(app, spec)
        await settle(app, pilot)
        dialog = await _open_row(app, pilot, "tools.pattern.arguments.0.value")
        shown = json.loads(dialog.query_one("#edit-value", Input).value)
        assert shown == spec.tools.pattern.arguments[0].value
        await pilot.press("escape")
        await pilot.pause()
        dialog = await _open_row(app, pilot, "tools.pattern.encoding.key_sep")
        dialog.query_one("#edit-value", Input).value = '" = "'
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.workspace.spec is not None
        assert app.workspace.spec.tools.pattern.encoding.key_sep == " = "
        assert app.workspace.spec.tools.pattern.arguments == spec.tools.pattern.arguments


@pytest.mark.tui_error
async def test_an_action_that_raises_is_one_notification_and_the_edits_survive(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path))

    def broken(self: AnalysisScreen) -> None:
        raise RuntimeError("a bug in an action")

    monkeypatch.setattr(AnalysisScreen, "action_edit_marker", broken)
    app = make_app(start_mode="template")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#source", JinjaEditor).load_text(app.workspace.template_text + "{# mine #}")
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("e")
        await settle(app, pilot)
        assert app.is_running and app.current_mode == "analysis"
        assert any("a bug in an action" in n and "unsaved edits copied to" in n for n in app.notes)
        assert app.errors and "RuntimeError" not in app.notes[-1]  # one line, no traceback
        copies = list((tmp_path / "recovery").glob("*/template.jinja"))
        assert len(copies) == 1 and copies[0].read_text().endswith("{# mine #}")
        assert app.workspace.template_text.endswith("{# mine #}")
        # the screen still answers keys: its message loop did not stop
        await pilot.press("1")
        await settle(app, pilot)
        assert app.current_mode == "template"


async def test_quitting_with_unsaved_edits_asks_and_the_default_keeps_the_app() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#source", JinjaEditor).load_text("{{ messages }}")
        await settle(app, pilot)
        await pilot.press("ctrl+q")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "edited template text" in text_of(app.screen.query_one(".hint", Static))
        await pilot.press("enter")  # the default is no
        await settle(app, pilot)
        assert app.is_running and app.workspace.template_text == "{{ messages }}"
        await pilot.press("ctrl+q")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
    assert app.return_code == 0 and not app.is_running


async def test_quitting_without_edits_does_not_ask() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert not app.is_running
