"""The layout machine (spec v3): headed messages, leads and learned layouts, one-shot and streamed.

Every layout the analysis learns from the project's templates of issue 18's classes (and the project's
Harmony template) parses what its own sample writer writes, for a value of every JSON type, to the message
written: one-shot, one character at a time, and at any chunking hypothesis draws.  Partial markers at a
chunk's end are held back, so no chunking changes the message.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import PROJECT_TEMPLATES
from workbench.formats import analyze
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.parsing.samples import SampleCall, sample_output
from workbench.runtime.spec import (
    CallPattern,
    FormatSpec,
    LayoutMessage,
    ReasoningSpec,
    ToolsSpec,
    TurnLayout,
)
from workbench.template.source import load_template

NEW_FORMATS = PROJECT_TEMPLATES / "new-formats"
LAYOUT_TEMPLATES = (
    "headed-channels",
    "model-headers",
    "role-switch",
    "element-channels",
    "channel-thought",
    "odd-markers",
    "bare-words",
    "assistant-prefix",
)
#: One value of every JSON type, and a nested one.
VALUES: dict[str, Any] = {
    "string": 'Paris <b>"x"</b>',
    "integer": 42,
    "number": -2.5,
    "boolean": True,
    "null": None,
    "array": [1, "two", None],
    "object": {"k": "v", "n": 1},
    "nested": {"a": [{"b": [1, {"c": None}]}], "d": "e"},
}
TOOL = Tool("set_value", parameters={"type": "object", "properties": {"value": {}}, "required": ["value"]})


@functools.cache
def learned(stem: str) -> FormatSpec:
    path = NEW_FORMATS / f"{stem}.jinja"
    if not path.is_file():
        path = PROJECT_TEMPLATES / f"{stem}.jinja"
    return analyze(load_template(path)).spec


def _feed(spec: FormatSpec, chunks: list[str]) -> dict[str, Any]:
    parser = StreamParser(spec, [TOOL])
    for chunk in chunks:
        parser.feed(chunk)
    return parser.finish().message.to_contract()


def _written(spec: FormatSpec, value: Any) -> tuple[str, dict[str, Any]]:
    calls = (SampleCall("set_value", {"value": value}),)
    text = sample_output(spec, reasoning="Think <a> first.", content="Answer with [x].", calls=calls)
    want = {
        "content": "Answer with [x].",
        "reasoning_content": "Think <a> first.",
        "tool_calls": [{"name": "set_value", "arguments": {"value": value}}],
    }
    return text, want


def _contract(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": (message["content"] or "").strip(),
        "reasoning_content": (message["reasoning_content"] or "").strip(),
        "tool_calls": [{"name": c["name"], "arguments": c["arguments"]} for c in message["tool_calls"]],
    }


def _supports_reasoning(spec: FormatSpec) -> bool:
    return spec.reasoning.mode != "none"


@pytest.mark.parametrize("stem", [*LAYOUT_TEMPLATES, "harmony-channels"])
@pytest.mark.parametrize("kind", sorted(VALUES))
def test_written_output_parses_back_one_shot_and_one_character_at_a_time(stem: str, kind: str) -> None:
    spec = learned(stem)
    text, want = _written(spec, VALUES[kind])
    if not _supports_reasoning(spec):
        want["reasoning_content"] = ""
    one = _contract(parse(spec, text, [TOOL]).message.to_contract())
    assert one == want, text
    assert _contract(_feed(spec, list(text))) == one


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("stem", [*LAYOUT_TEMPLATES, "harmony-channels"])
def test_any_chunking_gives_the_one_shot_message(stem: str, data: st.DataObject) -> None:
    spec = learned(stem)
    kind = data.draw(st.sampled_from(sorted(VALUES)))
    text, _ = _written(spec, VALUES[kind])
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    one = parse(spec, text, [TOOL]).message.to_contract()
    assert _feed(spec, chunks) == one


# ----------------------------------------------------------------------------------------- headed messages
HEADED = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="<|m|>ai ch=think<|b|>", end="<|e|>"),
    tools=ToolsSpec(
        format="call_pattern",
        call_start="<|m|>ai to=fn.",
        call_end="<|c|>",
        parallel=True,
        pattern=CallPattern(call=("$name", " <|b|>", "$args")),
    ),
    layout=TurnLayout(
        opener="<|m|>ai",
        closer="<|b|>",
        channel=" ch=",
        roles="<|m|>",
        messages=(
            LayoutMessage(kind="reasoning", header=" ch=think<|b|>", ends=("<|e|>",)),
            LayoutMessage(kind="content", header=" ch=say<|b|>", ends=("<|r|>", "<|e|>")),
        ),
    ),
)


def test_a_header_read_as_attributes_in_any_order() -> None:
    text = '<|m|>ai ch=think<|b|>hm<|e|><|m|>ai ch=tool to=fn.set_value extra<|b|>{"value": 1}<|c|>'
    m = parse(HEADED, text, [TOOL]).message
    assert (m.reasoning_content, [(c.name, c.arguments_value()) for c in m.tool_calls]) == (
        "hm",
        [("set_value", {"value": 1})],
    )


def test_a_call_headers_id_is_read_where_the_call_pattern_puts_it() -> None:
    """The layout names no id attribute; the call pattern writes one after the name (``to=fn.NAME
    id=ID``): a header read as attributes keeps it (the id was dropped, llamaattr-like)."""
    pattern = CallPattern(call=("$name", " id=", "$id", " <|b|>", "$args"))
    spec = replace(HEADED, tools=replace(HEADED.tools, pattern=pattern))
    text = '<|m|>ai to=fn.set_value id=c42 <|b|>{"value": 1}<|c|>'
    calls = parse(spec, text, [TOOL]).message.tool_calls
    assert [(c.name, c.id) for c in calls] == [("set_value", "c42")]


def test_another_roles_message_is_not_the_models() -> None:
    text = "<|m|>ai ch=say<|b|>one<|e|><|m|>user<|b|>not mine<|e|><|m|>ai ch=say<|b|>two<|r|>"
    assert parse(HEADED, text).message.content == "onetwo"


def test_a_header_without_a_channel_is_the_answer_with_a_diagnostic() -> None:
    result = parse(HEADED, "<|m|>ai<|b|>plain<|r|>")
    assert result.message.content == "plain"
    assert "E-PARSE-CHANNEL-MISSING" in [d.code for d in result.diagnostics]


def test_text_between_messages_belongs_to_none() -> None:
    result = parse(HEADED, "<|m|>ai ch=say<|b|>a<|e|>stray<|m|>ai ch=say<|b|>b<|r|>")
    assert result.message.content == "ab"
    assert "E-PARSE-HEADER" in [d.code for d in result.diagnostics]


@pytest.mark.parametrize("cut", range(1, 40))
def test_a_partial_header_at_a_chunk_end_is_held_back(cut: int) -> None:
    text = "<|m|>ai ch=think<|b|>hm<|e|><|m|>ai ch=say<|b|>ok<|r|>"
    assert _feed(HEADED, [text[:cut], text[cut:]]) == parse(HEADED, text).message.to_contract()


def test_the_lead_the_model_writes_is_never_content() -> None:
    spec = learned("assistant-prefix")
    assert spec.layout.lead == "Assistant: "
    assert parse(spec, "Assistant: Hello.").message.content == "Hello."
    assert parse(spec, "Hello.").message.content == "Hello."


def test_reasoning_not_extracted_keeps_a_reasoning_message_whole_in_the_answer() -> None:
    text = "<|m|>ai ch=think<|b|>hm<|e|><|m|>ai ch=say<|b|>ok<|r|>"
    m = parse(HEADED, text, options=ParseOptions(extract_reasoning=False)).message
    assert m.reasoning_content in ("", None)
    assert m.content == "<|m|>ai ch=think<|b|>hm<|e|>ok"
