"""``workbench recommend`` agrees with the engines' documented parser for five template families.

All five templates go to the recommend harness in one subprocess per engine (importing vLLM takes 15-30 s),
cached for the module.  The expected names are the engines' own registry keys for these families (vLLM
``ToolParserManager``, SGLang ``FunctionCallParser.ToolCallParserEnum``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from tests.conftest import shared_path
from workbench.commands.recommend import recommend, render
from workbench.export.engines import engines_missing_reason, engines_python

pytestmark = [pytest.mark.slow, pytest.mark.shared]

# template -> (vLLM --tool-call-parser, SGLang --tool-call-parser) documented for the family
FAMILIES = {
    "Qwen-Qwen3-0.6B": ("hermes", "qwen"),
    "deepseek-ai-DeepSeek-V3.1": ("deepseek_v31", "deepseekv31"),
    "openai-gpt-oss-120b": ("openai", "gpt-oss"),
    "Kimi-K2-Instruct": ("kimi_k2", "kimi_k2"),
    "meta-llama-Llama-3.1-8B-Instruct": ("llama3_json", "llama3"),
}


@cache
def answers() -> dict[str, dict[str, Any]]:
    python = engines_python()
    assert python is not None
    paths = [str(shared_path("templates", f"{name}.jinja")) for name in FAMILIES]
    return {a["template"]: a for a in recommend(paths, python)}


def needs_engines() -> None:
    reason = engines_missing_reason()
    if reason:
        pytest.skip(reason)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_the_documented_tool_parser_is_recommended(name: str) -> None:
    needs_engines()
    answer = answers()[name]
    print("\n" + render(answer))
    for engine, expected in zip(("vllm", "sglang"), FAMILIES[name], strict=True):
        tools = answer["engines"][engine]["tools"]
        assert tools["tried"] > 10  # every built-in parser ran, not only the expected one
        assert expected in tools["pass"], (engine, tools["pass"], tools["near"])
        # a parser for another family must not pass everything: the cases tell formats apart
        assert len(tools["pass"]) < tools["tried"] // 2


def test_a_reasoning_template_gets_a_reasoning_parser_that_splits_it() -> None:
    needs_engines()
    qwen = answers()["Qwen-Qwen3-0.6B"]["engines"]
    assert "qwen3" in qwen["vllm"]["reasoning"]["pass"]
    assert "qwen3" in qwen["sglang"]["reasoning"]["pass"]


def test_without_engines_recommend_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from typer.testing import CliRunner

    from workbench.cli import app

    monkeypatch.setenv("WORKBENCH_ENGINES_PYTHON", str(tmp_path / "missing-python"))
    result = CliRunner().invoke(app, ["recommend", "chatml-think-tools"])
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0
    assert "make engines" in result.stderr
