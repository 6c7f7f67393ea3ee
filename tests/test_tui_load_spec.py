"""A spec from a file (`workbench tui --spec FILE`, `ctrl+o` / the palette's "Load spec"): a spec file or
`analyze --json` output becomes the spec Generate, the Inspector and Export use, and the analysis run for
the probes does not replace it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input
from typer.testing import CliRunner

from tests.test_tui_app import demo_done, make_app, settle
from workbench.runtime.spec import FormatSpec
from workbench.tui.controllers import generate as generate_flow
from workbench.tui.controllers.export import prepare_export
from workbench.tui.demo import demo_analysis
from workbench.tui.messages import RequestExport, RequestGenerate
from workbench.tui.screens.modals import AskScreen

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def repaired_spec() -> FormatSpec:
    """The demo template's spec with a different call marker: recognisably not the analysis' spec."""
    return demo_analysis().spec.with_edit(**{"tools.call_start": "<call>", "tools.call_end": "</call>"})


async def test_a_spec_given_at_start_is_used_and_the_analysis_does_not_replace_it(tmp_path: Path) -> None:
    spec = repaired_spec()
    path = tmp_path / "fixed.spec.json"
    path.write_text(spec.to_json())
    app = make_app(spec=spec, spec_path=str(path), analyze=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        ws = app.workspace
        assert ws.analysis is not None  # the probes are there to look at
        assert ws.spec == spec and ws.spec_origin == "spec file fixed.spec.json"
        assert ws.validation is not None  # validated against the open template at once
        assert not ws.spec_unsaved  # it is on disk: nothing to lose
        assert any("using fixed.spec.json" in n for n in app.notes)


async def test_load_spec_reads_analyze_json_and_generate_and_export_use_it(
    tmp_path: Path, monkeypatch: Any
) -> None:
    spec = repaired_spec()
    path = tmp_path / "analysis.json"
    path.write_text(json.dumps([{"spec": spec.to_dict(), "probes": [], "warnings": []}]))
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        assert app.workspace.spec != spec
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert isinstance(app.screen, AskScreen)
        app.screen.query_one("#ask-value", Input).value = str(path)
        await pilot.press("enter")
        await settle(app, pilot)
        ws = app.workspace
        assert ws.spec == spec
        # Generate builds its request from the loaded spec ...
        ws.model_state, ws.loaded_model = "ready", object()  # type: ignore[assignment]
        request = generate_flow.prepare_generation(ws, RequestGenerate("hi"))
        assert request.spec == spec
        # ... and so does Export
        job = prepare_export(ws, RequestExport("spec", str(tmp_path / "out.json")))
        assert job.spec == spec


async def test_a_bad_spec_file_is_one_notification_and_the_spec_stays(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"reasoning": {"mode": "sometimes"}}')
    app = make_app(start_mode="analysis")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        before = app.workspace.spec
        app.action_load_spec()
        await settle(app, pilot)
        app.screen.query_one("#ask-value", Input).value = str(bad)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.workspace.spec == before and app.is_running
        assert any("sometimes" in n and "reasoning.mode" in n for n in app.notes)


def test_tui_refuses_a_bad_spec_file_with_one_line(tmp_path: Path) -> None:
    from workbench.cli import app as cli

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(cli, ["tui", "--spec", str(bad), "--no-model"])
    assert result.exit_code == 1
    assert "bad.json" in result.output and "Traceback" not in result.output
