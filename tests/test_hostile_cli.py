"""Hostile input to the CLI: never a hang, never a traceback, never invalid JSON on stdout (issue 13).

Every case here was a hang or a traceback in the adversarial pass: a FIFO with no writer or /dev/zero as
input, invalid UTF-8 on stdin, JSON nested past the recursion limit or holding a 5,000-digit integer, lone
surrogates in model output, Rich markup in recorded names, ``--kw`` colliding with the command's own
arguments.  Each must end with exit 1 (or 2 for usage) and one line on stderr.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workbench.cli import app

runner = CliRunner()


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines, "expected an error line on stderr"
    assert "Traceback" not in stderr
    return lines[-1]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_with_no_writer_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = runner.invoke(app, ["parse", "--template", "chatml-think-tools", str(fifo)])
    assert result.exit_code == 1
    assert "not a regular file" in _one_error_line(result.stderr)
    result = runner.invoke(app, ["replay", str(fifo)])
    assert result.exit_code == 1
    assert "not a regular file" in _one_error_line(result.stderr)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_dev_zero_is_refused() -> None:
    result = runner.invoke(app, ["render", "chatml-think-tools", "--messages", "/dev/zero"])
    assert result.exit_code == 1
    assert "not a regular file" in _one_error_line(result.stderr)


def test_invalid_utf8_on_stdin_is_refused() -> None:
    result = runner.invoke(app, ["parse", "--template", "chatml-think-tools", "-"], input=b"caf\xe9 ok")
    assert result.exit_code == 1
    assert "not valid UTF-8 (byte 3" in _one_error_line(result.stderr)


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('[{"role": "user", "content": ' + "7" * 5000 + "}]", "cannot be read"),
    ],
)
def test_unreadable_json_is_one_line(tmp_path: Path, payload: str, words: str) -> None:
    messages = tmp_path / "m.json"
    messages.write_text(payload)
    result = runner.invoke(app, ["render", "chatml-think-tools", "--messages", str(messages)])
    assert result.exit_code == 1
    assert words in _one_error_line(result.stderr)


def test_lone_surrogates_in_output_are_escaped_in_strict_json(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    # A lone surrogate cannot be stored in a UTF-8 file; a JSON escape in the model's arguments can.
    out.write_text('<tool_call>\n{"name": "get_weather", "arguments": {"city": "\\ud800 x"}}\n</tool_call>')
    result = runner.invoke(app, ["parse", "--template", "chatml-think-tools", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    assert "\\ud800" in result.stdout
    data = json.loads(result.stdout)
    assert data["tool_calls"][0]["arguments"]["city"] == "\ud800 x"


@pytest.mark.parametrize("key", ["messages", "tools", "add_generation_prompt", "time_limit"])
def test_kw_cannot_set_the_commands_own_arguments(tmp_path: Path, key: str) -> None:
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "user", "content": "hi"}]')
    result = runner.invoke(
        app, ["render", "chatml-think-tools", "--messages", str(messages), "--kw", f"{key}=1"]
    )
    assert result.exit_code == 2
    assert "set by the command itself" in result.stderr
    assert "Traceback" not in result.stderr


def test_markup_in_a_session_is_printed_as_text(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[1] / "sessions"
    session = next(iter(sorted(source.glob("*.json"))))
    data = json.loads(session.read_text())
    data["template"]["name"] = "[/] [bold]x[/bold] [/]"
    data["model"]["name"] = "[red]m[/]"
    hostile = tmp_path / "s.json"
    hostile.write_text(json.dumps(data))
    result = runner.invoke(app, ["replay", str(hostile)])
    assert "Traceback" not in result.stderr
    assert "MarkupError" not in result.stderr + result.stdout
    assert "[/] [bold]x[/bold] [/]" in result.stdout


def test_export_refuses_to_replace_a_read_only_file(tmp_path: Path) -> None:
    target = tmp_path / "spec.json"
    target.write_text("precious")
    target.chmod(0o444)
    result = runner.invoke(
        app, ["export", "chatml-think-tools", "--target", "spec", "-o", str(target), "--force"]
    )
    assert result.exit_code == 1
    assert "read-only" in _one_error_line(result.stderr)
    assert target.read_text() == "precious"


def test_a_temp_file_left_by_a_killed_writer_is_cleaned_up(tmp_path: Path) -> None:
    import time

    from workbench.session import STALE_TEMP_SECONDS, write_atomic

    target = tmp_path / "out.json"
    stale = tmp_path / ".out.json.abc123.tmp"
    stale.write_text("half")
    old = time.time() - STALE_TEMP_SECONDS - 5
    os.utime(stale, (old, old))
    fresh = tmp_path / ".out.json.def456.tmp"  # a writer still at work: never touched
    fresh.write_text("in progress")
    write_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert not stale.exists() and fresh.exists()


def _session_with(tmp_path: Path, change: object) -> Path:
    source = Path(__file__).resolve().parents[1] / "sessions"
    data = json.loads(next(iter(sorted(source.glob("*.json")))).read_text())
    change(data)  # type: ignore[operator]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["steps"][0].__setitem__("finished", "yes"), "steps[0].finished"),
        (lambda d: d["steps"][0].__setitem__("jump_forward", 5), "steps[0].jump_forward"),
        (lambda d: d["steps"][0].__setitem__("timings_ms", {"forward": "slow"}), "steps[0].timings_ms"),
        (lambda d: d.__setitem__("version", -1), "impossible"),
        (lambda d: d["spec"].__setitem__("version", 0), "spec.version"),
        (lambda d: d.__setitem__("tools", [{"function": {"name": "f", "parameters": "x"}}]), "tools[0]"),
    ],
)
def test_a_session_field_of_the_wrong_type_is_refused_and_named(
    tmp_path: Path, change: object, field: str
) -> None:
    result = runner.invoke(app, ["replay", str(_session_with(tmp_path, change))])
    assert result.exit_code == 1
    assert field in _one_error_line(result.stderr)


@pytest.mark.parametrize("command", ["analyze", "validate", "render", "export"])
@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_time_limit_must_be_finite_and_positive_in_every_command(command: str, value: str) -> None:
    args = {
        "analyze": ["analyze", "chatml-think-tools"],
        "validate": ["validate", "chatml-think-tools"],
        "render": ["render", "chatml-think-tools", "--messages", "-"],
        "export": ["export", "chatml-think-tools", "--target", "spec", "-o", "-"],
    }[command]
    result = runner.invoke(app, [*args, f"--time-limit={value}"], input="[]")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
