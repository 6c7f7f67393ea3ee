"""Bad input through the real command line: every case exits with code 1 and exactly one clear line on stderr.

These run ``python -m workbench render ...`` in a subprocess, so the exit code, the stream separation and
the environment (HF_HUB_OFFLINE, an unreachable hub) are the ones a user gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO

MESSAGES = [{"role": "user", "content": "Hi"}]


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or REPO,
        timeout=120,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit code 1, nothing on stdout, one line on stderr containing every needle; returns that line."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error: ")
    for needle in needles:
        assert needle in line, line
    return line


@pytest.fixture
def messages_file(tmp_path: Path) -> Path:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(MESSAGES), encoding="utf-8")
    return path


def _template(tmp_path: Path, text: str, name: str = "t.jinja") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_malformed_template_names_its_line(tmp_path: Path, messages_file: Path) -> None:
    bad = _template(tmp_path, "{% for m in messages %}\n{{ m.content }}\n{% if %}\n{% endfor %}")
    line = assert_one_line_error(run_cli("render", str(bad), "-m", str(messages_file)), "syntax error")
    assert "template line 3" in line
    assert str(bad) in line


def test_template_that_raises_gives_its_message_and_line(tmp_path: Path, messages_file: Path) -> None:
    raising = _template(
        tmp_path,
        "{%- for m in messages %}\n{%- if m.role == 'user' %}\n{{ raise_exception('no users\nhere') }}"
        "\n{%- endif %}\n{%- endfor %}",
    )
    line = assert_one_line_error(run_cli("render", str(raising), "-m", str(messages_file)), "no users here")
    assert "template line 3" in line


def test_template_that_loops_forever_is_stopped_by_the_time_limit(
    tmp_path: Path, messages_file: Path
) -> None:
    forever = _template(
        tmp_path,
        "{%- set xs = range(100000) | list %}\n{%- for a in xs %}{%- for b in xs %}{%- for c in xs %}"
        "{%- endfor %}{%- endfor %}{%- endfor %}",
    )
    result = run_cli("render", str(forever), "-m", str(messages_file), "--time-limit", "0.3")
    assert_one_line_error(result, "timed out", "template line 2")


def test_missing_template_file(tmp_path: Path, messages_file: Path) -> None:
    missing = tmp_path / "nope.jinja"
    assert_one_line_error(
        run_cli("render", str(missing), "-m", str(messages_file)), "template not found", "nope.jinja"
    )


def test_missing_messages_file(messages_file: Path) -> None:
    result = run_cli("render", "chatml-think-tools", "-m", str(messages_file.with_name("absent.json")))
    assert_one_line_error(result, "messages file not found")


def test_messages_that_are_not_json_or_not_messages(tmp_path: Path) -> None:
    not_json = tmp_path / "broken.json"
    not_json.write_text('[{"role": "user", "content": "Hi"', encoding="utf-8")
    assert_one_line_error(run_cli("render", "chatml-think-tools", "-m", str(not_json)), "not valid JSON")
    wrong_shape = tmp_path / "shape.json"
    wrong_shape.write_text(json.dumps({"role": "user"}), encoding="utf-8")
    assert_one_line_error(run_cli("render", "chatml-think-tools", "-m", str(wrong_shape)), "message")
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    assert_one_line_error(run_cli("render", "chatml-think-tools", "-m", str(empty)), "empty conversation")


def test_gguf_without_a_template(tmp_path: Path, messages_file: Path) -> None:
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "no-template.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_token_list(["<s>", "</s>", "hi"])
    writer.add_bos_token_id(0)
    writer.add_eos_token_id(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    result = run_cli("render", str(path), "-m", str(messages_file))
    assert_one_line_error(result, "no tokenizer.chat_template", "pass a .jinja")


def test_hub_id_with_hf_hub_offline(tmp_path: Path, messages_file: Path) -> None:
    env = {
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_CACHE": str(tmp_path / "hf" / "hub"),
    }
    result = run_cli("render", "some-org/some-model", "-m", str(messages_file), env=env)
    assert_one_line_error(result, "some-org/some-model", "HF_HUB_OFFLINE", "pass a local .jinja")


def test_hub_id_with_the_hub_unreachable(tmp_path: Path, messages_file: Path) -> None:
    """No offline flag, but nothing answers: a quick refusal, not huggingface_hub's 25 s of retries."""
    env = {
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_CACHE": str(tmp_path / "hf" / "hub"),
        "HF_ENDPOINT": "http://127.0.0.1:9",  # the discard port: connection refused at once
        "WORKBENCH_HUB_TIMEOUT": "1",
    }
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        env[proxy] = ""
    result = run_cli("render", "some-org/some-model", "-m", str(messages_file), env=env)
    assert_one_line_error(result, "some-org/some-model", "unreachable", "pass a local .jinja")


def test_undefined_call_and_oversized_value(tmp_path: Path, messages_file: Path) -> None:
    undefined = _template(tmp_path, "{{ messages[0].content }}\n{{ no_such_function() }}", "u.jinja")
    assert_one_line_error(
        run_cli("render", str(undefined), "-m", str(messages_file)), "undefined", "template line 2"
    )
    huge = _template(tmp_path, "{{ 'x' * 10**10 }}", "h.jinja")
    assert_one_line_error(
        run_cli("render", str(huge), "-m", str(messages_file)), "too large", "template line 1"
    )


def test_template_that_is_not_text(tmp_path: Path, messages_file: Path) -> None:
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"\xff\xfe\x00\x80garbage")
    assert_one_line_error(run_cli("render", str(binary), "-m", str(messages_file)), "not UTF-8")


def test_analyze_names_the_template_once(tmp_path: Path) -> None:
    """A source error already starts with the file it is about; analyze does not name it twice."""
    empty = _template(tmp_path, "", "empty.jinja")
    line = assert_one_line_error(run_cli("analyze", str(empty)), "the chat template is empty")
    assert line.count("empty.jinja") == 1, line
    broken = _template(tmp_path, "{% if %}", "broken.jinja")
    line = assert_one_line_error(run_cli("analyze", str(broken)), "syntax error")
    assert line.count("broken.jinja") == 1, line


# --- the render time limit, in-process (a hang here would be a bug: each case runs in a watched thread) ----

_NEST5 = "{% for c in xs %}{% for d in xs %}{% for e in xs %}{% endfor %}{% endfor %}{% endfor %}"
SLOW_TEMPLATES = {
    "empty_nested_loops_over_a_big_list": "{% set xs = range(100000) | list %}"
    "{% for a in xs %}{% for b in xs %}{% endfor %}{% endfor %}",
    "empty_nested_loops_over_small_lists": "{% set xs = range(200) | list %}"
    "{% for a in xs %}{% for b in xs %}" + _NEST5 + "{% endfor %}{% endfor %}",
    "exponential_macro_recursion": "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
    "{% endmacro %}{{ f(60) }}",
    "exponential_call_blocks": "{% macro twice() %}{{ caller() }}{{ caller() }}{% endmacro %}"
    "{% macro grow(n) %}{% if n %}{% call twice() %}{{ grow(n - 1) }}{% endcall %}{% endif %}{% endmacro %}"
    "{{ grow(60) }}",
    "recursive_loop_fan_out": "{% for x in [1, 2] recursive %}{% if loop.depth < 60 %}{{ loop([1, 2]) }}"
    "{% endif %}{% endfor %}",
    "generator_loop": "{% for a in range(100000) | map('string') %}"
    "{% for b in range(100000) | map('string') %}{% endfor %}{% endfor %}",
}


def _render_in_thread(source: str, time_limit: float) -> BaseException | str:
    from workbench.template.render import render

    outcome: list[BaseException | str] = []

    def work() -> None:
        try:
            outcome.append(render(source, MESSAGES, time_limit=time_limit))
        except BaseException as exc:  # handed back to the test
            outcome.append(exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the render ignored its time limit"
    return outcome[0]


@pytest.mark.parametrize("name", sorted(SLOW_TEMPLATES))
def test_render_time_limit_stops_templates_that_never_finish(name: str) -> None:
    from workbench.template.render import RenderTimeout

    result = _render_in_thread(SLOW_TEMPLATES[name], time_limit=0.3)
    assert isinstance(result, RenderTimeout), result
    assert result.kind == "timeout"
    assert result.line == 1
    assert "timed out" in str(result)


def test_unbounded_recursion_is_an_error_not_a_crash() -> None:
    from workbench.template.render import TemplateError

    result = _render_in_thread("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", time_limit=5)
    assert isinstance(result, TemplateError)
    assert result.kind == "recursion"


def test_one_threads_time_out_does_not_touch_another_render() -> None:
    """Deadlines are per thread: compiled templates are shared, so a global deadline would leak."""
    from workbench.template.render import RenderTimeout, render

    forever = SLOW_TEMPLATES["empty_nested_loops_over_a_big_list"]
    normal = "{% for m in messages %}{{ m.content }}{% endfor %}"
    results: dict[str, BaseException | str] = {}

    def slow() -> None:
        try:
            results["slow"] = render(forever, MESSAGES, time_limit=0.5)
        except RenderTimeout as exc:
            results["slow"] = exc

    worker = threading.Thread(target=slow, daemon=True)
    worker.start()
    outputs = {render(normal, MESSAGES, time_limit=30) for _ in range(200)}
    worker.join(60)
    assert outputs == {"Hi"}
    assert isinstance(results["slow"], RenderTimeout)
    assert render(normal, MESSAGES, time_limit=0.5) == "Hi"  # the thread's deadline was cleared afterwards


def test_text_no_encoding_holds_is_printed_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lone surrogate (a model's escaped string decodes to one) reaches a report: printed escaped, not a
    UnicodeEncodeError traceback in the middle of it."""
    import io

    from workbench.commands._common import _printable_streams

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
    monkeypatch.setattr(sys, "stdout", stream)
    _printable_streams()
    stream.write("value: \ud83d\n")
    stream.flush()
    assert raw.getvalue() == b"value: \\ud83d\n"
