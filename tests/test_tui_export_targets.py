"""The Export screen offers every target the export stage has, and a folder target (the vLLM plug-in)
written from the screen is the same export the CLI writes (the walkthrough found only four targets)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, RadioSet

from tests.test_tui_app import demo_done, make_app, settle
from workbench.export import TARGETS as STAGE_TARGETS
from workbench.tui.screens.export import TARGETS as SCREEN_TARGETS

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def test_the_screen_offers_every_target_of_the_export_stage() -> None:
    assert [key for key, _ in SCREEN_TARGETS] == list(STAGE_TARGETS)


@pytest.mark.usefixtures("no_engines")  # what the screen writes; the plug-in's engine proofs: tests/engines/
async def test_the_vllm_plugin_target_writes_the_plugin_folder(tmp_path: Path) -> None:
    app = make_app(start_mode="export")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        keys = [key for key, _ in SCREEN_TARGETS]
        radios = app.screen.query_one("#targets", RadioSet)
        radios.query("#target-vllm-plugin").first().value = True
        await pilot.pause()
        assert keys[radios.pressed_index] == "vllm-plugin"
        path = app.screen.query_one("#export-path", Input)
        assert path.value.endswith("-vllm-plugin")  # the default path follows the target
        out = tmp_path / "plugin"
        path.value = str(out)
        app.set_focus(None)
        await pilot.press("s")
        await settle(app, pilot)
        assert any(f"wrote {out}" in n for n in app.notes), app.notes
    assert (out / "serve-flags.txt").is_file() and (out / "provenance.json").is_file()
    assert any(out.glob("*_vllm.py"))
