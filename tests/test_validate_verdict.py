"""No false green (issue 20): validation tests what the template renders, and says what it could not test.

Each template here is written for the test: a tool macro that raises on every tool set, one that raises on a
parameter without ``type``, a template that writes ``None`` for null, one whose output changes between
renders, one whose prompt opens reasoning it never renders.  The verdict must be honest in the report API,
the CLI (text and ``--json``) and the export's provenance.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.export import ExportError, export
from workbench.runtime.spec import FormatSpec, ReasoningSpec, ToolsSpec
from workbench.template.source import TemplateSource
from workbench.validate import (
    FAIL,
    PASS,
    RAISED,
    UNSUPPORTED,
    CaseResult,
    UntestedFeature,
    ValidationReport,
    check_output,
    validate,
    validate_recorded,
)
from workbench.validate.verdict import compute_verdict

runner = CliRunner()

# Calls written as <call>{"name": ..., "arguments": ...}</call> after the content; turns end with <end>.
TURNS = (
    "{% for m in messages %}[{{ m.role }}]{{ m.content or '' }}"
    "{% for c in m.tool_calls or [] %}"
    '<call>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</call>'
    "{% endfor %}<end>{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}"
)
CALLS_SPEC = FormatSpec(
    tools=ToolsSpec(format="json_native", call_start="<call>", call_end="</call>"), end_markers=("<end>",)
)

# The tool-declaration macro raises whatever tools it is given; the calls themselves render fine.
RAISES_ON_EVERY_TOOL_SET = (
    "{% if tools %}{% for t in tools %}"
    "{{ raise_exception('this template cannot describe the tool ' ~ t.function.name) }}"
    "{% endfor %}{% endif %}" + TURNS
)

# The tool-declaration macro reads each parameter's `type`, as many real templates do (`param.type | upper`).
READS_TYPE = (
    "{% if tools %}[tools]{% for t in tools %}{{ t.function.name }}("
    "{% for name, p in t.function.parameters.properties | items %}"
    "{% if p.type is not defined %}{{ raise_exception('parameter ' ~ name ~ ' has no type') }}{% endif %}"
    "{{ name }}: {{ p.type }}, {% endfor %}){% endfor %}<end>{% endif %}" + TURNS
)


def inline(text: str, name: str = "inline") -> TemplateSource:
    return TemplateSource(text=text, name=name, origin="test")


def write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / f"{name}.jinja"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------ every tool case skipped
def test_a_tool_macro_that_raises_on_every_tool_set_leaves_tool_calls_untested() -> None:
    report = validate(inline(RAISES_ON_EVERY_TOOL_SET), CALLS_SPEC)
    calls = [c for c in report.cases if c.expected["tool_calls"]]
    assert calls and all(c.status == UNSUPPORTED and c.skip == RAISED for c in calls)
    assert next(c for c in report.cases if c.id == "content_only").status == PASS
    # every case that ran passed, and yet:
    assert not report.validated
    verdict = report.verdict
    assert verdict.status == "untested"
    assert [u.feature for u in verdict.untested] == ["tool_calls"]
    assert "cannot describe the tool" in verdict.untested[0].reason
    assert verdict.headline == "NOT validated: tool calls untested"
    assert "tool calls untested" in report.summary()
    assert report.summary().startswith("NOT validated")


def test_untested_tool_calls_are_found_from_the_render_when_the_spec_reads_none() -> None:
    # The analysis cannot see calls through a tool macro that raises, so the spec may read none: the
    # calls the template renders without tools are the evidence.
    report = validate(inline(RAISES_ON_EVERY_TOOL_SET), FormatSpec(end_markers=("<end>",)))
    assert [u.feature for u in report.untested] == ["tool_calls"]
    assert not report.validated


def test_a_template_that_really_renders_no_calls_is_not_untested() -> None:
    no_calls = inline(
        "{% for m in messages %}[{{ m.role }}]{{ m.content or '' }}<end>{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    )
    report = validate(no_calls, FormatSpec(end_markers=("<end>",)))
    assert report.untested == ()
    assert report.validated


def test_the_cli_never_says_validated_when_tool_calls_went_untested(tmp_path: Path) -> None:
    path = write(tmp_path, RAISES_ON_EVERY_TOOL_SET, "raises-on-tools")
    spec = tmp_path / "spec.json"
    spec.write_text(CALLS_SPEC.to_json(), encoding="utf-8")

    text = runner.invoke(app, ["validate", str(path), "--spec", str(spec)])
    assert text.exit_code == 1
    assert "tool calls" in text.stdout and "untested" in text.stdout
    assert "NOT validated" in text.stderr and "tool calls untested" in text.stderr

    as_json = runner.invoke(app, ["validate", str(path), "--spec", str(spec), "--json"])
    assert as_json.exit_code == 1
    data = json.loads(as_json.stdout)
    assert data["validated"] is False
    assert data["verdict"]["status"] == "untested"
    assert data["verdict"]["validated"] is False
    assert [u["feature"] for u in data["verdict"]["untested"]] == ["tool_calls"]
    assert [u["label"] for u in data["untested"]] == ["tool calls"]


def test_export_refuses_and_forced_provenance_records_the_untested_features() -> None:
    source = inline(RAISES_ON_EVERY_TOOL_SET)
    with pytest.raises(ExportError, match="tool calls untested"):
        export("spec", template=source, spec=CALLS_SPEC)
    result = export("spec", template=source, spec=CALLS_SPEC, force=True)
    assert any("tool calls untested" in w for w in result.warnings)
    recorded = json.loads(result.text)["provenance"]["validation"]
    assert recorded["validated"] is False
    assert recorded["verdict"]["status"] == "untested"
    assert [u["feature"] for u in recorded["untested"]] == ["tool_calls"]
    # ... and the verdict survives the exported spec: re-checked without the template, still untested.
    again = validate_recorded(FormatSpec.from_json(result.text), ValidationReport.from_dict(recorded))
    assert not again.validated
    assert [u.feature for u in again.untested] == ["tool_calls"]


def test_the_plugin_and_response_template_provenance_carry_the_verdict() -> None:
    from workbench.engines.plugins import provenance

    report = validate(inline(RAISES_ON_EVERY_TOOL_SET), CALLS_SPEC)
    exported = export("spec", template=inline(RAISES_ON_EVERY_TOOL_SET), spec=CALLS_SPEC, force=True).spec
    prov = provenance(exported, "vllm", "")
    assert prov["validation"]["validated"] is False
    assert prov["validation"]["untested"] == [u.to_dict() for u in report.untested]
    result = export(
        "response-template",
        template=inline(RAISES_ON_EVERY_TOOL_SET),
        spec=CALLS_SPEC,
        force=True,
        profile="transformers",
    )
    written = json.loads(result.text)["response_template_provenance"]
    assert written["validation"]["status"] == "untested"
    assert [u["feature"] for u in written["validation"]["untested"]] == ["tool_calls"]


# ------------------------------------------------------------------------------------ harder tool sets
def test_a_template_that_raises_on_an_untyped_parameter_is_named_and_the_plain_set_decides() -> None:
    report = validate(inline(READS_TYPE), CALLS_SPEC)
    by_id = {c.id: c for c in report.cases}
    untyped = by_id["untyped_argument"]
    assert untyped.status == UNSUPPORTED
    assert untyped.reason.startswith("the template raises on a parameter without `type`: ")
    assert "parameter payload has no type" in untyped.reason
    assert by_id["any_of_arguments"].reason.startswith(
        "the template raises on a parameter whose schema is an `anyOf`"
    )
    assert by_id["enum_arguments"].reason.startswith(
        "the template raises on an `enum` parameter without `type`"
    )
    # the plain typed set ran every call case, so the verdict is the plain set's
    assert all(
        by_id[i].status == PASS
        for i in ("one_call", "parallel_calls", "scalar_arguments", "nested_arguments")
    )
    assert by_id["null_argument"].status == PASS and by_id["nested_schema_arguments"].status == PASS
    assert report.untested == ()
    assert report.validated
    assert report.features()["untyped_schemas"]["status"] == UNSUPPORTED


# ------------------------------------------------------------------------------------ amber: limited
def test_a_template_that_raises_on_harder_tool_sets_is_amber_never_green() -> None:
    report = validate(inline(READS_TYPE), CALLS_SPEC)
    verdict = report.verdict
    # the parser configuration holds for what the template renders (validated: exports go ahead) ...
    assert verdict.status == "limited" and verdict.validated and report.validated
    # ... but it is not plain green, and it names every harder set the template raises on
    assert not verdict.green and not report.green
    assert verdict.limits == (
        "a parameter whose schema is an `anyOf`",
        "a parameter without `type`",
        "an `enum` parameter without `type`",
    )
    assert verdict.headline == (
        f"validated: {verdict.passed}/{verdict.applicable} cases with the plain tools; "
        "the template raises on a parameter whose schema is an `anyOf`, a parameter without `type` "
        "and an `enum` parameter without `type`"
    )
    assert "with the plain tools; the template raises on a parameter whose schema" in report.summary()
    again = ValidationReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.verdict == verdict


def test_a_template_that_takes_every_tool_set_is_plain_green() -> None:
    report = validate(inline(TURNS), CALLS_SPEC)
    assert report.verdict.status == "validated" and report.green and report.verdict.limits == ()


def test_limits_need_the_plain_tool_set_to_have_run() -> None:
    # every tool set raises: tool calls are untested (red), not limited (amber)
    report = validate(inline(RAISES_ON_EVERY_TOOL_SET), CALLS_SPEC)
    assert report.verdict.status == "untested" and report.verdict.limits == ()


def test_a_failing_case_outranks_a_limit() -> None:
    limited = compute_verdict(
        passed=3, applicable=3, all_pass=True, failed=(), untested=(), unstable="", limits=("x",)
    )
    assert (limited.status, limited.validated, limited.green) == ("limited", True, False)
    failing = compute_verdict(
        passed=2, applicable=3, all_pass=False, failed=("scalars",), untested=(), unstable="", limits=("x",)
    )
    assert (failing.status, failing.validated, failing.green) == ("failed", False, False)
    untested = (UntestedFeature("reasoning", "raised"),)
    held = compute_verdict(
        passed=3, applicable=3, all_pass=True, failed=(), untested=untested, unstable="", limits=("x",)
    )
    assert held.status == "untested"


def test_the_cli_says_amber_with_exit_code_0_and_json_carries_the_status(tmp_path: Path) -> None:
    path = write(tmp_path, READS_TYPE, "reads-type")
    spec = tmp_path / "spec.json"
    spec.write_text(CALLS_SPEC.to_json(), encoding="utf-8")

    text = runner.invoke(app, ["validate", str(path), "--spec", str(spec)])
    assert text.exit_code == 0  # not a parser failure
    last = text.stdout.strip().splitlines()[-1]
    assert last.startswith("! validated: ") and "with the plain tools; the template raises on" in last
    assert "limited     the template raises on a parameter without `type`" in text.stdout

    as_json = runner.invoke(app, ["validate", str(path), "--spec", str(spec), "--json"])
    assert as_json.exit_code == 0
    data = json.loads(as_json.stdout)
    assert data["validated"] is True
    assert (data["verdict"]["status"], data["verdict"]["green"]) == ("limited", False)
    assert "a parameter without `type`" in data["verdict"]["limits"]


def test_export_goes_ahead_and_every_provenance_records_the_limit() -> None:
    from workbench.engines.plugins import provenance

    source = inline(READS_TYPE)
    result = export("spec", template=source, spec=CALLS_SPEC)  # no --force needed
    assert not any("--force" in w for w in result.warnings)
    recorded = json.loads(result.text)["provenance"]["validation"]
    assert recorded["validated"] is True
    assert recorded["verdict"]["status"] == "limited" and recorded["verdict"]["green"] is False
    assert "a parameter without `type`" in recorded["verdict"]["limits"]
    assert "the template raises on" in recorded["summary"]
    # the plug-ins' provenance and the response template's carry the same verdict
    prov = provenance(result.spec, "vllm", "")
    assert prov["validation"]["status"] == "limited"
    assert "the template raises on" in prov["validation"]["headline"]
    written = export("response-template", template=source, spec=CALLS_SPEC, profile="transformers")
    verdict = json.loads(written.text)["response_template_provenance"]["validation"]
    assert verdict["status"] == "limited" and "a parameter without `type`" in verdict["limits"]
    # ... and it survives the exported spec, re-checked without the template
    again = validate_recorded(FormatSpec.from_json(result.text), ValidationReport.from_dict(recorded))
    assert again.verdict.status == "limited"


# ------------------------------------------------------------------------------------ unstable renders
def test_a_template_whose_output_changes_between_renders_is_named_not_validated() -> None:
    dice = inline("{% set n = range(90000) | random %}[system]seed {{ n }}<end>" + TURNS)
    report = validate(dice, CALLS_SPEC)
    assert report.unstable
    assert "the first time" in report.unstable
    assert not report.validated
    assert report.verdict.status in ("unstable", "failed")
    assert "renders differently each time" in report.summary()


def test_a_stable_template_is_not_called_unstable() -> None:
    report = validate(inline(TURNS), CALLS_SPEC)
    assert report.unstable == ""
    assert report.validated, report.summary()


# ------------------------------------------------------------------------------- reasoning
def test_reasoning_the_template_never_renders_is_unsupported_not_untested() -> None:
    # DeepSeek-R1 style: the generation prompt opens <think>, history turns drop the reasoning: the template
    # does not render reasoning, which the summary says; nothing raised, so nothing is untested.
    opens = inline(
        "{% for m in messages %}[{{ m.role }}]{{ m.content or '' }}<end>{% endfor %}"
        "{% if add_generation_prompt %}[assistant]<think>\n{% endif %}"
    )
    spec = FormatSpec(
        reasoning=ReasoningSpec(mode="forced_open", start="<think>", end="</think>"), end_markers=("<end>",)
    )
    report = validate(opens, spec)
    assert report.untested == ()
    assert report.features()["reasoning"]["status"] == UNSUPPORTED
    assert "unsupported by the template: reasoning" in report.summary()


def test_reasoning_the_template_raises_on_is_untested() -> None:
    refuses = inline(
        "{% for m in messages %}"
        "{% if m.reasoning_content %}{{ raise_exception('no reasoning here') }}{% endif %}"
        "[{{ m.role }}]{{ m.content or '' }}<end>{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    )
    spec = FormatSpec(
        reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"), end_markers=("<end>",)
    )
    report = validate(refuses, spec)
    assert [u.feature for u in report.untested] == ["reasoning"]
    assert "no reasoning here" in report.untested[0].reason
    assert report.verdict.headline == "NOT validated: reasoning untested"


# ------------------------------------------------------------------------------------ streaming as a client
def test_text_sent_while_streaming_and_later_changed_fails_the_case() -> None:
    expected = {"content": "Hello", "reasoning_content": "", "tool_calls": []}

    def parse(spec, text, tools, opened, cuts):
        return dict(expected)

    def stream(spec, pieces, tools):
        return dict(expected), ["after feed #3: content changed from 'Helo' to 'Hello'"]

    status, reason, _, mismatches = check_output(
        FormatSpec(),
        "c",
        "Hello",
        expected,
        thinking_opened=False,
        compare_ids=False,
        parse=parse,
        stream=stream,
    )
    assert status == FAIL
    assert reason == (
        "streamed one character at a time, the client is sent text that is later changed: "
        "after feed #3: content changed from 'Helo' to 'Hello'"
    )
    assert mismatches == ("after feed #3: content changed from 'Helo' to 'Hello'",)


def test_streamed_runs_are_the_conformance_runners() -> None:
    from workbench.streaming.chunks import chunk_runs
    from workbench.validate import feeding_runs

    runs = feeding_runs("some output text", "one_call")
    assert runs == chunk_runs("some output text", "one_call")
    assert [name for name, _ in runs] == ["oneshot", "per_char", "random-1", "random-2", "random-3"]
    assert all("".join(p) == "some output text" for _, p in runs if p is not None)


# ------------------------------------------------------------------------------------ the verdict API
def test_verdict_status_order_and_headline() -> None:
    untested = (UntestedFeature("tool_calls", "the template raises"),)
    ok = compute_verdict(passed=3, applicable=3, all_pass=True, failed=(), untested=(), unstable="")
    assert (ok.status, ok.validated, ok.headline) == ("validated", True, "validated: 3/3 cases")
    held = compute_verdict(passed=3, applicable=3, all_pass=True, failed=(), untested=untested, unstable="")
    assert (held.status, held.validated) == ("untested", False)
    both = compute_verdict(
        passed=2, applicable=3, all_pass=False, failed=("scalars",), untested=untested, unstable="x"
    )
    assert both.status == "failed"
    assert both.headline == (
        "NOT validated: scalars fails (2/3 cases); the template renders differently each time; "
        "tool calls untested"
    )
    empty = compute_verdict(passed=0, applicable=0, all_pass=True, failed=(), untested=(), unstable="")
    assert (empty.status, empty.validated) == ("nothing_tested", False)


def test_the_verdict_survives_the_reports_json_form() -> None:
    case = CaseResult("content_only", ("content",), "", PASS, expected={"content": "x"})
    skipped = CaseResult("one_call", ("tool_call",), "", UNSUPPORTED, reason="raised", skip=RAISED)
    report = ValidationReport(
        "t", "abc", (case, skipped), untested=(UntestedFeature("tool_calls", "raised"),), unstable=""
    )
    again = ValidationReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.to_dict() == report.to_dict()
    assert again.verdict == report.verdict
    assert again.cases[1].skip == RAISED
