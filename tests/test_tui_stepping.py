"""Stepping a live generation (the tiny random model) from the Generate screen: start paused, pause during
the prompt's prefill, held-back text drawn as pending, a cut-off call reported as truncated, and the
inspector's controls (rewind, force, constraint, jump-forward) on every screen help lists them for."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from typing import Any

import pytest
from textual.widgets import Input

from tests.test_tui_app import RecordingApp, make_app, settle
from workbench.runtime.spec import FormatSpec
from workbench.tui.controllers import engine as engine_mod
from workbench.tui.demo import demo_analysis
from workbench.tui.messages import RequestGenerate
from workbench.tui.screens.generate import GenerateScreen
from workbench.tui.screens.modals import ForceTokenScreen
from workbench.tui.steps import GeneratorDriver

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


@functools.cache
def demo_spec() -> FormatSpec:
    return demo_analysis().spec


async def live_app(pilot: Any, app: RecordingApp, mode: str = "generate") -> None:
    """Wait for the tiny model, install the demo template's spec (no validation run: it is not what these
    tests are about, and it would double their time), then show ``mode``."""
    app.workspace.spec = demo_spec()
    app.changed("spec")
    app.ensure_model()  # the model loads on demand (when Generate or the Inspector opens)
    for _ in range(400):
        if app.workspace.model_state == "ready":
            break
        await asyncio.sleep(0.05)
    assert app.workspace.model_state == "ready", app.workspace.model_notice
    app.switch_mode(mode)
    await settle(app, pilot)


async def start(app: RecordingApp, pilot: Any, *, paused: bool = True, choice: Any = "required") -> None:
    app.post_message(RequestGenerate("Weather in Paris?", tool_choice=choice, start_paused=paused))
    await settle(app, pilot)


async def test_a_generation_can_start_paused_and_steps_on_demand() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app)
        await start(app, pilot)
        ws = app.workspace
        assert len(ws.steps) == 0 and not ws.running and ws.driver is not None
        assert any("started paused" in n for n in app.notes)
        await pilot.press("space")
        await settle(app, pilot)
        assert len(ws.steps) == 1


async def test_p_during_the_prefill_stops_before_the_first_token(monkeypatch: pytest.MonkeyPatch) -> None:
    entered, release = threading.Event(), threading.Event()
    original = GeneratorDriver.prefill

    def slow_prefill(self: GeneratorDriver) -> None:
        entered.set()
        release.wait(10)
        original(self)

    monkeypatch.setattr(GeneratorDriver, "prefill", slow_prefill)
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app)
        app.post_message(RequestGenerate("Weather in Paris?", tool_choice="required"))
        for _ in range(200):
            await pilot.pause()
            if entered.is_set():
                break
        assert entered.is_set() and app.workspace.running
        await pilot.press("p")  # the prompt is still being read
        release.set()
        await settle(app, pilot)
        assert len(app.workspace.steps) == 0 and not app.workspace.running
        assert any("paused before the first token" in n for n in app.notes)


async def test_held_back_text_is_drawn_as_pending_and_never_parsed_as_content() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app)
        await start(app, pilot)
        screen = app.screen
        assert isinstance(screen, GenerateScreen)
        while "<tool_call>" not in "".join(s.token_text for s in app.workspace.steps.all()):
            await pilot.press("space")
            await settle(app, pilot)
            assert len(app.workspace.steps) < 10, "the required call's marker should come within a few steps"
        assert "<tool_call>" in screen.pending_text  # drawn under the output, marked pending
        parsed = json.loads(screen.parsed_json)
        assert "<tool_call>" not in parsed["content"]


async def test_a_run_cut_off_inside_a_call_says_truncated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_mod, "MAX_NEW_TOKENS", 8)
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app)
        await start(app, pilot, paused=False)
        screen = app.screen
        assert isinstance(screen, GenerateScreen)
        assert app.workspace.driver is not None and app.workspace.driver.finished
        parsed = json.loads(screen.parsed_json)
        assert any(d.startswith("E-TRUNCATED") for d in parsed["diagnostics"])
        assert parsed["tool_calls"] == [] and "<tool_call>" not in parsed["content"]
        assert screen.pending_text  # the end of a cut-off run still shows what was held back


async def test_rewind_force_and_constraint_work_on_the_generate_screen() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app)
        await start(app, pilot)
        for _ in range(2):
            await pilot.press("space")
            await settle(app, pilot)
        assert len(app.workspace.steps) == 2
        await pilot.press("backspace")
        await settle(app, pilot)
        assert len(app.workspace.steps) == 1
        await pilot.press("c")
        await settle(app, pilot)
        assert app.workspace.constrained is False
        await pilot.press("f")
        await settle(app, pilot)
        assert isinstance(app.screen, ForceTokenScreen)
        app.screen.query_one(Input).value = "<tool_call>"
        await pilot.press("enter")
        await settle(app, pilot)
        steps = app.workspace.steps.all()
        assert len(steps) == 2 and steps[-1].forced and steps[-1].token_text == "<tool_call>"
