"""Every key the help screen lists works on the screen it is listed for: pressing it raises nothing and has
a visible effect (a screen, a dialog, focus, a workspace change) or says why not (a notification).  Also the
labels that used to disagree with the state they describe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.screen import ModalScreen
from textual.widgets import Checkbox

from tests.test_tui_app import RecordingApp, demo_done, settle
from workbench.template.source import load_template
from workbench.tui.actions import ACTIONS
from workbench.tui.app import WorkbenchApp
from workbench.tui.demo import demo_parser, demo_source, demo_steps
from workbench.tui.messages import AnalysisFailed
from workbench.tui.screens.help import help_keys

pytestmark = pytest.mark.anyio
SIZE = (120, 36)
MODES = ("template", "analysis", "generate", "inspector", "export")


def state(app: WorkbenchApp) -> tuple[Any, ...]:
    ws = app.workspace
    return (
        app.current_mode,
        len(app.screen_stack),
        app.focused,
        sum(ws.revision.values()),
        len(app.notes),  # type: ignore[attr-defined]
    )


def test_every_palette_action_exists_on_the_app() -> None:
    for act in ACTIONS:
        name = act.action.split("(")[0]
        assert callable(getattr(WorkbenchApp, f"action_{name}", None)), act.action


@pytest.mark.slow  # 15-22 s a screen: every key of the screen pressed in a fresh app
@pytest.mark.parametrize("mode", MODES)
async def test_every_help_key_of_a_screen_does_something_visible(
    mode: str, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)  # exports and sessions land here
    template = tmp_path / "t.jinja"
    template.write_text(demo_source().text)  # ctrl+s writes here, never into the project
    app = RecordingApp(load_template(template), load_model=False, analyze=False, replay_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(demo_done())
        app.install_replay(demo_steps()[:30], demo_parser, label="demo replay")
        await settle(app, pilot)
        for _ in range(3):
            app.action_step()
            await settle(app, pilot)
        app.switch_mode(mode)
        await settle(app, pilot)
        keys = help_keys(app.screen)
        assert keys
        for entry in keys:
            if entry.key == "ctrl+q":
                continue
            if app.current_mode != mode:
                app.switch_mode(mode)
                await settle(app, pilot)
            screen = app.screen
            if entry.key == "escape":
                screen.focus_next()
            else:
                screen.set_focus(None)
            await pilot.pause()
            before = state(app)
            await pilot.press(entry.key)
            await settle(app, pilot)
            after = state(app)
            assert after != before, f"{mode}: {entry.shown} ({entry.description}) had no visible effect"
            while isinstance(app.screen, ModalScreen):
                await pilot.press("escape")
                await settle(app, pilot)


async def test_a_failed_analysis_does_not_leave_the_template_header_saying_analyzing() -> None:
    from tests.test_tui_app import make_app

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.workspace.analysis_running = True
        app.changed("analysis")
        await settle(app, pilot)
        assert "analyzing" in app.screen.query_one("#nav").status  # type: ignore[attr-defined]
        app.post_message(AnalysisFailed("boom"))
        await settle(app, pilot)
        status = app.screen.query_one("#nav").status  # type: ignore[attr-defined]
        assert "analyzing" not in status and "analysis failed" in status


async def test_the_constrain_switch_follows_the_engine_state() -> None:
    from tests.test_tui_app import make_app

    app = make_app(start_mode="generate")
    async with app.run_test(size=SIZE) as pilot:
        steps = [s for s in demo_steps()[:5]]
        app.install_replay(steps, demo_parser, label="demo replay")
        await settle(app, pilot)
        box = app.screen.query_one("#constrain", Checkbox)
        assert box.value == app.workspace.constrained
        app.workspace.constrained = not app.workspace.constrained
        app.changed("engine")
        await settle(app, pilot)
        assert box.value == app.workspace.constrained
