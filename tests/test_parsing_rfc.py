"""The DeepSeek RFC's edge rules (§3.2, §3.3): all 26 vectors of ../shared, plus the rules spelled out here.

The RFC's combined reasoning + tool parser is our parser with ``exclusive_tool_calls=True``; the case's
``output_stage`` says whether the output starts inside reasoning (``thinking_opened``).  Every vector runs
one-shot, per character, and with the chunks the RFC gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, shared_path
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import ParseOptions, parse, parse_events
from workbench.runtime.spec import FormatSpec

SPEC = FormatSpec.from_json((REPO / "specs/_parser_fixtures/deepseek-ai-DeepSeek-V3.1.json").read_text())
STAGES = {"REASONING_STAGE": True, "CONTENT_STAGE": False, None: None}
BEGIN, CALL, SEP, END, CALLS_END = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
)


def rfc_options(options: dict[str, Any]) -> ParseOptions:
    return ParseOptions(
        enable_thinking=bool(options.get("thinking", True)),
        thinking_opened=STAGES[options.get("output_stage")],
        exclusive_tool_calls=True,
    )


def check(expect: dict[str, Any], message: Any) -> list[str]:
    """Differences between an RFC expectation and a parsed message (empty: it passes)."""
    got_content, got_reasoning = message.content or "", message.reasoning_content or ""
    got_calls = [(c.name, c.arguments) for c in message.tool_calls]
    problems = []
    if "content" in expect and got_content != (expect["content"] or ""):
        problems.append(f"content {got_content!r} != {expect['content']!r}")
    if "content_strip" in expect and got_content.strip() != expect["content_strip"]:
        problems.append(f"content.strip() {got_content.strip()!r} != {expect['content_strip']!r}")
    if "reasoning_content" in expect and got_reasoning != (expect["reasoning_content"] or ""):
        problems.append(f"reasoning {got_reasoning!r} != {expect['reasoning_content']!r}")

    def same(calls: list[dict[str, Any]]) -> bool:
        if len(calls) != len(got_calls):
            return False
        for want, (name, args) in zip(calls, got_calls, strict=True):
            if want["name"] != name:
                return False
            if "arguments" in want and json.loads(args) != want["arguments"]:
                return False
            if "arguments_text" in want and args != want["arguments_text"]:
                return False
        return True

    if "tool_calls" in expect and not same(expect["tool_calls"]):
        problems.append(f"tool calls {got_calls} != {expect['tool_calls']}")
    if "tool_calls_any_of" in expect and not any(same(c) for c in expect["tool_calls_any_of"]):
        problems.append(f"tool calls {got_calls} match none of {expect['tool_calls_any_of']}")
    return problems


def rfc_cases() -> list[dict[str, Any]]:
    path = Path(shared_path("conformance", "peers", "deepseek_rfc_edge_cases.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    tools = {k: [Tool.from_openai(t) for t in v] for k, v in data["tools"].items()}
    return [{**c, "_tools": tools.get(c["options"].get("toolset"))} for c in data["cases"]]


def test_all_26_rfc_vectors_pass_one_shot_and_streamed() -> None:
    cases = rfc_cases()
    assert len(cases) == 26
    failures = []
    for case in cases:
        options = rfc_options(case["options"])
        runs = {"oneshot": None, "per_char": list(case["input"])}
        if case.get("chunks"):
            runs["chunks"] = case["chunks"]
        for run, chunks in runs.items():
            if chunks is None:
                message = parse(SPEC, case["input"], case["_tools"], options).message
            else:
                message = parse_events(SPEC, chunks, case["_tools"], options)[1].message
            failures += [f"{case['name']} [{run}]: {p}" for p in check(case["expect"], message)]
    assert failures == []


# ----------------------------------------------------------------------------- the rules, by hand
WEATHER = [Tool("get_weather")]


def call(city: str) -> str:
    return f'{CALL}get_weather{SEP}{{"location": "{city}"}}{END}'


def rfc(text: str, *, stage: str | None = "REASONING_STAGE", thinking: bool = True) -> Any:
    return parse(SPEC, text, WEATHER, rfc_options({"output_stage": stage, "thinking": thinking}))


def test_rule_3_2_1_no_end_of_reasoning_marker_follows_the_output_stage() -> None:
    assert rfc("ABCD").message.reasoning_content == "ABCD"
    assert rfc("ABCD", stage="CONTENT_STAGE").message.content == "ABCD"


def test_rule_3_2_3_text_before_the_call_makes_everything_content() -> None:
    text = f"R</think>\nEFG\n{BEGIN}{call('X')}{CALLS_END}"
    m = rfc(text).message
    assert m.tool_calls == () and m.content == f"\nEFG\n{BEGIN}{call('X')}{CALLS_END}"


def test_rule_3_2_4_only_whitespace_before_the_call_is_ignored() -> None:
    m = rfc(f"R</think> \n \n{BEGIN}{call('X')}{CALLS_END}").message
    assert m.content is None and [c.name for c in m.tool_calls] == ["get_weather"]


def test_rule_3_2_5_text_between_calls_keeps_the_first_and_ends_tool_parsing() -> None:
    m = rfc(f"R</think>{BEGIN}{call('A')}\nXYZ\n{call('B')}{CALLS_END}").message
    assert [json.loads(c.arguments)["location"] for c in m.tool_calls] == ["A"]
    assert m.content == f"\nXYZ\n{call('B')}{CALLS_END}"


def test_rule_3_2_6_one_invalid_call_is_dropped_and_its_sibling_kept() -> None:
    bad = f"{CALL}get_weather{SEP}{{location: A}}{END}"
    result = rfc(f"R</think>{BEGIN}{bad}{call('B')}{CALLS_END}")
    assert [json.loads(c.arguments)["location"] for c in result.message.tool_calls] == ["B"]
    assert "E-CALL-SCHEMA" in [d.code for d in result.diagnostics]


def test_rule_3_3_non_thinking_output_starting_with_a_call_is_parsed() -> None:
    m = rfc(f"{BEGIN}{call('X')}{CALLS_END}", stage="CONTENT_STAGE", thinking=False).message
    assert m.reasoning_content is None and [c.name for c in m.tool_calls] == ["get_weather"]


@pytest.mark.parametrize("exclusive", [True, False])
def test_without_the_exclusive_policy_content_may_precede_calls(exclusive: bool) -> None:
    text = f"R</think>CONTENT{BEGIN}{call('X')}{CALLS_END}"
    opts = ParseOptions(thinking_opened=True, exclusive_tool_calls=exclusive)
    m = parse(SPEC, text, WEATHER, opts).message
    assert (len(m.tool_calls), m.content) == (
        (0, f"CONTENT{BEGIN}{call('X')}{CALLS_END}") if exclusive else (1, "CONTENT")
    )
