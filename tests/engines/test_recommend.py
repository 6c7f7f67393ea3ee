"""``workbench recommend`` agrees with the engines' documented parser for five template families.

All five templates go to the recommend harness in one subprocess per engine (importing vLLM takes 15-30 s),
cached for the module.  To keep the run short it is limited to the documented parsers and a few
controls for other families (every parser on five templates took 27 minutes on the shared machine).
The expected names are the engines' own registry keys for these families (vLLM ``ToolParserManager``,
SGLang ``FunctionCallParser.ToolCallParserEnum``).
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


# Parsers for other families: they must not pass (the cases tell formats apart).
CONTROLS = ("pythonic", "mistral", "qwen3_coder")


@cache
def answers() -> dict[str, dict[str, Any]]:
    python = engines_python()
    assert python is not None
    paths = [str(shared_path("templates", f"{name}.jinja")) for name in FAMILIES]
    only = sorted({n for pair in FAMILIES.values() for n in pair} | set(CONTROLS) | {"qwen3"})
    return {a["template"]: a for a in recommend(paths, python, only=only, time_limit=30)}


def needs_engines() -> None:
    reason = engines_missing_reason()
    if reason:
        pytest.skip(reason)


# Measured 2026-11-25 (vLLM 0.32.0, SGLang 0.5.23): where the documented parser does NOT read every round
# trip through this harness.  Strict: when one starts passing, the test says so.  Not yet explained which
# side is wrong (the engine's parser, or how the harness feeds it); the first failures are in the report.
MEASURED_MISSES = {
    ("deepseek-ai-DeepSeek-V3.1", "vllm"): "deepseek_v31 returns no call when streamed",
    ("deepseek-ai-DeepSeek-V3.1", "sglang"): "deepseekv31 returns no call when streamed",
    ("openai-gpt-oss-120b", "vllm"): "openai raises: GptOssToolParser is a stub, use HarmonyParser",
    ("openai-gpt-oss-120b", "sglang"): "gpt-oss misses calls",
    ("Kimi-K2-Instruct", "sglang"): "kimi_k2 misses calls",
    ("meta-llama-Llama-3.1-8B-Instruct", "vllm"): "llama3_json misses calls",
}
PAIRS = [
    pytest.param(
        name,
        engine,
        marks=[pytest.mark.xfail(strict=True, reason=MEASURED_MISSES[(name, engine)])]
        if (name, engine) in MEASURED_MISSES
        else [],
        id=f"{name}-{engine}",
    )
    for name in FAMILIES
    for engine in ("vllm", "sglang")
]


@pytest.mark.parametrize(("name", "engine"), PAIRS)
def test_the_documented_tool_parser_is_recommended(name: str, engine: str) -> None:
    needs_engines()
    answer = answers()[name]
    print("\n" + render(answer))
    expected = FAMILIES[name][0 if engine == "vllm" else 1]
    tools = answer["engines"][engine]["tools"]
    assert expected in tools["pass"], (engine, tools["pass"], tools["near"])
    assert not set(tools["pass"]) & set(CONTROLS)


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
