"""Replaying sessions offline: the shipped examples reproduce their recorded messages, the CLI reports it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.generation.step import Step
from workbench.runtime.spec import FormatSpec, ReasoningSpec, ToolsSpec
from workbench.session import (
    ModelRecord,
    SessionError,
    TemplateRecord,
    dumps_session,
    load_session,
    replay_session,
    save_session,
    session_from_generation,
)

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "sessions").glob("*.json"))
runner = CliRunner()


def test_at_least_the_three_required_example_sessions_are_shipped() -> None:
    names = {p.stem for p in SHIPPED}
    assert {"qwen3-tool-call", "deepseek-reasoning-call", "harmony-exchange"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_session_replays_to_its_recorded_message(path: Path) -> None:
    session = load_session(path)
    assert session.template.text and session.steps, "a session must carry its template and its steps"
    assert session.parsed["tool_calls"], "every example session ends in a tool call"
    result = replay_session(session)
    assert result.mismatches == ()
    assert result.parsed == session.parsed


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_session_file_is_stable_under_load_and_save(path: Path) -> None:
    original = path.read_text(encoding="utf-8")
    saved = dumps_session(load_session(path))
    # Step lines are written byte for byte as they were read (one compact line each, "text" only where
    # it differs from the token's text) ...
    assert saved[saved.index('"steps": [') :] == original[original.index('"steps": [') :]
    # ... and the header holds the same data; only spec fields added since the file was written (with
    # their defaults, e.g. prompt.output_prefix) may appear in it.
    before, after = json.loads(original), json.loads(saved)
    assert FormatSpec.from_dict(after.pop("spec")) == FormatSpec.from_dict(before.pop("spec"))
    assert after == before


def test_recorded_reasoning_is_what_each_family_promises() -> None:
    by_name = {p.stem: load_session(p) for p in SHIPPED}
    deepseek = by_name["deepseek-reasoning-call"]
    assert deepseek.settings["thinking_opened"] is True  # the prompt opened <think>
    assert "rain in Berlin" in deepseek.parsed["reasoning_content"]
    assert deepseek.parsed["tool_calls"][0]["arguments"] == {"city": "Berlin"}
    harmony = by_name["harmony-exchange"]
    assert "temperature in Tokyo" in harmony.parsed["reasoning_content"]
    assert harmony.parsed["tool_calls"][0]["name"] == "get_weather"


def test_replay_cli_prints_the_message_and_says_it_matches() -> None:
    result = runner.invoke(app, ["replay", str(REPO / "sessions" / "qwen3-tool-call.json")])
    assert result.exit_code == 0, result.output
    assert "replay matches the recorded message" in result.output
    assert "get_weather" in result.output


def test_replay_cli_json_follows_its_contract() -> None:
    result = runner.invoke(app, ["replay", str(REPO / "sessions" / "harmony-exchange.json"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {
        "session",
        "matches",
        "mismatches",
        "message",
        "recorded",
        "diagnostics",
        "steps",
        "template_kwargs",
        "prompt_check",
    }
    assert data["template_kwargs"] == {}  # a session written before kwargs were recorded
    assert data["matches"] is True
    assert data["message"] == data["recorded"]
    fed = "".join(e["text"] for s in data["steps"] for e in s["events"])
    assert "Tokyo" in fed


def test_replay_that_differs_from_the_recording_exits_1(tmp_path: Path) -> None:
    session = load_session(REPO / "sessions" / "qwen3-tool-call.json")
    tampered = dict(session.parsed, tool_calls=[{"id": "", "name": "get_time", "arguments": {}}])
    path = save_session(tmp_path / "tampered.json", replace(session, parsed=tampered))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 1
    assert "replay differs from the recorded message: tool_calls[0].name" in result.stderr


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda text: text[: len(text) // 3], "truncated"),
        (lambda text: text.replace('"token_id":', '"token_id"::', 1), "corrupt"),
        (lambda text: text.replace('"version": 1', '"version": 99', 1), "newer workbench"),
    ],
    ids=["truncated", "corrupt", "newer"],
)
def test_replay_of_a_damaged_session_is_one_clear_line_and_changes_nothing(
    tmp_path: Path, damage, message: str
) -> None:
    path = tmp_path / "s.json"
    path.write_text(damage((REPO / "sessions" / "qwen3-tool-call.json").read_text(encoding="utf-8")), "utf-8")
    before = path.read_bytes()
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]
    assert path.read_bytes() == before


SPEC = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"),
    tools=ToolsSpec(format="json_native", call_start="<tool_call>", call_end="</tool_call>", parallel=True),
    end_markers=("<|im_end|>",),
)


def _steps(texts: list[str]) -> list[Step]:
    return [
        Step(index=i, token_id=i, token_text=t, allowed_count=1, vocab_size=10) for i, t in enumerate(texts)
    ]


def test_text_fed_to_the_parser_is_replayed_rather_than_raw_token_text(tmp_path: Path) -> None:
    # "é" split over two tokens: alone, each token decodes to a replacement character; the generator fed the
    # parser "" and then "é".  Replay must feed what the parser got, or the message would hold U+FFFD.
    from workbench.runtime.chat import Message

    token_texts = ["<think>", "x", "</think>", "caf", "\ufffd", "\ufffd", "<|im_end|>"]
    fed = ["<think>", "x", "</think>", "caf", "", "é", ""]
    session = session_from_generation(
        template_text="t",
        template_name="t",
        spec=SPEC,
        model=ModelRecord(),
        messages=[],
        tools=[],
        settings={},
        prompt="",
        steps=_steps(token_texts),
        parsed=Message(role="assistant", content="café", reasoning_content="x"),
        step_texts=fed,
    )
    path = save_session(tmp_path / "s.json", session)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert sum('"text":' in line for line in lines if '"token_id"' in line) == 3  # where it differs
    loaded = load_session(path)
    assert loaded.output_text == "<think>x</think>café"
    result = replay_session(loaded)
    assert result.matches, result.mismatches
    assert result.message.content == "café"


def test_step_texts_must_match_the_steps() -> None:
    from workbench.runtime.chat import Message

    with pytest.raises(SessionError, match="2 entries for 3 steps"):
        session_from_generation(
            template_text="t",
            template_name="t",
            spec=SPEC,
            model=ModelRecord(),
            messages=[],
            tools=[],
            settings={},
            prompt="",
            steps=_steps(["a", "b", "c"]),
            parsed=Message(role="assistant", content="abc"),
            step_texts=["a", "b"],
        )


def test_template_record_hash_is_the_sha256_of_the_text() -> None:
    import hashlib

    record = TemplateRecord.from_text("{{ x }}", "x")
    assert record.sha256 == hashlib.sha256(b"{{ x }}").hexdigest()


def test_a_recorded_stop_token_is_not_fed_when_the_exact_texts_are_unknown() -> None:
    # What the TUI records: token texts only, the last step being the stop token.
    from workbench.runtime.chat import Message

    steps = _steps(["Hello", " there", "<|im_end|>"])
    steps[-1] = Step(
        index=2, token_id=2, token_text="<|im_end|>", allowed_count=1, vocab_size=10, finished=True
    )
    session = session_from_generation(
        template_text="t",
        template_name="t",
        spec=SPEC,
        model=ModelRecord(),
        messages=[],
        tools=[],
        settings={},
        prompt="",
        steps=steps,
        parsed=Message(role="assistant", content="Hello there"),
    )
    assert session.output_text == "Hello there"
    assert replay_session(session).matches
