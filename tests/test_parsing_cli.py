"""``workbench parse``: the output contracts and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REPO
from workbench.cli import app

SPEC = REPO / "specs" / "_parser_fixtures" / "Qwen-Qwen3-0.6B.json"
OUTPUT = (
    "<think>plan</think>\n\nOK.<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = tmp_path / "out.txt"
    out.write_text(OUTPUT, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    return {"out": out, "tools": tools}


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["parse", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_json_output_is_the_message_contract(files: dict[str, Path]) -> None:
    code, out, _ = run("--spec", str(SPEC), "--tools", str(files["tools"]), str(files["out"]), "--json")
    assert code == 0
    assert json.loads(out) == {
        "content": "OK.",
        "reasoning_content": "plan",
        "tool_calls": [{"id": "", "name": "get_weather", "arguments": {"city": "Paris"}}],
        "diagnostics": [],
        "finish_reason": "tool_calls",
    }


@pytest.mark.parametrize("stream", [False, True], ids=["one_shot", "streamed"])
def test_a_call_cut_inside_its_arguments_is_not_reported_as_made(tmp_path: Path, stream: bool) -> None:
    """``max_tokens`` cut the call: finish reason ``length``, and no call with broken arguments (one-shot: it
    is left out with a diagnostic; streamed: the pieces already sent stay sent, as a server streams them)."""
    out = tmp_path / "cut.txt"
    out.write_text('<think>plan</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par')
    code, text, _ = run("--spec", str(SPEC), str(out), "--json", *(["--stream"] if stream else []))
    assert code == 0
    if stream:
        last = json.loads(text.splitlines()[-1])
        assert last["choices"][0]["finish_reason"] == "length"
        assert "E-STREAM-TRUNCATED" in [d["code"] for d in last["diagnostics"]]
    else:
        got = json.loads(text)
        assert (got["tool_calls"], got["reasoning_content"], got["finish_reason"]) == ([], "plan", "length")
        assert any("left out" in d["message"] for d in got["diagnostics"])


def test_a_whole_call_without_its_closing_marker_is_still_made(tmp_path: Path) -> None:
    out = tmp_path / "cut.txt"
    out.write_text('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}')
    code, text, _ = run("--spec", str(SPEC), str(out), "--json")
    got = json.loads(text)
    assert code == 0 and got["finish_reason"] == "tool_calls"
    assert got["tool_calls"] == [{"id": "", "name": "get_weather", "arguments": {"city": "Paris"}}]


def test_stdin_input_and_thinking_switch() -> None:
    code, out, _ = run("--spec", str(SPEC), "--no-enable-thinking", "-", "--json", stdin="<think>x</think>y")
    assert code == 0 and json.loads(out)["content"] == "<think>x</think>y"


def test_stream_json_prints_openai_chunks_that_add_up_to_the_message(files: dict[str, Path]) -> None:
    code, out, _ = run("--spec", str(SPEC), "--stream", str(files["out"]), "--json")
    assert code == 0
    chunks = [json.loads(line) for line in out.splitlines()]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert "".join(d.get("content", "") for d in deltas) == "OK."
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "plan"
    calls = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert [tc["function"]["name"] for tc in calls if "name" in tc["function"]] == ["get_weather"]
    assert json.loads("".join(tc["function"].get("arguments", "") for tc in calls)) == {"city": "Paris"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and chunks[-1]["diagnostics"] == []


def test_default_output_shows_every_character_and_the_message(files: dict[str, Path]) -> None:
    code, out, _ = run("--spec", str(SPEC), str(files["out"]))
    assert code == 0
    assert out.startswith(OUTPUT)  # the coloured text is the input itself
    assert "tool call 0: get_weather" in out and "reasoning: plan" in out


def test_template_option_analyses_the_template(files: dict[str, Path]) -> None:
    pytest.importorskip("workbench.analysis")
    code, out, _ = run("--template", "chatml-think-tools", str(files["out"]), "--json")
    assert code == 0 and json.loads(out)["tool_calls"][0]["name"] == "get_weather"


# --engine: ParseOptions.for_engine's documented policies, on outputs the engines read differently.
OTHER_TOOL = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
TEXT_AFTER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>Done.'


def test_engine_profiles_differ_on_a_tool_the_request_did_not_offer(files: dict[str, Path]) -> None:
    # check_tool_names: the workbench (and SGLang) ignore a call to a function outside the request's tools,
    # with an E-CALL-SCHEMA diagnostic; vLLM does not check names, so the call is kept.
    base = ["--spec", str(SPEC), "--tools", str(files["tools"]), "-", "--json"]
    code, out, _ = run(*base, stdin=OTHER_TOOL)
    workbench = json.loads(out)
    assert code == 0 and workbench["tool_calls"] == []
    assert "E-CALL-SCHEMA" in [d["code"] for d in workbench["diagnostics"]]
    code, out, _ = run(*base, "--engine", "vllm", stdin=OTHER_TOOL)
    calls = json.loads(out)["tool_calls"]
    assert code == 0 and [(c["name"], c["arguments"]) for c in calls] == [("get_time", {})]


def test_engine_one_shot_and_streaming_paths_differ_on_text_after_the_calls(files: dict[str, Path]) -> None:
    # text_after_calls: the workbench keeps text after the calls as content; vLLM's one-shot path drops it
    # (W-TEXT-DROPPED), its streaming path does not.
    base = ["--spec", str(SPEC), "--tools", str(files["tools"]), "-", "--json"]
    assert json.loads(run(*base, stdin=TEXT_AFTER)[1])["content"] == "Done."
    one_shot = json.loads(run(*base, "--engine", "vllm", stdin=TEXT_AFTER)[1])
    assert not one_shot["content"] and [c["name"] for c in one_shot["tool_calls"]] == ["get_weather"]
    assert "W-TEXT-DROPPED" in [d["code"] for d in one_shot["diagnostics"]]
    code, out, _ = run(*base, "--engine", "vllm", "--stream", stdin=TEXT_AFTER)
    deltas = [json.loads(line)["choices"][0]["delta"] for line in out.splitlines()]
    assert code == 0 and "".join(d.get("content", "") for d in deltas) == "Done."


def test_unknown_engine_is_a_usage_error(files: dict[str, Path]) -> None:
    code, _out, err = run("--spec", str(SPEC), "--engine", "tgi", str(files["out"]))
    assert code == 2 and "--engine" in err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["OUT"], 2, "exactly one of --template or --spec"),
        (["--spec", "SPEC", "--template", "x", "OUT"], 2, "exactly one of --template or --spec"),
        (["--spec", "/nonexistent/spec.json", "OUT"], 1, "spec file not found"),
        (["--spec", "SPEC", "/nonexistent/out.txt"], 1, "input file not found"),
        (["--spec", "SPEC", "--tools", "BAD", "OUT"], 1, "tools"),
        (["--spec", "BAD", "OUT"], 1, "not valid JSON"),
    ],
)
def test_bad_input_and_usage_exit_codes(
    files: dict[str, Path], tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    subst = {"OUT": str(files["out"]), "SPEC": str(SPEC), "BAD": str(bad)}
    got, _out, err = run(*[subst.get(a, a) for a in args])
    assert got == code
    assert message in err
