"""Keys act in the order they were typed, whatever the widget that takes them.

Textual runs an app-level priority binding (``ctrl+s``, ``ctrl+o``) the moment its key is read, while the
keys and the paste read before it are still queued at the focused widget, and a dialog pushed by a key
has no focused field until it is mounted.  Typed quickly (or by a script), that lost work: ``ctrl+s``
right after a long paste saved the text from before the paste, ``ctrl+o`` after a key that switched
screens opened its dialog on the screen left behind, and a key typed right after ``enter`` in a dialog
went into the dialog that was closing.  Each test posts its keys in one go, as a fast typist or a paste
does (``pilot.press`` waits for the app to be idle between keys, which hides the race).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import DataTable, TextArea

from tests.test_tui_app import RecordingApp, demo_done, make_app, settle
from workbench.template.source import load_template
from workbench.tui.demo import DEMO_TEMPLATE, demo_analysis
from workbench.tui.screens.modals import AskScreen, EditFieldScreen
from workbench.tui.widgets.jinja_editor import JinjaEditor

pytestmark = pytest.mark.anyio
SIZE = (120, 36)
#: A paste long enough to take the editor a while (a template the size of a real one).
LONG = "".join(f"{{# pasted line {i}: {'x' * 60} #}}\n" for i in range(400))


def key(name: str) -> events.Key:
    """The event a terminal gives for ``name``: printable keys carry their character."""
    char = {"enter": "\r", "ctrl+s": "\x13", "ctrl+o": "\x0f"}.get(name, name if len(name) == 1 else None)
    return events.Key(name, char)


def type_at_once(app: RecordingApp, *inputs: str | events.Event) -> None:
    """Post the keys (names) and events straight into the app's queue, with no pause between them."""
    for item in inputs:
        app.post_message(key(item) if isinstance(item, str) else item)


async def test_ctrl_s_right_after_a_long_paste_saves_the_pasted_text(tmp_path: Path) -> None:
    path = tmp_path / "t.jinja"
    path.write_text(DEMO_TEMPLATE)
    app = RecordingApp(load_template(path), load_model=False, analyze=False, replay_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        editor = app.screen.query_one("#source", JinjaEditor)
        editor.focus()
        editor.cursor_location = editor.document.end
        await pilot.pause()
        type_at_once(app, events.Paste(LONG), "ctrl+s")
        await settle(app, pilot)
        assert path.read_text() == DEMO_TEMPLATE + LONG
        assert any(f"saved {path.resolve()}" in n for n in app.notes)


async def test_ctrl_s_right_after_a_paste_into_a_field_editor_submits_the_pasted_value() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        table = app.screen.query_one("#markers", DataTable)
        table.focus()
        table.move_cursor(row=[str(k.value) for k in table.rows].index("tools.pattern"))
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, EditFieldScreen)
        document = app.screen.query_one("#edit-document", TextArea)
        document.select_all()
        await pilot.pause()
        pasted = '{"call": ["<call>", "$name", " ", "$args", "</call>"], "args": "json"' + " " * 4000 + "}"
        type_at_once(app, events.Paste(pasted), "ctrl+s")
        await settle(app, pilot)
        assert not isinstance(app.screen, EditFieldScreen)
        spec = app.workspace.spec
        assert spec is not None
        assert list(spec.tools.pattern.call) == ["<call>", "$name", " ", "$args", "</call>"]


async def test_ctrl_o_right_after_a_key_that_switches_screens_opens_on_the_new_screen() -> None:
    """`x` (to Export, the spec being validated) then ``ctrl+o``: the dialog opens over Export, where the
    person now is, not over the Analysis screen left behind (where it looked lost)."""
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        assert app.workspace.validation is not None and app.workspace.validation.validated
        app.screen.query_one("#markers", DataTable).focus()
        await pilot.pause()
        type_at_once(app, "x", "ctrl+o")
        await settle(app, pilot)
        assert app.current_mode == "export"
        assert isinstance(app.screen, AskScreen)


async def test_a_path_typed_right_after_ctrl_o_reaches_the_dialog_and_3_then_switches(tmp_path: Path) -> None:
    """On Export: ``ctrl+o``, the path, ``enter`` and ``3`` typed at once load the spec and then switch to
    Generate; the path is not lost before the dialog's field has focus, and ``3`` is not typed into the
    dialog that is closing."""
    spec = demo_analysis().spec.with_edit(**{"tools.call_start": "<call>", "tools.call_end": "</call>"})
    path = tmp_path / "fixed.spec.json"
    path.write_text(spec.to_json())
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        type_at_once(app, "ctrl+o", *str(path), "enter", "3")
        await settle(app, pilot)
        assert app.workspace.spec == spec
        assert app.current_mode == "generate"


async def test_ctrl_o_pressed_twice_opens_one_dialog_and_3_then_switches(tmp_path: Path) -> None:
    """A second ``ctrl+o`` (the first seemed slow) stacked a second dialog, which then took the `3` typed
    after the first closed: `3` stayed on Export while `F3` switched."""
    spec = demo_analysis().spec.with_edit(**{"tools.call_start": "<call>", "tools.call_end": "</call>"})
    path = tmp_path / "fixed.spec.json"
    path.write_text(spec.to_json())
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert sum(isinstance(s, AskScreen) for s in app.screen_stack) == 1
        type_at_once(app, *str(path), "enter")
        await settle(app, pilot)
        assert app.workspace.spec == spec and not isinstance(app.screen, AskScreen)
        await pilot.press("3")
        await settle(app, pilot)
        assert app.current_mode == "generate"
