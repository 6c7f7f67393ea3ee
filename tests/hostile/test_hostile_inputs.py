"""Input files of the wrong kind, round two (issue 22, items 2, 5 and 10): one line, never a traceback.

* Render limits are the command's own: a session's recorded ``template_kwargs`` may not carry ``time_limit``
  or a render argument (a shared session used to replay a template bomb for 60+ s).
* One policy for text that cannot be encoded: a lone surrogate (``"\\ud800"`` in JSON, a template literal,
  bytes that are not UTF-8 in an argument) is refused with one line where it comes in, in every command.
* Deep nesting, 100,000-digit integers, provenance of the wrong types, a tokenizer that is not JSON.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.template.render import RENDER_ARGUMENTS, TemplateError, check_template_kwargs, render
from workbench.template.source import load_template
from workbench.validate import validate

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "sessions" / "qwen3-tool-call.json"
TEMPLATE = REPO / "templates" / "chatml-think-tools.jinja"
MESSAGES = [{"role": "user", "content": "Hi"}]
runner = CliRunner()


def _cli(*args: str) -> tuple[int, str]:
    """Exit code and the one line on stderr (asserting there is exactly one and no traceback)."""
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    return result.exit_code, lines[0]


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii: a surrogate is written "\ud800"
    return path


@pytest.fixture
def session() -> dict[str, Any]:
    return json.loads(SESSION.read_text(encoding="utf-8"))


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "spec.json"
    assert runner.invoke(app, ["export", str(TEMPLATE), "-t", "spec", "-o", str(path)]).exit_code == 0
    return path


# --- render limits belong to the command ----------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(RENDER_ARGUMENTS))
def test_a_session_may_not_set_a_render_argument(key: str, session: dict[str, Any], tmp_path: Path) -> None:
    session["template_kwargs"] = {key: 60 if key == "time_limit" else []}
    code, line = _cli("replay", str(_write(tmp_path / "s.json", session)))
    assert code == 1
    assert f"'{key}' is a render argument set by the command itself" in line


def test_a_replayed_bomb_stops_at_the_commands_limit_not_the_sessions(
    session: dict[str, Any], tmp_path: Path
) -> None:
    """The attack: a loop bomb as the session's template, ``time_limit: 600`` in its kwargs.  Without the
    key the same session replays, and the bomb stops at the default limit."""
    bomb = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    session["template"] = {"name": "bomb", "text": bomb, "sha256": ""}
    session["template_kwargs"] = {"enable_thinking": True, "time_limit": 600}
    code, line = _cli("replay", str(_write(tmp_path / "s.json", session)))
    assert code == 1 and "'time_limit'" in line
    session["template_kwargs"] = {"enable_thinking": True}
    result = runner.invoke(app, ["replay", "--json", str(_write(tmp_path / "s2.json", session))])
    assert "Traceback" not in result.stderr
    check = json.loads(result.stdout)["prompt_check"]
    assert check["status"] == "not checked" and "render timed out" in check["detail"]


@pytest.mark.parametrize("key", ["time_limit", "messages", "tools", "add_generation_prompt", "documents"])
def test_library_callers_cannot_pass_render_arguments_as_template_variables(key: str) -> None:
    with pytest.raises(TemplateError, match="render argument") as caught:
        check_template_kwargs({key: 1})
    assert caught.value.kind == "usage"
    with pytest.raises(TemplateError, match="render argument"):
        validate(load_template(TEMPLATE), template_kwargs={key: 1})


# --- text that cannot be encoded --------------------------------------------------------------------------


def test_surrogates_in_messages_are_refused(tmp_path: Path) -> None:
    messages = _write(tmp_path / "m.json", [{"role": "user", "content": "a\ud800b"}])
    code, line = _cli("render", str(TEMPLATE), "-m", str(messages))
    assert code == 1 and "[0].content holds a lone surrogate" in line
    code, line = _cli("generate", "--template", str(TEMPLATE), "--messages", str(messages), "--model", "tiny")
    assert code == 1 and "lone surrogate" in line


def test_a_template_that_writes_a_surrogate_is_refused_in_every_command(tmp_path: Path) -> None:
    template = tmp_path / "lit.jinja"
    template.write_text(TEMPLATE.read_text(encoding="utf-8") + '{{ "\\ud800" }}', encoding="utf-8")
    messages = _write(tmp_path / "m.json", MESSAGES)
    output = tmp_path / "out.txt"
    output.write_text("hi", encoding="utf-8")
    for args in (
        ["render", str(template), "-m", str(messages)],
        ["analyze", str(template)],
        ["validate", str(template)],
        ["parse", "--template", str(template), str(output)],
        ["export", str(template), "-t", "spec", "-o", str(tmp_path / "x.json")],
    ):
        code, line = _cli(*args)
        assert code == 1 and "lone surrogate (\\ud800)" in line, (args, line)
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(TemplateError, match="lone surrogate"):
        render('{{ "\\ud800" }}', MESSAGES)


def test_surrogates_in_tokenizer_config_strings_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    _write(folder / "tokenizer_config.json", {"chat_template": "{{ bos_token }}hi", "bos_token": "\ud800"})
    code, line = _cli("analyze", str(folder))
    assert code == 1 and "bos_token holds a lone surrogate" in line
    _write(folder / "tokenizer_config.json", {"chat_template": "{{ '\ud800' }}"})
    code, line = _cli("render", str(folder), "-m", str(_write(tmp_path / "m.json", MESSAGES)))
    assert code == 1 and "chat_template holds a lone surrogate" in line


def test_surrogates_in_session_step_text_and_spec_markers_are_refused(
    session: dict[str, Any], tmp_path: Path
) -> None:
    session["steps"][0]["token_text"] = "\ud800"
    code, line = _cli("replay", str(_write(tmp_path / "s.json", session)))
    assert code == 1 and "steps[0].token_text holds a lone surrogate" in line
    spec = session["spec"]
    spec["reasoning"]["start"] = "<\udfff>"
    spec_path = _write(tmp_path / "spec.json", spec)
    out = tmp_path / "out.txt"
    out.write_text("hi", encoding="utf-8")
    for args in (
        ["parse", "--spec", str(spec_path), str(out)],
        ["validate", "--spec", str(spec_path)],
        ["export", "--spec", str(spec_path), "-t", "spec", "-o", str(tmp_path / "x.json")],
    ):
        code, line = _cli(*args)
        assert code == 1 and "reasoning.start holds a lone surrogate" in line, (args, line)


def test_an_argument_that_is_not_utf8_is_refused_or_shown_as_text(tmp_path: Path) -> None:
    messages = _write(tmp_path / "m.json", MESSAGES)
    result = runner.invoke(app, ["render", str(TEMPLATE), "-m", str(messages), "--kw", "x=a\udcffb"])
    assert result.exit_code == 2 and "not text that can be encoded" in result.stderr
    named = tmp_path / "t\udcff.jinja"  # the file name holds the byte 0xff
    shutil.copy(TEMPLATE, named)
    result = runner.invoke(app, ["render", str(named), "-m", str(messages), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["template"] == "t\ufffd"


# --- JSON that cannot be read, reports of the wrong shape, tokenizers that are not JSON --------------------


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ('{"chat_template": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ('{"chat_template": "x", "n": ' + "7" * 100_000 + "}", "cannot be read"),
    ],
    ids=["deep", "huge-integer"],
)
def test_unreadable_tokenizer_configs_and_conformance_files(payload: str, words: str, tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    config.write_text(payload, encoding="utf-8")
    code, line = _cli("render", str(config), "-m", str(_write(tmp_path / "m.json", MESSAGES)))
    assert code == 1 and words in line
    cases = tmp_path / "cases.json"
    cases.write_text(payload.replace('"chat_template": "x"', '"family": "f", "cases": []'), encoding="utf-8")
    code, line = _cli("conformance", str(cases))
    assert code == 1 and words in line


@pytest.mark.parametrize(
    ("validation", "field"),
    [
        ({"cases": "x"}, "provenance.validation.cases: expected a list"),
        ({"cases": [1]}, "provenance.validation.cases[0]: expected an object"),
        ({"cases": [{"id": 5, "status": "pass"}]}, "cases[0].id: expected a string"),
        ({"cases": [{"id": "a", "status": ["pass"]}]}, "cases[0].status: expected a string"),
        ({"cases": [], "notes": 5}, "provenance.validation.notes: expected a list"),
        ({"cases": [], "continuation": [{"id": "a"}]}, "continuation[0].status: expected a string"),
        ({"cases": [{"id": "a", "status": "pass", "expected": "x"}]}, "cases[0].expected: expected an obj"),
    ],
)
def test_a_spec_whose_provenance_has_the_wrong_types(
    validation: dict[str, Any], field: str, spec_file: Path, tmp_path: Path
) -> None:
    data = json.loads(spec_file.read_text(encoding="utf-8"))
    data["provenance"]["validation"] = validation
    path = _write(tmp_path / "bad.json", data)
    export = ["export", "--spec", str(path), "-t", "tests", "-o", "-"]
    for args in (["validate", "--spec", str(path)], export):
        code, line = _cli(*args)
        assert code == 1 and field in line, (args, line)


def test_a_tokenizer_that_is_not_json_is_one_line(tmp_path: Path) -> None:
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text("not json at all", encoding="utf-8")
    for target in ("lark", "structural-tag"):
        args = ["export", str(TEMPLATE), "-t", target, "--tokenizer", str(tokenizer)]
        args += ["-o", str(tmp_path / "x")]
        if target == "structural-tag":
            tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
            args += ["--tools", str(_write(tmp_path / "tools.json", tools))]
        code, line = _cli(*args)
        assert code == 1 and f"cannot read the tokenizer {tokenizer}" in line, line
    assert not (tmp_path / "x").exists()


def test_a_tokenizer_with_an_empty_vocabulary_is_one_line(tmp_path: Path) -> None:
    model = {"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}
    tokenizer = _write(tmp_path / "tokenizer.json", {"version": "1.0", "added_tokens": [], "model": model})
    args = ["export", str(TEMPLATE), "-t", "lark", "--tokenizer", str(tokenizer), "-o", str(tmp_path / "x")]
    code, line = _cli(*args)
    assert code == 1 and line.endswith("the vocabulary is empty"), line
    assert not (tmp_path / "x").exists()


def test_a_prompt_longer_than_the_context_can_hold_is_refused_before_tokenizing(tmp_path: Path) -> None:
    """2,000,000 characters cannot fit the tiny model's 8,192 tokens (a token is at most a few hundred
    bytes): refused from the length alone, without tokenizing it."""
    messages = _write(tmp_path / "m.json", [{"role": "user", "content": "word " * 400_000}])
    args = ["generate", "--template", str(TEMPLATE), "--messages", str(messages), "--model", "tiny"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]  # after the model's progress line
    assert "refused before tokenizing" in line and "limit of 8,192 tokens" in line


def test_recommend_says_it_is_running_and_stops_an_engine_at_its_time_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``recommend`` used to run for minutes with no output; an engine's harness now reports every
    heartbeat on stderr and is killed at its bound (issue 22, item 8)."""
    import sys
    import time

    from workbench.commands import recommend

    monkeypatch.setattr(recommend, "HEARTBEAT", 0.2)
    monkeypatch.setattr(recommend, "HARNESS_TIMEOUT", 1.0)
    said: list[str] = []
    hang = [sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(60)"]
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        recommend._harness(hang, '{"jobs": []}', {}, "vllm", said.append)
    assert time.monotonic() - started < 10
    assert said and all(line.startswith("vllm: still running") for line in said)
    quick = [sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"]
    assert recommend._harness(quick, "ok", {}, "sglang", said.append)[:2] == (0, "OK\n")
