"""The Generate screen's conversation controls, live with the tiny random model: a named tool_choice forces
that tool, the parallel switch off allows one call, the answer joins the conversation and the next message
continues it (arguments reach the template as dicts), a tool result continues after a call, a system prompt,
and "new conversation" asking first."""

from __future__ import annotations

import json
from typing import Any

import pytest
from textual.widgets import Checkbox, Input, Select

from tests.test_tui_app import RecordingApp, make_app, settle, text_of
from tests.test_tui_stepping import live_app
from workbench.tui.controllers import generate as conversation
from workbench.tui.screens.generate import GenerateScreen
from workbench.tui.screens.modals import ConfirmScreen, ToolResultScreen
from workbench.tui.steps import GeneratorDriver

pytestmark = pytest.mark.anyio
SIZE = (120, 36)

# Arguments from enums, so that a random model's calls are short and always complete.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {
                "type": "object",
                "properties": {arg: {"type": "string", "enum": values}},
                "required": [arg],
            },
        },
    }
    for name, arg, values in (("get_weather", "city", ["Paris", "Rome"]), ("get_time", "tz", ["utc", "cet"]))
]


async def ready(pilot: Any) -> tuple[RecordingApp, GenerateScreen]:
    app = pilot.app
    app.workspace.tools_json = json.dumps(TOOLS)
    await live_app(pilot, app)
    screen = app.screen
    assert isinstance(screen, GenerateScreen)
    return app, screen


async def send(
    app: RecordingApp, pilot: Any, text: str, *, choice: str = "required", parallel: bool = True
) -> None:
    """Type ``text`` in the chat input with the given controls and wait for the generation to finish."""
    screen = app.screen
    screen.query_one("#tool-choice", Select).value = choice
    screen.query_one("#parallel", Checkbox).value = parallel
    chat = screen.query_one("#chat", Input)
    chat.focus()
    chat.value = text
    await pilot.press("enter")
    await settle(app, pilot)
    assert isinstance(app.workspace.driver, GeneratorDriver) and app.workspace.driver.finished


def calls(app: RecordingApp) -> list[str]:
    message = app.workspace.steps.message
    assert message is not None
    return [c.name for c in message.tool_calls]


async def test_a_named_tool_choice_forces_that_tool() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        app, screen = await ready(pilot)
        values = [v for _, v in screen.query_one("#tool-choice", Select)._options]
        assert "tool:get_time" in values and "tool:get_weather" in values  # offered from the tools JSON
        await send(app, pilot, "What time is it?", choice="tool:get_time")
        assert calls(app) == ["get_time"]
        # Unconstrained by a name, the same model calls get_weather first: the name is what forced get_time.
        await send(app, pilot, "What time is it?", choice="required", parallel=False)
        assert calls(app) == ["get_weather"]


@pytest.mark.parametrize("parallel", [False, True])
async def test_the_parallel_switch_bounds_the_number_of_calls(parallel: bool) -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        app, _ = await ready(pilot)
        await send(app, pilot, "Weather in Paris and Rome?", parallel=parallel)
        if parallel:
            assert len(calls(app)) > 1  # this seeded model goes on calling when the grammar lets it
        else:
            assert len(calls(app)) == 1


async def test_the_answer_joins_the_conversation_and_the_next_message_continues_it() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        app, screen = await ready(pilot)
        await send(app, pilot, "Weather in Paris?", parallel=False)
        assert [role for role, _ in screen.turns] == ["user", "assistant"]
        assert "get_weather" in text_of(screen.query_one("#turns"))
        first = calls(app)
        await send(app, pilot, "And in Rome?", parallel=False)
        ws = app.workspace
        assert [m["role"] for m in ws.conversation] == ["user", "assistant", "user"]
        call = ws.conversation[1]["tool_calls"][0]["function"]
        assert [call["name"]] == first and isinstance(call["arguments"], dict)  # a dict, as transformers
        prompt = ws.driver.prompt  # type: ignore[union-attr]
        assert "Weather in Paris?" in prompt and "And in Rome?" in prompt
        assert json.dumps(call["arguments"]) in prompt  # the earlier call rendered from its dict
        assert [role for role, _ in screen.turns] == ["user", "assistant", "user", "assistant"]


async def test_a_tool_result_continues_after_a_call() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        app, screen = await ready(pilot)
        await send(app, pilot, "Weather in Paris?", parallel=False)
        pending = conversation.pending_calls(app.workspace)
        assert len(pending) == 1
        screen.set_focus(None)
        await pilot.press("t")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ToolResultScreen)
        assert dialog.query_one("#tool-call-id", Input).value == pending[0].call_id  # pre-filled
        dialog.query_one("#tool-result", Input).value = '{"temp_c": 21}'
        await pilot.press("enter")
        await settle(app, pilot)
        ws = app.workspace
        assert [m["role"] for m in ws.conversation] == ["user", "assistant", "tool"]
        assert ws.conversation[2]["tool_call_id"] == pending[0].call_id
        assert '{"temp_c": 21}' in ws.driver.prompt  # type: ignore[union-attr]
        assert len(ws.steps) > 0  # the next assistant turn was generated


async def test_t_without_a_call_to_answer_says_so() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        app, screen = await ready(pilot)
        screen.set_focus(None)
        await pilot.press("t")
        await settle(app, pilot)
        assert not isinstance(app.screen, ToolResultScreen)
        assert any("no tool call to answer" in n for n in app.notes)


async def test_the_system_prompt_is_rendered_first() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        app, screen = await ready(pilot)
        system = screen.query_one("#system", Input)
        system.focus()
        await pilot.press(*"Be terse.")
        await send(app, pilot, "Weather?", parallel=False)
        prompt = app.workspace.driver.prompt  # type: ignore[union-attr]
        assert prompt.index("Be terse.") < prompt.index("Weather?")
        assert screen.turns[0] == ("system", "Be terse.")
        assert [m["role"] for m in app.workspace.conversation] == ["user"]  # a setting, not a turn


async def test_new_conversation_asks_first_when_there_are_turns() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        app, screen = await ready(pilot)
        screen.set_focus(None)
        await pilot.press("n")
        await settle(app, pilot)
        assert any("already empty" in n for n in app.notes)
        await send(app, pilot, "Weather?", parallel=False)
        screen.set_focus(None)
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # the default is no: nothing is lost
        await settle(app, pilot)
        assert conversation.turn_count(app.workspace) == 2
        await pilot.press("n")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert conversation.turn_count(app.workspace) == 0 and screen.turns == []
        await send(app, pilot, "Time?", parallel=False)
        assert [m["role"] for m in app.workspace.conversation] == ["user"]
