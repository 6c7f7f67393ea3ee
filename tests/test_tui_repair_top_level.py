"""The repair loop reaches the spec's own fields (a missed end-of-turn marker is a common analysis miss),
and the Analysis screen shows the self-check's warning when the spec fails a feature the template renders.

Found in the tmux walkthrough (docs/tui.md): `end_markers` was not in the table, so the one marker that
fixed the template could not be added, and the screen said "no warnings" beside "NOT validated"."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Static

from tests.test_tui_app import demo_done, make_app, settle, text_of
from workbench.runtime.spec import FormatSpec
from workbench.tui.screens.analysis import spec_rows

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def test_spec_rows_include_the_top_level_fields_with_descriptions() -> None:
    spec = FormatSpec(end_markers=("<|end|>",), eos_token="</s>")
    rows = {r.path: r for r in spec_rows(spec, spec)}
    for name in ("end_markers", "eos_token", "bos_token", "preserved_tokens"):
        assert name in rows and rows[name].description, name
    assert rows["end_markers"].is_marker and rows["end_markers"].shown == "<|end|>"
    assert rows["bos_token"].shown == ""  # empty, shown as (empty) by the table
    assert "provenance" not in rows and "version" not in rows
    edited = spec_rows(spec.with_edit(end_markers=["<|end|>", "<|stop|>"]), spec)
    assert next(r for r in edited if r.path == "end_markers").edited


async def _edit(app, pilot, path: str, value: str) -> int:  # type: ignore[no-untyped-def]
    markers = app.screen.query_one("#markers", DataTable)
    row = [str(k.value) for k in markers.rows].index(path)
    markers.focus()
    markers.move_cursor(row=row)
    await pilot.press("e")
    await pilot.pause()
    app.screen.query_one("#edit-value", Input).value = value
    await pilot.press("enter")
    await settle(app, pilot)
    return row


async def test_end_markers_can_be_edited_from_the_table_and_the_cursor_stays() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        row = await _edit(app, pilot, "end_markers", '["<|im_end|>", "<|endoftext|>"]')
        assert app.workspace.spec is not None
        assert app.workspace.spec.end_markers == ("<|im_end|>", "<|endoftext|>")
        assert app.screen.query_one("#markers", DataTable).cursor_row == row
        assert app.workspace.validation is not None


async def test_a_spec_that_fails_the_self_check_is_warned_about_on_the_analysis_screen() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        assert "cannot express" not in text_of(app.screen.query_one("#warnings", Static))
        await _edit(app, pilot, "tools.call_start", '"<nope>"')
        await settle(app, pilot)
        warnings = text_of(app.screen.query_one("#warnings", Static))
        assert "the spec cannot express" in warnings and "tool_call" in warnings
