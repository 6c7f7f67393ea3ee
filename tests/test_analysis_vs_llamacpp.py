"""Agreement with llama.cpp's auto-parser, and a test on the real template for every deliberate disagreement.

The rate counts only (template, field) pairs where llama.cpp is right: its README's known mistakes and the
disagreements we argue (workbench/analysis/llamacpp.py, docs/analysis-vs-llamacpp.md) leave the
denominator; templates it sends to a dedicated handler are compared with what that handler parses.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO, SHARED
from tests.test_analysis_helpers import shared, shared_names, template_text
from workbench.analysis.llamacpp import CORRECTIONS, compare, load_summary, our_values
from workbench.analysis.probes import USER_TEXT
from workbench.template.render import render

pytestmark = pytest.mark.shared
SUMMARY = SHARED / "conformance" / "llamacpp-analysis" / "summary.json"
DOC = REPO / "docs" / "analysis-vs-llamacpp.md"


def _ours() -> dict[str, dict[str, str]]:
    if not SUMMARY.is_file():
        pytest.skip("../shared not present")
    out = {}
    for name in shared_names():
        out[name] = our_values(shared(name).spec)
    return out


def test_agreement_with_llamacpp_is_at_least_90_percent() -> None:
    ours = _ours()  # skips without ../shared
    comparison = compare(load_summary(SUMMARY), ours)
    assert len({r.template for r in comparison.rows}) == 35
    disagreements = [
        f"{r.template}.{r.field}: llama {r.reference}, ours {r.ours}"
        for r in comparison.rows
        if r.status == "disagree"
    ]
    assert comparison.agreement >= 90.0, disagreements
    assert comparison.template_agreement >= 90.0, disagreements


def test_every_correction_is_what_we_produce() -> None:
    """The table of llama.cpp corrections states our value; it must be what the analyzer says."""
    ours = _ours()
    for c in CORRECTIONS:
        assert ours[c.template][c.field] == c.value, c


def test_every_difference_is_documented() -> None:
    ours = _ours()  # skips without ../shared
    comparison = compare(load_summary(SUMMARY), ours)
    doc = DOC.read_text(encoding="utf-8")
    for row in comparison.differences():
        assert re.search(re.escape(row.template), doc), row.template


def _prompt(name: str, **kwargs: object) -> str:
    text = template_text(name)
    return render(text, [{"role": "user", "content": USER_TEXT}], add_generation_prompt=True, **kwargs)


# ----------------------------------------------------------------------------------------- disputed
def test_deepseek_v31_is_forced_open_not_forced_closed() -> None:
    on = _prompt("deepseek-ai-DeepSeek-V3.1", enable_thinking=True)
    off = _prompt("deepseek-ai-DeepSeek-V3.1", enable_thinking=False)
    assert on.endswith("<｜Assistant｜><think>")  # the output starts inside reasoning
    assert off.endswith("<｜Assistant｜></think>") and "<think>" not in off  # not "both tags when disabled"
    spec = shared("deepseek-ai-DeepSeek-V3.1").spec
    assert spec.reasoning.mode == "forced_open" and spec.prompt.thinking_opened


def test_seed_oss_budget_zero_closes_the_block() -> None:
    default = _prompt("ByteDance-Seed-OSS")
    closed = _prompt("ByteDance-Seed-OSS", thinking_budget=0)
    assert "<seed:think>" not in default  # the model opens the block itself
    assert closed.rstrip().endswith("</seed:think>") and "<seed:think>" in closed  # a closed block
    spec = shared("ByteDance-Seed-OSS").spec
    assert spec.reasoning.mode == "forced_closed" and "thinking_budget" in spec.prompt.switches


@pytest.mark.parametrize("name", ["StepFun3.5-Flash", "MiniMax-M2"])
def test_prompts_that_always_open_think_are_forced_open(name: str) -> None:
    prompts = {_prompt(name), _prompt(name, enable_thinking=True), _prompt(name, enable_thinking=False)}
    assert len(prompts) == 1  # no switch at all: nothing can be "closed when disabled"
    assert prompts.pop().endswith("<think>\n")
    spec = shared(name).spec
    assert (spec.reasoning.mode, spec.reasoning.start) == ("forced_open", "<think>")
    assert spec.prompt.thinking_opened and not spec.prompt.supports_thinking_toggle


def test_granite_tool_calls_follow_its_own_instructions() -> None:
    text = template_text("ibm-granite-granite-3.3-2B-Instruct")
    assert "respond only with <|tool_call|> followed by a JSON list of tools used" in text
    t = shared("ibm-granite-granite-3.3-2B-Instruct").spec.tools
    assert (t.format, t.section_start, t.array_wrapped) == ("json_native", "<|tool_call|>", True)


# ----------------------------------------------------------------------------------------- README's list
def test_apertus_reasoning_markers_are_its_inner_tokens_not_prose() -> None:
    spec = shared("Apertus-8B-Instruct").spec
    assert (spec.reasoning.start, spec.reasoning.end) == ("<|inner_prefix|>", "<|inner_suffix|>")
    assert "en" not in spec.preserved_tokens and "dis" not in spec.preserved_tokens


def test_apriel_16_reasoning_ends_at_a_delimiter_and_has_no_start_token() -> None:
    spec = shared("Apriel-1.6-15b-Thinker-fixed").spec
    assert (spec.reasoning.mode, spec.reasoning.start) == ("delimiter", "")
    assert spec.reasoning.end.strip() == "[BEGIN FINAL RESPONSE]"
    assert "<|begin_assistant|>" not in (spec.reasoning.start, spec.reasoning.end)


def test_gpt_oss_arguments_never_contain_the_system_prompt() -> None:
    spec = shared("openai-gpt-oss-120b").spec
    t = spec.tools
    assert spec.layout.headed
    parts = (t.call_start, t.call_end, *t.pattern.call, spec.layout.opener, spec.layout.closer)
    assert all("Current date" not in v for v in parts)


def test_functionary_markers_are_not_system_prompt_paragraphs() -> None:
    for name in ("meetkai-functionary-medium-v3.1", "meetkai-functionary-medium-v3.2"):
        spec = shared(name).spec
        assert all(len(tok) < 40 for tok in spec.preserved_tokens), (name, spec.preserved_tokens)


def test_nemotron_content_is_not_wrapped_in_think() -> None:
    spec = shared("NVIDIA-Nemotron-Nano-v2").spec
    assert spec.content.mode == "plain"
    assert (spec.reasoning.mode, spec.reasoning.start, spec.reasoning.end) == (
        "forced_open",
        "<think>",
        "</think>",
    )
    assert "<SPECIAL_12>" in spec.end_markers and spec.tools.section_end == "</TOOLCALL>"
