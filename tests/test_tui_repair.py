"""The repair loop on the Analysis screen: every spec field is listed (empty ones and enum choices too), an
edit keeps the cursor on its row and re-validates, and a validated spec goes straight to Export."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Static

from tests.test_tui_app import demo_done, make_app, settle, text_of
from workbench.runtime.spec import FormatSpec, ToolsSpec
from workbench.tui.screens.analysis import spec_rows

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def test_spec_rows_list_every_marker_field_and_the_allowed_values_of_enums() -> None:
    spec = FormatSpec(tools=ToolsSpec(format="tag_with_json", call_start="<tool_call>"))
    rows = {r.path: r for r in spec_rows(spec, spec)}
    for marker in spec.marker_fields():
        assert marker.path in rows and rows[marker.path].description == marker.description
    assert rows["tools.format"].allowed and "tag_with_json" in rows["tools.format"].allowed
    assert rows["reasoning.mode"].allowed and rows["tools.id_position"].allowed
    assert rows["tools.section_start"].shown == "" and rows["tools.section_start"].is_marker


async def test_the_markers_table_lists_empty_fields_and_the_allowed_values_of_the_highlighted_enum() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        markers = app.screen.query_one("#markers", DataTable)
        keys = [str(k.value) for k in markers.rows]
        spec = app.workspace.spec
        assert spec is not None
        assert {m.path for m in spec.marker_fields()} <= set(keys)
        markers.focus()
        markers.move_cursor(row=keys.index("tools.format"))
        await pilot.pause()
        help_text = text_of(app.screen.query_one("#field-help", Static))
        assert "one of:" in help_text and "json_native" in help_text
        await pilot.press("e")
        await pilot.pause()
        assert "json_native" in text_of(app.screen.query_one("#edit-allowed", Static))


async def test_an_edit_keeps_the_cursor_on_its_row_and_revalidates() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        markers = app.screen.query_one("#markers", DataTable)
        keys = [str(k.value) for k in markers.rows]
        row = keys.index("tools.section_end")
        markers.focus()
        markers.move_cursor(row=row)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#edit-value", Input).value = '"</calls>"'
        await pilot.press("enter")
        await settle(app, pilot)
        markers = app.screen.query_one("#markers", DataTable)
        assert markers.cursor_row == row
        assert app.workspace.spec is not None and app.workspace.spec.tools.section_end == "</calls>"
        assert app.workspace.validation is not None  # re-validated after the edit


async def test_a_validated_spec_goes_straight_to_export_and_an_unvalidated_one_is_refused() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await settle(app, pilot)
        assert app.current_mode == "analysis" and any("no spec yet" in n for n in app.notes)
        app.post_message(demo_done())
        await settle(app, pilot)
        assert app.workspace.validation is not None and app.workspace.validation.validated
        await pilot.press("x")
        await settle(app, pilot)
        assert app.current_mode == "export"


async def test_a_failing_case_opens_beside_what_the_parser_made_of_it() -> None:
    from workbench.tui.screens.cases import CasesScreen, first_difference

    assert first_difference('{"a": 1}', '{"a": 2}') == 6
    assert first_difference("same", "same") is None
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        spec = app.workspace.spec
        assert spec is not None
        from workbench.tui.messages import RequestSpecEdit

        app.post_message(RequestSpecEdit(spec.with_edit(**{"tools.call_start": "<call>"})))
        await settle(app, pilot)
        report = app.workspace.validation
        assert report is not None and not report.validated
        await pilot.press("c")
        await settle(app, pilot)
        assert isinstance(app.screen, CasesScreen)
        failing = app.screen.cases[0]
        assert failing.status in ("fail", "error")
        rendered = text_of(app.screen.query_one("#case-rendered", Static))
        parsed = text_of(app.screen.query_one("#case-parsed", Static))
        assert failing.output.strip().splitlines()[0] in rendered
        assert "expected" in parsed and "parsed" in parsed and "▶" in parsed
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.current_mode == "analysis" and not isinstance(app.screen, CasesScreen)
