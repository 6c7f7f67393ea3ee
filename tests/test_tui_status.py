"""Readable status at 80x24 and 120x36: the validation verdict on the top line of every screen, never cut;
the spec table at least 8 rows tall at 120x36; toggles marked by a glyph, not only a colour; Export never
"ready" for an unvalidated spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Checkbox, DataTable, Input, RadioButton, Static

from tests.test_tui_app import demo_done, make_app, settle
from workbench.template.source import load_template
from workbench.tui.demo import demo_analysis
from workbench.tui.screens.export import export_status
from workbench.tui.verdict import Verdict
from workbench.tui.widgets.nav import NavBar
from workbench.validate import validate

pytestmark = pytest.mark.anyio
SCREENS = ("template", "analysis", "generate", "inspector", "export")


def nav_text(app: object) -> str:
    nav = app.screen.query_one(NavBar)  # type: ignore[attr-defined]
    return str(nav.render())


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_verdict_is_whole_on_the_top_line_of_every_screen(size: tuple[int, int]) -> None:
    spec = demo_analysis().spec.with_edit(**{"tools.call_start": "<nope>"})
    app = make_app(start_mode="analysis")
    async with app.run_test(size=size) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        assert app.workspace.validation is not None and app.workspace.validation.validated
        for mode in SCREENS:
            app.switch_mode(mode)
            await settle(app, pilot)
            line = nav_text(app)
            assert "✓ validated" in line and len(line) <= size[0], (mode, line)
        app.workspace.spec = spec
        app.changed("spec")
        app.action_validate()
        await settle(app, pilot)
        report = app.workspace.validation
        assert report is not None and not report.validated
        passed = sum(c.status == "pass" for c in report.applicable)
        for mode in SCREENS:
            app.switch_mode(mode)
            await settle(app, pilot)
            assert f"✗ NOT validated {passed}/{len(report.applicable)}" in nav_text(app), mode


async def test_the_spec_table_shows_at_least_eight_rows_at_120x36() -> None:
    app = make_app(start_mode="analysis")
    async with app.run_test(size=(120, 36)) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        table = app.screen.query_one("#markers", DataTable)
        visible_rows = table.scrollable_content_region.height - table.header_height
        assert visible_rows >= 8, visible_rows


async def test_checkbox_and_radio_states_are_marked_by_a_glyph() -> None:
    app = make_app(start_mode="generate")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        on = app.screen.query_one("#constrain", Checkbox)
        off = app.screen.query_one("#start-paused", Checkbox)
        assert "✓" in str(on.render()) and "✓" not in str(off.render())
        app.switch_mode("export")
        await settle(app, pilot)
        chosen, other = list(app.screen.query(RadioButton))[:2]
        assert "●" in str(chosen.render()) and "●" not in str(other.render())
        other.value = True
        await settle(app, pilot)
        assert "●" in str(other.render()) and "●" not in str(chosen.render())


def test_export_says_ready_only_for_a_validated_spec() -> None:
    report = validate(demo_analysis().source, demo_analysis().spec)
    assert report.validated
    green = Verdict("validated", "validated", report.summary())
    red = Verdict("not_validated", "NOT validated 0/10", "NOT validated: 0/10 applicable cases pass")
    assert "ready" in export_status(True, green, edited=False)
    for verdict in (red, Verdict("running", "validating", ""), Verdict("none", "not validated yet", "")):
        assert "ready" not in export_status(True, verdict, edited=False)
        assert "ready" not in export_status(True, verdict, edited=True)


def test_a_report_with_untested_tool_calls_is_never_green_on_the_top_line() -> None:
    """The adapter reads the report's own verdict: every tool case skipped is "tool calls untested", red."""
    from types import SimpleNamespace

    from workbench.tui.verdict import report_verdict
    from workbench.validate.verdict import UntestedFeature, compute_verdict

    verdict = compute_verdict(
        passed=2,
        applicable=2,
        all_pass=True,
        failed=(),
        untested=(UntestedFeature("tool_calls", "the template raises on the tool definitions"),),
        unstable="",
    )
    shown = report_verdict(SimpleNamespace(verdict=verdict))  # type: ignore[arg-type]
    assert not shown.green and shown.state == "not_validated"
    assert shown.label == "✗ NOT validated: tool calls untested"
    assert "tool calls untested" in shown.text


LIMITED_TEMPLATE = Path(__file__).resolve().parents[1] / "docs" / "walkthrough2" / "typed-tools-only.jinja"


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_a_template_that_raises_on_an_untyped_parameter_is_amber_on_every_screen(
    size: tuple[int, int], tmp_path: Path
) -> None:
    """Validated with the plain tools while the template raises on harder tool sets: the top line says so
    with its own glyph (never ✓), Analysis names the limit, Export goes ahead and its file records it."""
    from tests.test_tui_app import RecordingApp

    source = load_template(str(LIMITED_TEMPLATE))
    app = RecordingApp(source, replay_delay=0.0, load_model=False, start_mode="analysis")
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        report = app.workspace.validation
        assert report is not None and report.verdict.status == "limited"
        count = f"{report.verdict.passed}/{report.verdict.applicable}"
        for mode in SCREENS:
            app.switch_mode(mode)
            await settle(app, pilot)
            line = nav_text(app)
            assert f"! validated {count}, plain tools only" in line and "✓" not in line, (mode, line)
            assert len(line) <= size[0]
        app.switch_mode("analysis")
        await settle(app, pilot)
        line_widget = app.screen.query_one("#verdict-line", Static)
        said = str(line_widget.render())
        assert "the template raises on" in said and "a parameter without `type`" in said
        # the whole sentence is on screen (it takes 4 lines at 120x36, 5 at 80x24), never cut
        box = line_widget.content_region
        needed = line_widget.get_content_height(line_widget.parent.size, app.size, box.width)  # type: ignore[union-attr]
        assert needed >= 3 and box.height >= needed, (box, needed)
        if size == (120, 36):  # ... and the spec table keeps its 8 rows beside it
            table = app.screen.query_one("#markers", DataTable)
            assert table.scrollable_content_region.height - table.header_height >= 8
        app.switch_mode("export")
        await settle(app, pilot)
        assert "limits recorded" in nav_text(app) or size[0] < 100
        out = tmp_path / "limited.spec.json"
        app.screen.query_one("#export-path", Input).value = str(out)
        await pilot.press("s")
        await settle(app, pilot)
        verdict = json.loads(out.read_text())["provenance"]["validation"]["verdict"]
        assert verdict["status"] == "limited" and "a parameter without `type`" in verdict["limits"]


def test_the_adapter_shows_a_limited_report_amber() -> None:
    from types import SimpleNamespace

    from workbench.tui.verdict import report_verdict
    from workbench.validate.verdict import compute_verdict

    verdict = compute_verdict(
        passed=11,
        applicable=11,
        all_pass=True,
        failed=(),
        untested=(),
        unstable="",
        limits=("a parameter without `type`",),
    )
    shown = report_verdict(SimpleNamespace(verdict=verdict))  # type: ignore[arg-type]
    assert shown.state == "limited" and not shown.green and shown.exportable
    assert shown.label == "! validated 11/11, plain tools only"
    assert shown.text.endswith("the template raises on a parameter without `type`")
    status = export_status(True, shown, edited=False)
    assert status == "ready to export (s), limits recorded"
