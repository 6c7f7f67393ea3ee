"""Asking the grammar about a step scrubbed back to: the matcher is replayed on a fresh copy to that step's
choice (``Generator.position_before``), so the answers match what the step recorded, and the live
generator does not move."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.test_tui_app import make_app, settle
from tests.test_tui_stepping import live_app, start
from workbench.runtime.chat import Message
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.modals import AskScreen

SIZE = (120, 36)


def test_the_replayed_position_agrees_with_every_recorded_step() -> None:
    pytest.importorskip("xgrammar")
    from workbench.generation import why
    from workbench.generation.generate import Generator
    from workbench.generation.tiny import load_tiny
    from workbench.runtime.chat import load_tools
    from workbench.tui.demo import demo_analysis
    from workbench.tui.workspace import DEFAULT_TOOLS

    gen = Generator(
        load_tiny(),
        demo_analysis().spec,
        messages=[Message(role="user", content="Weather?")],
        tools=load_tools(DEFAULT_TOOLS),
        tool_choice="required",
        max_new_tokens=30,
    )
    steps = gen.run(24)
    assert any(s.constrained for s in steps) and len({s.allowed_count for s in steps}) > 2
    live_before = why.position(gen)
    for step in steps:
        past = why.position(gen.position_before(step.index))
        assert past.phase == step.phase
        if step.constrained:  # a free step's count is the whole vocabulary, not the grammar's
            assert (past.allowed_count, past.jump_forward) == (step.allowed_count, step.jump_forward)
    assert why.position(gen.position_before(len(steps))) == live_before  # at the end: the live position
    assert len(gen.steps) == 24 and why.position(gen) == live_before  # nothing moved


@pytest.mark.anyio
async def test_the_inspector_answers_why_at_a_scrubbed_step() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app, mode="inspector")
        await start(app, pilot)
        for _ in range(4):
            await pilot.press("space")
            await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        await pilot.press("home")  # step 1: the first token's choice
        await settle(app, pilot)
        await settle(app, pilot)
        first = app.workspace.steps.get(0)
        assert first is not None and screen.selected == 0
        assert "step 1's choice: the grammar replayed" in screen.grammar_plain
        assert f"{first.allowed_count} of" in screen.grammar_plain
        await pilot.press("w")
        await settle(app, pilot)
        assert isinstance(app.screen, AskScreen)
        app.screen.query_one(Input).value = "Hello"
        await pilot.press("enter")
        await settle(app, pilot)
        answer = app.workspace.grammar_answer
        assert "'Hello'" in answer and "is masked" in answer and "lead grammar" in answer
        assert len(app.workspace.steps) == 4  # asking moved nothing
