"""The analysis checks itself: verdicts per feature, and warnings wherever a spec that fails is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import PROJECT_TEMPLATES
from workbench.cli import app
from workbench.selfcheck import check_spec, verdicts_from_report, warning_line
from workbench.template.source import load_template
from workbench.validate import validate

# A format no spec can describe: the arguments are written back to front.  Its verdicts must say so.
REVERSED_TEXT = (
    "{%- for m in messages -%}<|im_start|>{{ m.role }}\n{{ m.content or '' }}"
    "{%- if m.tool_calls is defined and m.tool_calls -%}{%- for c in m.tool_calls -%}"
    "<call>{{ c.function.name }}:{{ c.function.arguments | tojson | reverse }}</call>"
    "{%- endfor -%}{%- endif -%}<|im_end|>\n{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}"
)


@pytest.fixture
def reversed_template(tmp_path: Path) -> str:
    path = tmp_path / "reversed-arguments.jinja"
    path.write_text(REVERSED_TEXT, encoding="utf-8")
    return str(path)


TYPED = str(PROJECT_TEMPLATES / "new-formats" / "typed-attr-args.jinja")
runner = CliRunner()


def test_a_template_the_spec_describes_gets_only_works_and_not_rendered() -> None:
    source = load_template("chatml-think-tools")
    from workbench.formats import analyze

    verdicts = check_spec(source, analyze(source).spec)
    statuses = {v.feature: v.status for v in verdicts}
    assert statuses["tool_call"] == "works" and statuses["reasoning"] == "works"
    assert statuses["call_ids"] == "not_rendered"  # the template writes no ids
    assert warning_line(verdicts) == ""


def test_value_dependent_attributes_are_read_by_the_learned_pattern() -> None:
    """typed-attr-args writes text="no" for non-strings: the marker fields (probed with strings) could not
    read them; the learned call pattern does, and every feature the template renders works."""
    result = runner.invoke(app, ["analyze", TYPED, "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    verdicts = {v["feature"]: v for v in data["verdicts"]}
    assert data["spec"]["tools"]["format"] == "call_pattern"
    for feature in ("tool_call", "scalars", "nested", "parallel_calls"):
        assert verdicts[feature]["status"] == "works", verdicts[feature]
    assert not any("cannot express" in w for w in data["warnings"])


def test_a_format_beyond_the_spec_is_reported_with_its_first_failing_case(reversed_template: str) -> None:
    result = runner.invoke(app, ["analyze", reversed_template, "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    verdicts = {v["feature"]: v for v in data["verdicts"]}
    assert verdicts["content"]["status"] == "works"
    assert verdicts["tool_call"]["status"] == "cannot_express"
    assert verdicts["tool_call"]["case"] == "one_call"
    assert '"ytic' in verdicts["tool_call"]["difference"]  # the reversed arguments the spec could not read
    assert any("cannot express" in w and "tool_call" in w for w in data["warnings"])


def test_no_check_skips_the_verdicts() -> None:
    result = runner.invoke(app, ["analyze", TYPED, "--json", "--no-check"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["verdicts"] == []


def test_parse_warns_on_stderr_and_keeps_stdout_the_contract(tmp_path: Path, reversed_template: str) -> None:
    out = tmp_path / "out.txt"
    out.write_text('<call>get_weather:}"siraP" :"ytic"{</call>')
    result = runner.invoke(app, ["parse", "--template", reversed_template, str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    assert "warning: the spec cannot express tool_call" in result.stderr
    contract = json.loads(result.stdout)  # stdout stays the contract, whatever the spec made of the text
    assert set(contract) >= {"content", "reasoning_content", "tool_calls", "diagnostics"}
    clean = runner.invoke(app, ["parse", "--template", "chatml-think-tools", str(out), "--json"])
    assert "warning" not in clean.stderr


def test_an_exported_spec_is_judged_by_the_report_it_carries(reversed_template: str) -> None:
    source = load_template(reversed_template)
    report = validate(source)
    verdicts = verdicts_from_report(report)
    failing = [v.feature for v in verdicts if v.status == "cannot_express"]
    assert "tool_call" in failing and "content" not in failing
