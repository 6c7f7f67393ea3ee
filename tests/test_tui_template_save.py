"""ctrl+s on the Template screen saves the edited template: in place for a .jinja file (asking when the file
changed on disk), as a new .jinja beside a tokenizer_config.json, never over a file without asking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_tui_app import RecordingApp, settle
from workbench.template.source import load_template
from workbench.tui.demo import DEMO_TEMPLATE
from workbench.tui.screens.modals import ConfirmScreen
from workbench.tui.widgets.jinja_editor import JinjaEditor

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def app_for(ref: Path) -> RecordingApp:
    return RecordingApp(load_template(ref), load_model=False, analyze=False, replay_delay=0.0)


async def _edit(app: RecordingApp, pilot: object, text: str) -> None:
    editor = app.screen.query_one("#source", JinjaEditor)
    editor.load_text(text)
    await settle(app, pilot)


async def test_ctrl_s_saves_a_jinja_file_in_place(tmp_path: Path) -> None:
    path = tmp_path / "t.jinja"
    path.write_text(DEMO_TEMPLATE)
    app = app_for(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert any("nothing to save" in n for n in app.notes)
        await _edit(app, pilot, DEMO_TEMPLATE + "{# edited #}")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert path.read_text().endswith("{# edited #}")
        assert any(f"saved {path.resolve()}" in n for n in app.notes)
        assert "edited" not in str(app.screen.query_one("#source", JinjaEditor).border_title)


async def test_ctrl_s_asks_before_overwriting_a_file_that_changed_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "t.jinja"
    path.write_text(DEMO_TEMPLATE)
    app = app_for(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _edit(app, pilot, DEMO_TEMPLATE + "{# mine #}")
        path.write_text(DEMO_TEMPLATE + "{# theirs #}")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert path.read_text().endswith("{# theirs #}")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert path.read_text().endswith("{# mine #}")


async def test_a_template_from_a_tokenizer_config_is_saved_as_a_new_jinja_beside_it(tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": DEMO_TEMPLATE, "eos_token": "<|im_end|>"}))
    app = app_for(config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _edit(app, pilot, DEMO_TEMPLATE + "{# edited #}")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        saved = tmp_path / "chat_template.edited.jinja"
        assert saved.read_text().endswith("{# edited #}")
        assert json.loads(config.read_text())["chat_template"] == DEMO_TEMPLATE
