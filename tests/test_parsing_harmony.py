"""Harmony / OpenChatML 2.2: channels, recipients, constrain, terminators, literal blocks, error codes."""

from __future__ import annotations

import json

import pytest

from workbench.runtime.chat import Tool
from workbench.runtime.parsing import ParseOptions, parse, parse_events
from workbench.runtime.spec import FormatSpec, ToolsSpec

HARMONY = FormatSpec(tools=ToolsSpec(format="harmony"), end_markers=("<|return|>",))
TOOLS = [
    Tool(
        "get_weather",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
]


def run(
    text: str, tools: list[Tool] | None = TOOLS, **opts: object
) -> tuple[str, str, list[tuple[str, object]], list[str]]:
    one = parse(HARMONY, text, tools, ParseOptions(**opts))  # type: ignore[arg-type]
    _events, streamed = parse_events(HARMONY, list(text), tools, ParseOptions(**opts))  # type: ignore[arg-type]
    assert streamed.message == one.message
    m = one.message
    calls = [(c.name, c.arguments_value()) for c in m.tool_calls]
    return m.reasoning_content or "", m.content or "", calls, [d.code for d in one.diagnostics]


def test_analysis_is_reasoning_and_final_is_content() -> None:
    text = (
        "<|channel|>analysis<|message|>think<|end|>"
        "<|start|>assistant<|channel|>final<|message|>answer<|return|>"
    )
    assert run(text)[:3] == ("think", "answer", [])


def test_output_continuing_the_prompts_role_header() -> None:
    assert run("<|channel|>final<|message|>hi")[:2] == ("", "hi")
    assert run(' to=functions.get_weather<|channel|>commentary<|message|>{"city": "X"}')[2] == [
        ("get_weather", {"city": "X"})
    ]


@pytest.mark.parametrize(
    "header",
    [
        "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather json<|message|>",
        "<|start|>assistant to=functions.get_weather call_id=wx1<|channel|>commentary<|message|>",
    ],
)
def test_recipient_in_the_role_header_or_after_the_channel(header: str) -> None:
    _r, content, calls, _codes = run(header + '{"city": "Tokyo"}<|call|>')
    assert content == "" and calls == [("get_weather", {"city": "Tokyo"})]


def test_call_id_from_the_header_is_kept() -> None:
    text = (
        "<|start|>assistant to=functions.get_weather call_id=wx1<|channel|>commentary<|message|>"
        '{"city": "X"}<|call|>'
    )
    assert parse(HARMONY, text, TOOLS).message.tool_calls[0].id == "wx1"


def test_commentary_without_recipient_is_content_and_parallel_calls_are_indexed() -> None:
    text = (
        "<|channel|>commentary<|message|>Checking.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"city": "A"}<|call|>'
        '<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"city": "B"}<|call|>'
    )
    events, result = parse_events(HARMONY, [text], TOOLS)
    assert result.message.content == "Checking."
    assert [json.loads(c.arguments)["city"] for c in result.message.tool_calls] == ["A", "B"]
    assert sorted({e.tool_index for e in events if e.kind.startswith("tool_")}) == [0, 1]


def test_reasoning_kept_in_content_when_not_extracted() -> None:
    text = "<|channel|>analysis<|message|>I'm\nthinking<|end|>\n<|channel|>final<|message|>Hi"
    assert run(text, extract_reasoning=False)[:2] == (
        "",
        "<|channel|>analysis<|message|>I'm\nthinking<|end|>Hi",
    )


def test_literal_blocks_hide_control_tokens() -> None:
    text = "<|channel|>final<|message|>print <|literal|><|start|><|end|><|endliteral|> done<|return|>"
    assert run(text)[1] == "print <|start|><|end|> done"


def test_body_violating_its_constrain_type_is_reported() -> None:
    text = (
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        "{city: X}<|call|>"
    )
    _r, _c, calls, codes = run(text)
    assert calls == [] and "E-BODY-CONSTRAINT-VIOLATION" in codes


def test_arguments_not_matching_the_tool_schema_are_reported() -> None:
    text = '<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"town": "X"}<|call|>'
    assert "E-CALL-SCHEMA" in run(text)[3]


def test_truncated_stream_and_missing_channel_are_reported() -> None:
    assert (
        "E-STREAM-TRUNCATED"
        in run('<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"ci')[3]
    )
    assert "E-STREAM-TRUNCATED" in run("<|start|>assistant<|channel|>fin")[3]
    assert "E-PARSE-CHANNEL-MISSING" in run("<|start|>assistant<|message|>hello<|return|>")[3]


def test_malformed_header_is_reported_and_parsing_continues() -> None:
    text = (
        "<|start|>assistant<|channel|>final\n<|message|>x<|end|>"
        "<|start|>assistant<|channel|>final<|message|>ok"
    )
    _r, content, _calls, codes = run(text)
    assert "E-PARSE-HEADER" in codes and content.endswith("ok")


def test_plain_text_without_headers_is_final_content() -> None:
    assert run("The weather is nice.")[:3] == ("", "The weather is nice.", [])


# --- OpenChatML 2.2 §3: <<| escapes a control token outside a literal block ---------------------------


@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        ("<|channel|>final<|message|>Print <<|start|> now<|return|>", "", "Print <|start|> now"),
        ("<|channel|>final<|message|>a <<|end|> b <<|literal|> c<|return|>", "", "a <|end|> b <|literal|> c"),
        ("<|channel|>analysis<|message|>x <<|call|> y<|end|>", "x <|call|> y", ""),
        ("<<|start|>hi", "", "<|start|>hi"),  # before any message
        ("a <<<|end|>", "", "a <<|end|>"),  # only the < right before the token is the escape
        ("<|channel|>final<|message|><|literal|>a <<|end|> b<|endliteral|>!<|return|>", "", "a <<|end|> b!"),
    ],
)
def test_a_doubled_lt_makes_a_control_token_text(text: str, reasoning: str, content: str) -> None:
    r, c, calls, codes = run(text)
    assert (r, c, calls) == (reasoning, content, [])
    assert "E-STREAM-TRUNCATED" not in codes and "E-PARSE-HEADER" not in codes
    events, _ = parse_events(HARMONY, list(text), TOOLS)
    assert "".join(e.text for e in events) == text  # the extra < is released as a marker
