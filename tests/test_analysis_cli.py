"""``workbench analyze``: the JSON contract, several templates at once, and every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import PROJECT_TEMPLATES, SHARED
from workbench.cli import app

runner = CliRunner()
DEFAULT = PROJECT_TEMPLATES / "chatml-think-tools.jinja"


def _run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["analyze", *args])


def _one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def default_template() -> Path:
    if not DEFAULT.is_file():
        pytest.skip("project template chatml-think-tools not written yet")
    return DEFAULT


def test_json_output_is_the_documented_contract(default_template: Path) -> None:
    result = _run(str(default_template), "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert {"spec", "probes", "warnings"} <= set(data)
    assert data["spec"]["tools"]["format"] == "json_native"
    assert {p["id"] for p in data["probes"]} >= {"R1", "T1", "A2"}


def test_an_alias_of_a_project_template_works(default_template: Path) -> None:
    result = _run("chatml-think-tools", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["template"] == "chatml-think-tools"


def test_a_folder_gives_a_list(tmp_path: Path) -> None:
    (tmp_path / "a.jinja").write_text("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}")
    (tmp_path / "b.jinja").write_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}")
    result = _run(str(tmp_path), "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [d["template"] for d in data] == ["a", "b"]


def test_human_output_shows_each_probe_and_the_markers(default_template: Path) -> None:
    result = _run(str(default_template))
    assert result.exit_code == 0, result.stderr
    assert "What does a tool call look like" in result.stdout
    assert "markers" in result.stdout and "tools.call_start" in result.stdout


@pytest.mark.shared
@pytest.mark.slow
def test_the_whole_shared_folder_is_analysed() -> None:
    folder = SHARED / "templates"
    if not folder.is_dir():
        pytest.skip("../shared not present")
    result = _run(str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert len(data) == 35 and all("spec" in d for d in data)


# ----------------------------------------------------------------------------------------- bad input
def test_malformed_template(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for m in messages %}\n{{ m.content \n")
    result = _run(str(bad))
    assert result.exit_code == 1
    assert "syntax" in _one_error_line(result)


def test_template_that_raises(tmp_path: Path) -> None:
    bad = tmp_path / "raises.jinja"
    bad.write_text("{{ raise_exception('this template refuses everything') }}")
    result = _run(str(bad))
    assert result.exit_code == 1
    assert "refuses everything" in _one_error_line(result)


def test_template_that_loops_forever(tmp_path: Path) -> None:
    bad = tmp_path / "loop.jinja"
    bad.write_text("{% for i in range(99999) %}{% for j in range(99999) %}{{ j }}{% endfor %}{% endfor %}")
    result = _run(str(bad), "--time-limit", "0.2")
    assert result.exit_code == 1
    assert "timed out" in _one_error_line(result)


def test_missing_file(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "nope.jinja"))
    assert result.exit_code == 1
    assert "not found" in _one_error_line(result)


def test_one_bad_template_among_several_is_reported_and_the_rest_analysed(tmp_path: Path) -> None:
    (tmp_path / "good.jinja").write_text("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}")
    (tmp_path / "worse.jinja").write_text("{{ raise_exception('no') }}")
    result = _run(str(tmp_path), "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert "spec" in data[0] and "error" in data[1]
    assert "worse.jinja" in _one_error_line(result)


def test_no_template_is_a_usage_error() -> None:
    assert _run().exit_code == 2
