"""Snapshot tests: every screen at a fixed size, with a hand-made analysis and the demo step stream.

Update after an intended visual change with ``pytest tests/test_tui_snapshots.py --snapshot-update`` and
look at the new SVGs in ``tests/__snapshots__/`` before accepting them.
"""

from __future__ import annotations

from typing import Any

import pytest

from workbench.template.source import TemplateSource
from workbench.tui.app import WorkbenchApp
from workbench.tui.demo import DEMO_TEMPLATE, demo_analysis, demo_parser, demo_steps
from workbench.tui.messages import AnalysisDone

SIZE = (120, 36)
# Stop inside the tool call: a constrained step with masked candidates.
STEPS = 72


def make_app(mode: str) -> WorkbenchApp:
    source = TemplateSource(text=DEMO_TEMPLATE, name="demo", origin="tests", eos_token="<|im_end|>")
    return WorkbenchApp(source, load_model=False, analyze=False, start_mode=mode, replay_delay=0.0)


def prepare(steps: int = STEPS, keys: tuple[str, ...] = ()) -> Any:
    async def run_before(pilot: Any) -> None:
        app: WorkbenchApp = pilot.app
        app.post_message(AnalysisDone(demo_analysis(), template_sha=DEMO_TEMPLATE))
        app.install_replay(demo_steps()[:steps], demo_parser, label="demo replay")
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        if keys:
            await pilot.press(*keys)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("mode", ["template", "analysis", "generate", "inspector", "export"])
def test_screen_snapshot(snap_compare: Any, mode: str) -> None:
    keys = ("down",) if mode == "analysis" else ()
    assert snap_compare(make_app(mode), terminal_size=SIZE, run_before=prepare(keys=keys))


def test_help_snapshot(snap_compare: Any) -> None:
    assert snap_compare(
        make_app("inspector"), terminal_size=SIZE, run_before=prepare(keys=("question_mark",))
    )


def test_inspector_snapshot_small_terminal(snap_compare: Any) -> None:
    assert snap_compare(make_app("inspector"), terminal_size=(80, 24), run_before=prepare())
