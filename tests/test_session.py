"""Session files: lossless round trip, small on disk, atomic writes, and clear refusal of bad files."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from workbench.generation.step import Candidate, Step
from workbench.runtime.chat import Message, Tool, ToolCall
from workbench.runtime.events import Event
from workbench.runtime.spec import FormatSpec, ReasoningSpec, ToolsSpec
from workbench.session import (
    SESSION_VERSION,
    ModelRecord,
    Session,
    SessionError,
    TemplateRecord,
    dumps_session,
    load_session,
    save_session,
)

SPEC = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"),
    tools=ToolsSpec(format="json_native", call_start="<tool_call>", call_end="</tool_call>", parallel=True),
    end_markers=("<|im_end|>",),
)

WORDS = [" the", " weather", " in", " Paris", "<tool_call>", "\n", '{"', "name", '":', ' "', "é", "🙂"]


def realistic_step(rng: random.Random, index: int) -> Step:
    """A step as the generator records it: 10 candidates, a 64-bucket mask strip, events and timings."""
    candidates = tuple(
        Candidate(
            token_id=rng.randrange(151_936),
            text=rng.choice(WORDS),
            logit=rng.uniform(-30, 30),
            prob=rng.random() / (k + 1),
            allowed=rng.random() < 0.7,
        )
        for k in range(10)
    )
    token = candidates[0]
    return Step(
        index=index,
        token_id=token.token_id,
        token_text=token.text,
        allowed_count=rng.randrange(1, 151_936),
        vocab_size=151_936,
        candidates=candidates,
        forced=rng.random() < 0.05,
        constrained=index % 3 == 0,
        region="constrained" if index % 3 == 0 else "free",
        mask_strip=tuple(rng.random() for _ in range(64)),
        events=(Event("content", token.text), Event("tool_args", token.text, tool_index=0)),
        timings_ms={"forward": rng.uniform(5, 50), "mask": rng.uniform(0, 2), "parse": rng.uniform(0, 1)},
    )


def make_session(n_steps: int = 3, seed: int = 0) -> Session:
    rng = random.Random(seed)
    return Session(
        template=TemplateRecord.from_text("{{ messages[0].content }}\n", "tiny"),
        spec=SPEC,
        model=ModelRecord(name="tiny-qwen3", ref="tiny:qwen3", vocab_size=151_936, tokenizer="qwen3"),
        messages=(Message(role="user", content="Weather in Paris? «ü»"),),
        tools=(
            Tool(
                name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}
            ),
        ),
        settings={"temperature": 0.0, "seed": 3, "constrain": True, "enable_thinking": True},
        prompt="<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n",
        steps=tuple(realistic_step(rng, i) for i in range(n_steps)),
        parsed=Message(
            role="assistant", content="", tool_calls=(ToolCall("get_weather", '{"city": "Paris"}', "c1"),)
        ).to_contract(),
        note="unit test",
    )


def test_session_round_trips_through_its_file(tmp_path: Path) -> None:
    session = make_session(5)
    path = save_session(tmp_path / "s.json", session)
    loaded = load_session(path)
    assert loaded.template == session.template
    assert loaded.spec == session.spec
    assert loaded.messages == session.messages and loaded.tools == session.tools
    assert loaded.parsed == session.parsed
    assert [s.token_text for s in loaded.steps] == [s.token_text for s in session.steps]
    assert loaded.steps[2].events == session.steps[2].events
    assert loaded.steps[1].candidates[3].token_id == session.steps[1].candidates[3].token_id
    # Floats are rounded for size, but stay close to what was recorded.
    assert loaded.steps[1].candidates[3].logit == pytest.approx(
        session.steps[1].candidates[3].logit, abs=1e-4
    )
    assert loaded.steps[1].mask_strip[7] == pytest.approx(session.steps[1].mask_strip[7], abs=1e-4)
    # Saving what was loaded gives the same bytes: the file format is stable.
    assert dumps_session(loaded) == path.read_text(encoding="utf-8")


def test_two_thousand_realistic_steps_stay_under_five_megabytes(tmp_path: Path) -> None:
    path = save_session(tmp_path / "big.json", make_session(2000))
    size = path.stat().st_size
    print(f"2,000-step session: {size / 1e6:.2f} MB")
    assert size < 5_000_000
    assert len(load_session(path).steps) == 2000


def test_masked_minus_infinity_logit_survives_as_json_null(tmp_path: Path) -> None:
    session = make_session(1)
    step = session.steps[0]
    masked = Candidate(token_id=1, text="x", logit=float("-inf"), prob=0.0, allowed=False)
    session = Session(**{**session.__dict__, "steps": (Step(**{**step.__dict__, "candidates": (masked,)}),)})
    path = save_session(tmp_path / "s.json", session)
    assert json.loads(path.read_text())["steps"][0]["candidates"][0]["logit"] is None
    assert load_session(path).steps[0].candidates[0].logit == float("-inf")


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "s.json"
    save_session(target, make_session(2))
    before = target.read_bytes()

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(SessionError, match="No space left"):
        save_session(target, make_session(50, seed=9))
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_writing_into_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="does not exist"):
        save_session(tmp_path / "nope" / "s.json", make_session(1))


def _assert_refused(path: Path, pattern: str) -> None:
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with pytest.raises(SessionError, match=pattern) as info:
        load_session(path)
    assert "\n" not in str(info.value)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_truncated_session_is_refused_with_one_line_and_left_alone(tmp_path: Path) -> None:
    full = dumps_session(make_session(20))
    path = tmp_path / "cut.json"
    path.write_text(full[: len(full) // 2], encoding="utf-8")
    _assert_refused(path, "truncated")


def test_corrupt_session_is_refused(tmp_path: Path) -> None:
    full = dumps_session(make_session(3))
    path = tmp_path / "bad.json"
    path.write_text(full.replace('"steps": [', '"steps": [}', 1), encoding="utf-8")
    _assert_refused(path, "corrupt")


def test_binary_and_empty_files_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    _assert_refused(binary, "not UTF-8")
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    _assert_refused(empty, "empty")


def test_newer_version_is_refused_not_half_understood(tmp_path: Path) -> None:
    data = json.loads(dumps_session(make_session(1)))
    data["version"] = SESSION_VERSION + 1
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    _assert_refused(path, "newer workbench")


def test_json_that_is_not_a_session_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(SPEC.to_json(), encoding="utf-8")
    _assert_refused(path, "not a workbench session")


@pytest.mark.parametrize(
    ("mutate", "pattern"),
    [
        (lambda d: d["steps"][0].update(token_id="7"), r"steps\[0\]\.token_id: expected an integer"),
        (lambda d: d["steps"][0].update(surprise=1), r"steps\[0\]: unknown field"),
        (lambda d: d["steps"][0]["candidates"][0].pop("prob"), r"steps\[0\]: malformed step"),
        (lambda d: d["spec"]["reasoning"].update(mode="sometimes"), "spec.reasoning.mode"),
        (lambda d: d["template"].update(text="edited"), "sha256 does not match"),
        (lambda d: d.update(messages={"role": "user"}), "messages: expected a list"),
    ],
)
def test_bad_fields_are_named(tmp_path: Path, mutate, pattern: str) -> None:
    data = json.loads(dumps_session(make_session(2)))
    mutate(data)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    _assert_refused(path, pattern)


def test_replay_comparison_is_validations_and_exact() -> None:
    """Replay holds a replayed message to the recorded one with validation's comparison: ``true`` is not
    ``1`` (Python's ``True == 1`` made them equal before), and text is compared exactly (the same parser on
    the same text), ids included."""
    from workbench.session import compare_contract

    def message(value: object, content: str = "Hi", call_id: str = "c0") -> dict[str, object]:
        call = {"id": call_id, "name": "f", "arguments": {"x": value}}
        return {"content": content, "reasoning_content": "", "tool_calls": [call]}

    assert compare_contract(message(True), message(True)) == []
    assert compare_contract(message(True), message(1)) == [
        'tool_calls[0].arguments: recorded {"x": true}, replayed {"x": 1}'
    ]
    assert compare_contract(message(1), message(1.0)) == []  # one JSON number
    assert compare_contract(message(True, "Hi"), message(True, "Hi ")) == [
        "content: recorded 'Hi', replayed 'Hi '"
    ]
    assert compare_contract(message(True, call_id="a"), message(True, call_id="b")) == [
        "tool_calls[0].id: recorded 'a', replayed 'b'"
    ]
