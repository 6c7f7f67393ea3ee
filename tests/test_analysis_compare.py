"""The llama.cpp comparison arithmetic, on a synthetic summary (no ../shared needed)."""

from __future__ import annotations

from workbench.analysis.llamacpp import compare


def _entry(reasoning: str, tools: str) -> dict[str, str]:
    return {"set": "shared", "reasoning_mode": reasoning, "tool_format": tools}


SUMMARY = {
    "templates": {
        "plain": _entry("NONE", "JSON_NATIVE"),
        "StepFun3.5-Flash": _entry("FORCED_CLOSED", "TAG_WITH_TAGGED"),  # disputed reasoning: excluded
        "openai-gpt-oss-120b": _entry("NONE", "TAG_WITH_JSON"),  # dedicated handler: compared with layout
        "held-out": {"set": "heldout", "reasoning_mode": "NONE", "tool_format": "NONE"},
    }
}


def test_names_are_compared_case_insensitively_and_corrections_apply() -> None:
    ours = {
        "plain": {"reasoning": "none", "tools": "json_native"},
        "StepFun3.5-Flash": {"reasoning": "forced_open", "tools": "tag_with_tagged"},
        "openai-gpt-oss-120b": {"reasoning": "tag_based", "tools": "layout"},
    }
    c = compare(SUMMARY, ours)
    statuses = {(r.template, r.field): r.status for r in c.rows}
    assert statuses[("StepFun3.5-Flash", "reasoning")] == "excluded"
    assert statuses[("openai-gpt-oss-120b", "tools")] == "agree"
    assert all(r.template != "held-out" for r in c.rows)
    assert c.agreement == 100.0 and len(c.counted) == 5


def test_a_real_disagreement_lowers_the_rate() -> None:
    ours = {
        "plain": {"reasoning": "tag_based", "tools": "json_native"},
        "StepFun3.5-Flash": {"reasoning": "forced_open", "tools": "tag_with_tagged"},
        "openai-gpt-oss-120b": {"reasoning": "tag_based", "tools": "tag_with_json"},
    }
    c = compare(SUMMARY, ours)
    assert [(r.template, r.field) for r in c.rows if r.status == "disagree"] == [
        ("openai-gpt-oss-120b", "tools"),
        ("plain", "reasoning"),
    ]
    assert c.agreement == 60.0
    assert round(c.template_agreement, 6) == round(100 / 3, 6)  # only StepFun agrees on all counted fields
