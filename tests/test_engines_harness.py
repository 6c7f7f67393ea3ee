"""The harness's typed requests and answers, and what the engines venv may import of the workbench.

The harness runs in the engines venv (``python -m workbench.engines.harness.<name>``); the workbench builds
its requests and checks its answers with the same dataclasses (:mod:`workbench.engines.harness.schema`).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from workbench.engines import engine, names, parse_profiles
from workbench.engines.harness.schema import (
    Case,
    PluginAnswer,
    RecommendJob,
    RecommendRequest,
    ResponseAnswer,
    ResponseJob,
    ResponseRequest,
    SchemaError,
    from_json,
    to_json,
)
from workbench.engines.policies import parse_options

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"


def test_a_request_round_trips_through_its_json_form() -> None:
    case = Case("one_call", "<tool_call>{}</tool_call>", "<|im_start|>assistant\n", [{"type": "function"}])
    request = ResponseRequest(["vllm"], [ResponseJob("t", {"version": 1}, "/tok", [case])])
    data = to_json(request)
    assert "consumers" not in data["jobs"][0] and "calls" not in data["jobs"][0]["cases"][0]  # None: left out
    assert from_json(ResponseRequest, data) == request
    job = RecommendJob("t", "/tok", [case], ["<|x|>"], harmony=True)
    assert from_json(RecommendRequest, to_json(RecommendRequest("sglang", [job]))).jobs[0].harmony is True


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"versions": {}, "jobs": [{"key": "t"}]}, "ResponseAnswer.jobs[0]: missing field 'consumers'"),
        ({"versions": {"vllm": 1}, "jobs": []}, "ResponseAnswer.versions.vllm: expected str, got int"),
        ({"versions": {}, "jobs": [], "extra": 1}, "ResponseAnswer: unknown field 'extra'"),
        (
            {"versions": {}, "jobs": [{"key": "t", "consumers": {"vllm": {"accepted": "yes"}}}]},
            "ResponseAnswer.jobs[0].consumers.vllm.accepted: expected bool, got str",
        ),
    ],
)
def test_an_answer_out_of_shape_is_named_by_its_field(data: dict, message: str) -> None:
    with pytest.raises(SchemaError) as caught:
        from_json(ResponseAnswer, data)
    assert str(caught.value) == message


def test_a_plugin_answer_keeps_each_runner_result() -> None:
    runner = {"vllm-file": {"accepted": True}}
    data = {"versions": {"vllm": "0.32.0"}, "jobs": [{"key": "t", "engines": runner}]}
    answer = from_json(PluginAnswer, data)
    assert answer.jobs[0].engines["vllm-file"].accepted and answer.jobs[0].engines["vllm-file"].cases == []


def test_every_engine_has_a_home_and_the_parse_profiles_are_the_documented_ones() -> None:
    assert {engine(n).name for n in names()} == set(names())
    assert parse_profiles() == ("workbench", "llama.cpp", "sglang", "vllm")
    assert parse_options("vllm").text_after_calls == "drop"
    assert parse_options("vllm", streaming=True).text_after_calls == "content"


ENGINES_VENV_MODULES = [
    PACKAGE / "__init__.py",
    PACKAGE / "engines" / "__init__.py",
    PACKAGE / "engines" / "base.py",
    *sorted((PACKAGE / "engines").glob("*/__init__.py")),
    # launch.py is the workbench side: it starts the engines interpreter, which never imports it
    *sorted(p for p in (PACKAGE / "engines" / "harness").glob("*.py") if p.name != "launch.py"),
]


@pytest.mark.parametrize("path", ENGINES_VENV_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_what_the_engines_venv_imports_of_the_workbench_is_standard_library_only(path: Path) -> None:
    """Everything the harness imports of the workbench imports nothing but the standard library, the engines'
    own packages (inside functions) and these same modules."""
    allowed_workbench = {"workbench", "workbench.engines", "workbench.engines.base"}
    outside = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [node.module]
        for target in targets:
            top = target.split(".")[0]
            if top == "workbench":
                if target not in allowed_workbench and not target.startswith("workbench.engines.harness"):
                    outside.append(target)
            elif top not in sys.stdlib_module_names and top != "__future__" and path.parent.name != "harness":
                outside.append(target)
    assert outside == []
