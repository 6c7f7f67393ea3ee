"""``workbench recommend`` claims only what it tested (issue 20).

- A parser passes only on the kinds of case it was run on: a content-only case says nothing about a tool
  parser ("not tested"), a case without reasoning nothing about a reasoning parser.
- Whether a template needs a reasoning parser is read off the spec, not off which cases happened to run.
- When the workbench's own spec failed validation, nothing is graded against its cases.
- ``--spec`` grades with a given spec.

The fast tests judge made-up engine answers; the slow one runs every shared template through both engines
(a few parsers each: every built-in parser on one template takes two minutes), in the run it shares with
``test_recommend.py`` (:mod:`tests.engines.recommend_run`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SHARED, shared_templates
from tests.engines.recommend_run import XDIST_GROUP, shared_answers  # noqa: F401  (the group: conftest)
from workbench.commands.recommend import Prepared, _judge, recommend, render
from workbench.engines.venv import engines_missing_reason
from workbench.runtime.spec import FormatSpec, ToolsSpec
from workbench.validate import PASS, CaseResult

CONTENT = {"content": "The capital of France is Paris.", "reasoning_content": "", "tool_calls": []}


def _content_case() -> CaseResult:
    return CaseResult("content_only", ("content",), "", PASS, expected=CONTENT, parsed=CONTENT)


def _prepared(cases: tuple[CaseResult, ...], **kw: Any) -> Prepared:
    spec = FormatSpec(tools=ToolsSpec(format="pythonic"))
    return Prepared("t", spec, cases, Path("tok"), "validated", **kw)


def test_a_content_only_case_says_nothing_about_a_tool_parser() -> None:
    # Every tool parser gives back the content of a content-only case: before, all of them "passed".
    reads_content = {"cases": [{"id": "content_only", "one_shot": CONTENT, "streamed": CONTENT}]}
    parsers = {name: reads_content for name in ("hermes", "pythonic", "llama3_json")}
    item = _prepared((_content_case(),), untested={"tool_calls": "tool calls untested (the template raises)"})
    tools = _judge(parsers, item, "tools", True, "vllm")
    assert tools["pass"] == []
    assert tools["tested"] is False
    assert tools["not_tested"] == "no case with tool calls ran: tool calls untested (the template raises)"
    assert tools["checked_on"] == ["content"]
    reasoning = _judge(parsers, item, "reasoning", True, "vllm")
    assert (reasoning["pass"], reasoning["tested"]) == ([], False)
    answer = {
        "template": "t",
        "cases": 1,
        "tokenizer": "qwen3",
        "engines": {"vllm": {"version": "0", "tokenizer_notes": [], "reasoning": reasoning, "tools": tools}},
    }
    text = render(answer)
    assert "--tool-call-parser: not tested (no case with tool calls ran" in text
    assert "hermes" not in text


def test_a_passing_parser_is_listed_with_the_case_kinds_it_was_checked_on() -> None:
    call = {"content": "", "reasoning_content": "", "tool_calls": [{"id": "", "name": "f", "arguments": {}}]}
    cases = (_content_case(), CaseResult("one_call", ("tool_call",), "", PASS, expected=call, parsed=call))
    good = {
        "cases": [
            {"id": "content_only", "one_shot": CONTENT, "streamed": CONTENT},
            {"id": "one_call", "one_shot": call, "streamed": call},
        ]
    }
    tools = _judge({"hermes": good}, _prepared(cases), "tools", True, "vllm")
    assert tools["pass"] == ["hermes"]
    assert tools["checked_on"] == ["content", "tool_call"]


def test_parsers_are_graded_against_the_rendered_message_not_our_parse() -> None:
    wrong = {**CONTENT, "content": "something else"}
    case = CaseResult("content_only", ("content",), "", PASS, expected=CONTENT, parsed=wrong)
    call = {"content": "", "reasoning_content": "", "tool_calls": [{"id": "", "name": "f", "arguments": {}}]}
    cases = (case, CaseResult("one_call", ("tool_call",), "", PASS, expected=call, parsed=call))
    echoes_ours = {
        "cases": [
            {"id": "content_only", "one_shot": wrong, "streamed": wrong},
            {"id": "one_call", "one_shot": call, "streamed": call},
        ]
    }
    assert _judge({"x": echoes_ours}, _prepared(cases), "tools", True)["pass"] == []


def test_a_spec_that_failed_validation_grades_nothing(tmp_path: Path) -> None:
    from workbench.formats import analyze
    from workbench.template.source import load_template

    broken = analyze(load_template("chatml-think-tools")).spec.with_edit(**{"tools.call_start": "<call>"})
    path = tmp_path / "broken.json"
    path.write_text(broken.to_json(), encoding="utf-8")
    # no engine runs for it: the python given does not even exist
    answer = recommend(["chatml-think-tools"], tmp_path / "no-python", spec=path)[0]
    assert answer["graded"] is False
    assert answer["engines"] == {}
    assert "the workbench's spec is not validated" in answer["not_graded"]
    assert answer["verdict"]["status"] == "failed"
    assert render(answer).startswith(
        "chatml-think-tools: nothing graded: the workbench's spec is not validated"
    )


def test_recommend_cli_takes_a_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from workbench.cli import app

    monkeypatch.setenv("WORKBENCH_ENGINES_PYTHON", str(tmp_path / "missing-python"))
    result = CliRunner().invoke(app, ["recommend", "--spec", str(tmp_path / "absent.json")])
    assert result.exit_code == 1  # the engines are checked first: one line, as without --spec
    assert "make engines" in result.stderr
    usage = CliRunner().invoke(app, ["recommend"])
    assert usage.exit_code == 1
    assert "pass a TEMPLATE, or --spec FILE" in usage.stderr


# ------------------------------------------------------------------------------ every shared template (slow)
@pytest.mark.slow
@pytest.mark.shared
def test_recommend_on_the_shared_templates_claims_only_what_it_ran() -> None:
    reason = engines_missing_reason()
    if reason:
        pytest.skip(reason)
    if not (SHARED / "templates").is_dir():
        pytest.skip("../shared not present")
    from workbench.formats import analyze
    from workbench.template.source import load_template

    answers = shared_answers()
    assert len(answers) == len(shared_templates())
    problems: list[str] = []
    for path in shared_templates():
        answer = answers[path.stem]
        print(render(answer))
        spec = analyze(load_template(str(path))).spec
        if not answer["graded"]:
            assert answer["engines"] == {}, path.stem
            assert answer["verdict"]["status"] in ("failed", "unstable", "nothing_tested")
            continue
        for engine, got in answer["engines"].items():
            if "error" in got:
                problems.append(f"{path.stem} {engine}: {got['error']}")
                continue
            kinds = set(got["tools"]["checked_on"])
            # reasoning is needed when the spec reads it, whatever cases ran
            assert got["reasoning"]["needed"] == (spec.reasoning.mode != "none"), path.stem
            assert got["tools"]["needed"] == (spec.tools.format != "none"), path.stem
            for part, relevant in (("tools", _CALL_KINDS), ("reasoning", _REASONING_KINDS)):
                judged = got[part]
                if judged["pass"]:
                    # a parser listed as passing was run on a case of the kind it is for ...
                    assert judged["tested"] and kinds & relevant, (path.stem, engine, part, judged)
                    assert set(judged["checked_on"]) == kinds
                elif not judged["tested"]:
                    # ... and where no such case ran, none is listed and the answer says why
                    assert not kinds & relevant, (path.stem, engine, part)
                    assert judged["not_tested"].startswith(f"no case with {_WORD[part]} ran")
    assert not problems, problems
    # the templates whose tool calls no case shows (LFM2 and Granite describe them only in the prompt)
    for name in ("LFM2-8B-A1B", "ibm-granite-granite-3.3-2B-Instruct"):
        for got in answers[name]["engines"].values():
            assert got["tools"]["pass"] == [] and got["tools"]["tested"] is False, json.dumps(got["tools"])


_CALL_KINDS = {
    "tool_call",
    "content_with_call",
    "reasoning_with_call",
    "parallel_calls",
    "string_escapes",
    "marker_text",
    "scalars",
    "nested",
    "call_ids",
    "null_values",
    "any_of_schemas",
    "untyped_schemas",
    "nested_schemas",
    "enum_schemas",
}
_REASONING_KINDS = {"reasoning", "reasoning_with_call"}
_WORD = {"tools": "tool calls", "reasoning": "reasoning"}
