"""Saving a session from the TUI: what replay needs (the texts the parser got, the parser options) is kept."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.test_tui_app import demo_done, make_app, settle
from workbench.generation.step import Step
from workbench.runtime.chat import Message
from workbench.session import load_session, replay_session
from workbench.tui.steps import GeneratorDriver

pytestmark = pytest.mark.anyio


def _step(index: int, token_text: str, text: str, *, finished: bool = False) -> Step:
    return Step(
        index=index,
        token_id=100 + index,
        token_text=token_text,
        allowed_count=10,
        vocab_size=10,
        constrained=False,
        region="free",
        finished=finished,
        text=text,
    )


# "é" split over two byte tokens, then the stop token: the parser got "caf", "", "é", "".
STEPS = [
    _step(0, "caf", "caf"),
    _step(1, "\ufffd", ""),
    _step(2, "\ufffd", "é"),
    _step(3, "<|im_end|>", "", finished=True),
]


def _fake_generator() -> SimpleNamespace:
    """The attributes of ``generation.generate.Generator`` that the save path reads (no model needed)."""
    plan = SimpleNamespace(reasoning=SimpleNamespace(starts_inside=False), parallel=False)
    return SimpleNamespace(
        prompt="<|im_start|>user\nSay café.<|im_end|>\n", plan=plan, reasoning=False, constrain=False
    )


async def test_a_saved_live_session_keeps_the_fed_texts_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(start_mode="inspector", session_dir=tmp_path / "sessions")  # created when missing
    async with app.run_test(size=(120, 36)) as pilot:
        app.post_message(demo_done())
        await settle(app, pilot)
        ws = app.workspace
        ws.driver = GeneratorDriver(_fake_generator(), None, label="fake")
        ws.steps.reset(STEPS)
        ws.steps.message = Message("assistant", content="café")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    saved = sorted((tmp_path / "sessions").glob("tui-*.json"))
    assert len(saved) == 1, app.notes
    session = load_session(saved[0])
    assert [s.fed_text for s in session.steps] == ["caf", "", "é", ""]
    assert session.output_text == "café"
    assert session.settings["thinking_opened"] is False and session.settings["parallel_tool_calls"] is False
    assert session.prompt.endswith("Say café.<|im_end|>\n")
    result = replay_session(session)
    assert result.matches, result.mismatches
    assert result.message.content == "café"
