"""``workbench generate``: the --json contract and one-line errors with exit code 1 (never a traceback)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.generation.tiny import build_fallback_tokenizer, make_tiny_model
from workbench.testing.reference_specs import QWEN3_LIKE

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 10},
                "unit": {"enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps([{"role": "user", "content": "Weather in Paris?"}]))
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([WEATHER]))
    spec = tmp_path / "spec.json"
    spec.write_text(QWEN3_LIKE.to_json())
    return {"messages": messages, "tools": tools, "spec": spec, "dir": tmp_path}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["generate", *args])
    return result.exit_code, result.stdout, result.stderr


def request(files: dict[str, Path], *, model: str = "tiny", tools: Path | None = None) -> list[str]:
    """The options every generate run here shares: the spec and template, a model and the messages."""
    args = ["--spec", str(files["spec"]), "--template", "chatml-think-tools", "--model", model]
    args += ["--messages", str(files["messages"])]
    return args + (["--tools", str(tools)] if tools is not None else [])


def test_json_prints_one_step_per_line_then_the_parsed_message(files: dict[str, Path]) -> None:
    code, out, err = run(
        *request(files, tools=files["tools"]),
        "--tool-choice",
        "required",
        "--no-enable-thinking",
        "--no-parallel",
        "--temperature",
        "1",
        "--seed",
        "4",
        "--max-new-tokens",
        "150",
        "--json",
    )
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    steps, final = lines[:-1], lines[-1]
    assert [s["index"] for s in steps] == list(range(len(steps)))
    assert all(
        {"token_id", "allowed_count", "vocab_size", "candidates", "timings_ms"} <= set(s) for s in steps
    )
    assert steps[-1]["finished"]
    assert set(final) == {"content", "reasoning_content", "tool_calls", "diagnostics"}
    [call] = final["tool_calls"]
    assert call["name"] == "get_weather"
    jsonschema.validate(call["arguments"], WEATHER["function"]["parameters"])


def test_default_output_colours_the_answer_and_lists_the_calls(files: dict[str, Path]) -> None:
    code, out, err = run(
        *request(files, tools=files["tools"]),
        "--tool-choice",
        "get_weather",
        "--no-enable-thinking",
        "--temperature",
        "1",
    )
    assert code == 0, err
    assert "<tool_call>" in out and "tool call get_weather" in out
    assert "constrained" in err


def assert_clean_failure(code: int, err: str, expected: str) -> None:
    assert code == 1
    last = err.strip().splitlines()[-1]  # model-loading progress lines may come first
    assert last.startswith("error: ") and expected in last
    assert "Traceback" not in err


# Each bad input sets up what it needs and returns the command line that must fail.
def unknown_tool_in_tool_choice(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return [*request(files, tools=files["tools"]), "--tool-choice", "get_wether"]


def schema_xgrammar_cannot_compile(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    bad = {
        "type": "function",
        "function": {
            "name": "odd",
            "parameters": {
                "type": "object",
                "properties": {"x": {"type": "string", "pattern": "(?<=a)b"}},
                "required": ["x"],
            },
        },
    }
    tools = files["dir"] / "bad_tools.json"
    tools.write_text(json.dumps([bad]))
    return [*request(files, tools=tools), "--tool-choice", "required"]


def model_folder_without_tokenizer(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    folder = files["dir"] / "model"
    make_tiny_model(build_fallback_tokenizer()).save_pretrained(folder)
    return request(files, model=str(folder))


def offline_hub_id(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return request(files, model="org/model")


@pytest.mark.parametrize(
    ("bad_input", "expected"),
    [
        (unknown_tool_in_tool_choice, "tool_choice 'get_wether' is not one of the tools (get_weather)"),
        (schema_xgrammar_cannot_compile, "tool 'odd' cannot be compiled by xgrammar"),
        (model_folder_without_tokenizer, "has no tokenizer"),
        (offline_hub_id, "cannot fetch org/model: offline"),
    ],
    ids=[
        "unknown-tool-in-tool-choice",
        "schema-xgrammar-cannot-compile",
        "model-without-tokenizer",
        "offline-hub-id",
    ],
)
def test_bad_input_fails_with_one_error_line(
    files: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    bad_input: Callable[[dict[str, Path], pytest.MonkeyPatch], list[str]],
    expected: str,
) -> None:
    code, _, err = run(*bad_input(files, monkeypatch))
    assert_clean_failure(code, err, expected)


def test_missing_messages_file_and_missing_format_source(files: dict[str, Path]) -> None:
    code, _, err = run(
        "--spec", str(files["spec"]), "--model", "tiny", "--messages", str(files["dir"] / "nope.json")
    )
    assert_clean_failure(code, err, "messages file not found")
    code, _, _ = run("--model", "tiny", "--messages", str(files["messages"]))
    assert code == 2


def test_save_session_writes_a_session_that_replays(files: dict[str, Path]) -> None:
    saved = files["dir"] / "run.json"
    code, _, err = run(
        *request(files, tools=files["tools"]),
        "--tool-choice",
        "required",
        "--temperature",
        "1",
        "--seed",
        "4",
        "--max-new-tokens",
        "60",
        "--save-session",
        str(saved),
        "--json",
    )
    assert code == 0, err
    assert f"saved session {saved}" in err
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["settings"]["tool_choice"] == "required" and data["steps"]
    replayed = CliRunner().invoke(app, ["replay", str(saved)])
    assert replayed.exit_code == 0, replayed.output
