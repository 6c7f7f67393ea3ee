"""The response-template target, proven by transformers' own ``parse_response`` (and its streaming parser)."""

from __future__ import annotations

import pytest
from transformers.utils.chat_parsing import ResponseParser, parse_response

from workbench.export import (
    Unsupported,
    build_response_template,
    normalize_hf_message,
    prove_response_template,
)
from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec, PromptSpec, ReasoningSpec, ToolsSpec
from workbench.template.source import load_template
from workbench.validate import ROUND_TRIP_TOOLS, validate

TOOLS = [t.to_openai() for t in ROUND_TRIP_TOOLS]
EXPRESSIBLE = [
    "chatml-think-tools",
    "deepseek-v31-like",
    "harmony-channels",
    "llama3-json",
    "mistral-tool-calls",
    "xml-tagged-args",
]


@pytest.mark.parametrize("name", EXPRESSIBLE)
def test_transformers_parses_every_round_trip_case_like_our_parser(name: str) -> None:
    source = load_template(name)
    spec = analyze(source).spec
    report = validate(source, spec)
    proof = prove_response_template(build_response_template(spec), spec, report)
    bad = [f"{c.id}: {c.detail}" for c in proof.cases if c.status != "pass" and c.status != "unsupported"]
    assert proof.passed, bad
    checked = [c for c in proof.cases if c.status == "pass"]
    assert len(checked) == len(report.applicable)  # no case was set aside


def test_pythonic_calls_are_named_as_inexpressible() -> None:
    spec = analyze(load_template("pythonic-calls")).spec
    with pytest.raises(Unsupported, match="pythonic calls"):
        build_response_template(spec)


QWEN_LIKE = FormatSpec(
    reasoning=ReasoningSpec(mode="forced_open", start="<think>", end="</think>"),
    tools=ToolsSpec(format="json_native", call_start="<tool_call>\n", call_end="</tool_call>", parallel=True),
    prompt=PromptSpec(thinking_opened=True),
    end_markers=("<|im_end|>",),
)


def test_a_prompt_ending_in_the_reasoning_opener_starts_the_message_inside_reasoning() -> None:
    template = build_response_template(QWEN_LIKE)
    prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    parsed = parse_response("Let me see.</think>Hello.", template, prefix=prompt)
    assert parsed["reasoning_content"] == "Let me see."
    assert parsed["content"] == "Hello."
    # Without the opener in the prompt, the same text is all content: nothing of the prompt leaks in.
    parsed = parse_response(
        "Hello.", template, prefix="<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert parsed == {"role": "assistant", "content": "Hello."}


def test_a_marker_inside_a_json_string_does_not_end_the_call_even_when_streamed() -> None:
    template = build_response_template(QWEN_LIKE)
    output = (
        '</think><tool_call>\n{"name": "save_note", "arguments": {"body": "x </tool_call> <tool_call> y"}}\n'
        '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}\n</tool_call>'
    )
    expected = [
        {"id": "", "name": "save_note", "arguments": {"body": "x </tool_call> <tool_call> y"}},
        {"id": "", "name": "get_time", "arguments": {"timezone": "UTC"}},
    ]
    one_shot = parse_response(output, template, prefix="<think>\n", tools=TOOLS)
    assert normalize_hf_message(one_shot)["tool_calls"] == expected
    stream = ResponseParser(template, prefix="<think>\n", tools=TOOLS)
    for ch in output:
        stream.feed(ch)
    message, _ = stream.finalize()
    assert normalize_hf_message(message)["tool_calls"] == expected


def test_tagged_arguments_are_cast_by_the_tool_schemas() -> None:
    spec = analyze(load_template("xml-tagged-args")).spec
    output = (
        "<tool_call>\n<function=set_values>\n<parameter=count>\n42\n</parameter>\n"
        "<parameter=enabled>\ntrue\n</parameter>\n<parameter=ratio>\n-3.25\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    parsed = parse_response(output, build_response_template(spec), prefix="", tools=TOOLS)
    assert parsed["tool_calls"][0]["function"] == {
        "name": "set_values",
        "arguments": {"count": 42, "enabled": True, "ratio": -3.25},
    }


def test_a_proof_fails_when_transformers_disagrees() -> None:
    source = load_template("chatml-think-tools")
    spec = analyze(source).spec
    report = validate(source, spec)
    template = build_response_template(spec)
    template["fields"]["tool_calls"]["transform"]["function"]["name"] = "{content.arguments}"
    proof = prove_response_template(template, spec, report)
    assert not proof.passed
    assert any(c.status == "fail" and "tool_calls[0].name" in c.detail for c in proof.cases)


SECTIONED = FormatSpec(
    tools=ToolsSpec(
        format="tag_with_json",
        section_start="<|calls|>",
        section_end="<|/calls|>",
        call_start="<|call|>",
        call_end="<|/call|>",
        args_start="<|args|>",
        parallel=True,
    ),
    end_markers=("<|end|>",),
)


@pytest.mark.parametrize("profile", ["transformers", "vllm", "portable"])
def test_a_section_close_after_the_last_call_never_leaks_into_the_content_when_streamed(profile: str) -> None:
    """A close written ``END(?:SECTION_CLOSE)?`` fires at a chunk ending in ``END``; ours waits for what
    follows (the section close, or the next call)."""
    template = build_response_template(SECTIONED, profile)
    output = (
        'Hi.<|calls|><|call|>get_time<|args|>{"timezone": "UTC"}<|/call|>'
        '<|call|>get_time<|args|>{"timezone": "CET"}<|/call|><|/calls|>'
    )
    for size in (1, 3, 7, len(output)):
        stream = ResponseParser(template, prefix="", tools=TOOLS)
        for i in range(0, len(output), size):
            stream.feed(output[i : i + size])
        message = normalize_hf_message(stream.finalize()[0])
        assert message["content"].strip() == "Hi.", size
        assert [c["arguments"] for c in message["tool_calls"]] == [{"timezone": "UTC"}, {"timezone": "CET"}]
