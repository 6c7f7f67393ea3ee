"""The analysis checks itself: verdicts per feature, and warnings wherever a spec that fails is used."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.conftest import PROJECT_TEMPLATES
from workbench.cli import app
from workbench.selfcheck import check_spec, verdicts_from_report, warning_line
from workbench.template.source import load_template
from workbench.validate import validate

TYPED = str(PROJECT_TEMPLATES / "new-formats" / "typed-attr-args.jinja")
runner = CliRunner()


def test_a_template_the_spec_describes_gets_only_works_and_not_rendered() -> None:
    source = load_template("chatml-think-tools")
    from workbench.analysis import analyze

    verdicts = check_spec(source, analyze(source).spec)
    statuses = {v.feature: v.status for v in verdicts}
    assert statuses["tool_call"] == "works" and statuses["reasoning"] == "works"
    assert statuses["call_ids"] == "not_rendered"  # the template writes no ids
    assert warning_line(verdicts) == ""


def test_value_dependent_attributes_are_reported_as_beyond_the_spec() -> None:
    """typed-attr-args writes text="no" for non-strings: the analysed spec (probed with strings) cannot read
    them, and the verdict says so with the first failing case, instead of passing silently."""
    result = runner.invoke(app, ["analyze", TYPED, "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    verdicts = {v["feature"]: v for v in data["verdicts"]}
    assert verdicts["tool_call"]["status"] == "works"  # string arguments are what the probes saw
    assert verdicts["scalars"]["status"] == "cannot_express"
    assert verdicts["scalars"]["case"] == "scalar_arguments"
    assert 'text="no"' in verdicts["scalars"]["difference"]
    assert any("cannot express" in w and "scalars" in w for w in data["warnings"])


def test_no_check_skips_the_verdicts() -> None:
    result = runner.invoke(app, ["analyze", TYPED, "--json", "--no-check"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["verdicts"] == []


def test_parse_warns_on_stderr_and_keeps_stdout_the_contract(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text('<calls><call name="get_weather"><arg name="city" text="yes">Paris</arg></call></calls>')
    result = runner.invoke(app, ["parse", "--template", TYPED, str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    assert "warning: the spec cannot express scalars" in result.stderr
    assert json.loads(result.stdout)["tool_calls"][0]["arguments"] == {"city": "Paris"}
    clean = runner.invoke(app, ["parse", "--template", "chatml-think-tools", str(out), "--json"])
    assert "warning" not in clean.stderr


def test_an_exported_spec_is_judged_by_the_report_it_carries() -> None:
    source = load_template(TYPED)
    report = validate(source)
    verdicts = verdicts_from_report(report)
    assert [v.feature for v in verdicts if v.status == "cannot_express"] == ["scalars", "nested"]
