"""Validation's continuation cases (issue 10 item 5): a partial message continued with
``continue_final_message``, the rest parsed from the stage the prompt leaves, joined back into the message.

The expectations are written here from the templates' documented formats (the partial texts end mid-word,
the remainders are what the finished message adds), never taken from the code under test.
"""

from __future__ import annotations

import functools
import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from tests.conftest import PROJECT_TEMPLATES, shared_path
from workbench.cli import app
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource, load_template
from workbench.validate import CaseResult, ValidationReport, validate, validate_recorded
from workbench.validate.continuation import CASES, recheck

OPENED_ANSWER = str(PROJECT_TEMPLATES / "new-formats" / "opened-answer.jinja")
runner = CliRunner()


@functools.cache
def analysed(path: str) -> tuple[TemplateSource, FormatSpec]:
    from workbench.formats import analyze

    source = load_template(path)
    return source, analyze(source).spec


@functools.cache
def report_for(path: str) -> ValidationReport:
    source, spec = analysed(path)
    return validate(source, spec)


def by_id(report: ValidationReport) -> dict[str, CaseResult]:
    return {c.id: c for c in report.continuation}


# ------------------------------------------------------------------------------ opened-answer (project)
def test_opened_answer_continuations_pass_from_the_stage_each_prompt_leaves() -> None:
    report = report_for(OPENED_ANSWER)
    cases = {c.id: c for c in report.continuation}
    assert set(cases) == {c.id for c in CASES}
    answer, reasoning, after = (
        cases["continue_answer"],
        cases["continue_reasoning"],
        cases["continue_answer_after_reasoning"],
    )
    # "The capital of Fra" is continued inside the open <answer> wrapper; the template closes it after.
    assert (answer.status, answer.start_stage) == ("pass", "answer")
    assert answer.output == "nce is Paris.\n</answer>"
    assert answer.prompt.endswith("<answer>\nThe capital of Fra")
    # Partial reasoning is continued inside <think>; the answer follows in its own wrapper.
    assert (reasoning.status, reasoning.start_stage) == ("pass", "reasoning")
    assert reasoning.output.startswith("tion.\nI should answer with the number.\n</think>\n<answer>\n")
    assert (after.status, after.start_stage) == ("pass", "answer")
    assert after.parsed is not None
    assert after.parsed["content"].strip() == "It is 42, the answer."
    assert report.features()["continuation"]["status"] == "pass"
    assert report.validated


def test_a_parser_started_in_the_wrong_stage_fails_the_case() -> None:
    """The check can fail: read as the spec's default says (inside <think>, the template's generation prompt
    opens it), the continued answer lands in the reasoning and the joined message is not the finished one."""
    _, spec = analysed(OPENED_ANSWER)
    case = by_id(report_for(OPENED_ANSWER))["continue_answer"]
    wrong = recheck(spec, replace(case, start_stage="reasoning"))
    assert wrong.status == "fail"
    assert "content: expected 'The capital of France is Paris.'" in wrong.reason
    # A failing continuation case fails the report, though every round-trip case passes.
    good = report_for(OPENED_ANSWER)
    bad = replace(good, continuation=(wrong, *good.continuation[1:]))
    assert all(c.status == "pass" for c in bad.applicable)
    assert not bad.validated
    assert "the spec cannot express: continuation" in bad.summary()


def test_recorded_continuation_cases_are_rechecked_without_the_template() -> None:
    _, spec = analysed(OPENED_ANSWER)
    stored = ValidationReport.from_dict(json.loads(json.dumps(report_for(OPENED_ANSWER).to_dict())))
    assert [c.start_stage for c in stored.continuation] == ["answer", "reasoning", "answer"]
    again = validate_recorded(spec, stored)
    assert [c.status for c in again.continuation] == ["pass", "pass", "pass"]
    # A spec whose answer wrapper is edited away reads "</answer>" as text: the re-check catches it.
    broken = spec.with_edit(**{"content.end": ""})
    failed = validate_recorded(broken, stored)
    assert failed.features()["continuation"]["status"] == "fail"
    assert not failed.validated


def test_an_old_report_without_continuation_still_loads() -> None:
    data = report_for(OPENED_ANSWER).to_dict()
    data.pop("continuation")
    old = ValidationReport.from_dict(data)
    assert old.continuation == ()
    assert "continuation" not in old.features()
    assert old.validated


def test_template_without_reasoning_supports_only_the_answer_continuation() -> None:
    report = report_for(str(PROJECT_TEMPLATES / "llama3-json.jinja"))
    cases = {c.id: c for c in report.continuation}
    assert cases["continue_answer"].status == "pass"
    assert cases["continue_reasoning"].status == "unsupported"
    assert "reasoning_content" in cases["continue_reasoning"].reason
    assert cases["continue_answer_after_reasoning"].status == "unsupported"
    assert report.features()["continuation"]["status"] == "pass"


def test_switch_kwargs_render_the_continuation_too() -> None:
    """With reasoning_effort=none the effort-switches template renders no reasoning at all: the reasoning
    continuations are unsupported, the answer one still passes."""
    source = load_template(str(PROJECT_TEMPLATES / "new-formats" / "effort-switches.jinja"))
    report = validate(source, template_kwargs={"reasoning_effort": "none"})
    statuses = {c.id: c.status for c in report.continuation}
    assert statuses == {
        "continue_answer": "pass",
        "continue_reasoning": "unsupported",
        "continue_answer_after_reasoning": "unsupported",
    }


def test_validate_cli_reports_continuation_in_text_and_json() -> None:
    result = runner.invoke(app, ["validate", OPENED_ANSWER, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["features"]["continuation"]["status"] == "pass"
    assert [c["id"] for c in data["continuation"]] == [c.id for c in CASES]
    assert data["continuation"][0]["start_stage"] == "answer"
    assert data["continuation"][0]["continued"]["content"] == "The capital of Fra"
    assert all(c["id"] not in {x.id for x in CASES} for c in data["cases"])  # kept apart from round trips
    text = runner.invoke(app, ["validate", OPENED_ANSWER])
    assert text.exit_code == 0, text.output
    assert "continue_reasoning from reasoning" in text.stdout
    assert any(line.split() == ["pass", "continuation"] for line in text.stdout.splitlines())


# ------------------------------------------------------------------------------ Harmony (a parser fix)
def test_harmony_parser_starts_inside_a_continued_analysis_message() -> None:
    """gpt-oss continues partial reasoning inside ``<|channel|>analysis<|message|>``: the body comes first."""
    _, spec = analysed(str(PROJECT_TEMPLATES / "harmony-channels.jinja"))
    output = "tion, then the answer.<|end|><|start|>assistant<|channel|>final<|message|>It is 42."
    options = ParseOptions(start_stage="reasoning")
    one = parse(spec, output, None, options).message
    assert (one.reasoning_content, one.content) == ("tion, then the answer.", "It is 42.")
    stream = StreamParser(spec, None, options=options)
    for ch in output:
        stream.feed(ch)
    assert stream.finish().message == one
    assert (
        by_id(report_for(str(PROJECT_TEMPLATES / "harmony-channels.jinja")))["continue_reasoning"].status
        == "pass"
    )


# ------------------------------------------------------------------------------ Qwen3 (../shared)
def test_qwen3_continuations_pass() -> None:
    path = str(shared_path("templates", "Qwen-Qwen3-0.6B.jinja"))
    cases = {c.id: c for c in report_for(path).continuation}
    # Qwen3's generation prompt never opens <think> (forced_closed): only the prompt says where it is.
    reasoning = cases["continue_reasoning"]
    assert (reasoning.status, reasoning.start_stage) == ("pass", "reasoning")
    assert cases["continue_reasoning"].output.startswith("tion.\nI should answer with the number.\n</think>")
    # A continued answer comes after the (closed) reasoning block: a reasoning tag there would be text.
    assert (cases["continue_answer"].status, cases["continue_answer"].start_stage) == ("pass", "content")
    assert cases["continue_answer_after_reasoning"].status == "pass"


@pytest.mark.parametrize("name", ["Qwen-Qwen3-0.6B.jinja", "openai-gpt-oss-120b.jinja"])
def test_shared_templates_stay_validated(name: str) -> None:
    report = report_for(str(shared_path("templates", name)))
    assert report.validated, report.summary()
    assert report.features()["continuation"]["status"] == "pass"
