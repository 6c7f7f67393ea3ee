"""Snapshot tests: every screen at a fixed size, with the real analysis of the default template and the
demo step stream.

Update after an intended visual change with ``pytest tests/test_tui_snapshots.py --snapshot-update`` and
look at the new SVGs in ``tests/__snapshots__/`` before accepting them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_tui_app import demo_done
from workbench.tui.app import WorkbenchApp
from workbench.tui.demo import demo_parser, demo_source, demo_steps

SIZE = (120, 36)
# Stop inside the tool call: a constrained step with masked candidates.
STEPS = 72


def make_app(mode: str) -> WorkbenchApp:
    source = demo_source()
    return WorkbenchApp(source, load_model=False, analyze=False, start_mode=mode, replay_delay=0.0)


def prepare(steps: int = STEPS, keys: tuple[str, ...] = ()) -> Any:
    async def run_before(pilot: Any) -> None:
        app: WorkbenchApp = pilot.app
        app.post_message(demo_done())
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
