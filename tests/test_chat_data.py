"""Messages and tools JSON of the wrong shape are refused with the offending field named (never a crash)."""

from __future__ import annotations

import pytest

from workbench.runtime.chat import ChatDataError, load_messages, load_tools
from workbench.runtime.errors import WorkbenchError


def _assistant(*calls: object) -> list[dict[str, object]]:
    return [{"role": "assistant", "tool_calls": list(calls)}]


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        (_assistant({"function": "get_weather"}), "messages[0].tool_calls[0].function"),
        (_assistant({"function": ["a"]}), "messages[0].tool_calls[0].function"),
        (_assistant({"function": {"name": 3}}), "tool_calls[0].function.name"),
        (_assistant({"function": {"name": "f", "arguments": 7}}), "arguments"),
        ([{"role": "assistant", "tool_calls": {"function": {}}}], "messages[0].tool_calls"),
        ([{"role": "user"}, {"role": "user", "content": [{"text": 42}]}], "messages[1].content[0].text"),
        ([{"role": "user", "content": ["hello"]}], "messages[0].content[0]"),
        ([{"role": 5, "content": "x"}], "messages[0].role"),
        ([{"role": "assistant", "reasoning_content": ["a"]}], "messages[0].reasoning_content"),
    ],
)
def test_malformed_message_field_is_named(messages: list, field: str) -> None:
    with pytest.raises(ChatDataError) as info:
        load_messages(messages)
    assert field in str(info.value)
    assert isinstance(info.value, WorkbenchError)


@pytest.mark.parametrize(
    ("tools", "field"),
    [
        ([{"function": {"name": "f", "parameters": "object"}}], "tools[0].function.parameters"),
        ([{"function": {"name": "f", "description": 1}}], "tools[0].function.description"),
        ([{"type": "function", "function": {"name": "f"}}, "g"], "tools[1]"),
    ],
)
def test_malformed_tool_field_is_named(tools: list, field: str) -> None:
    with pytest.raises(ChatDataError) as info:
        load_tools(tools)
    assert field in str(info.value)


def test_well_formed_messages_still_load_with_dict_or_string_arguments() -> None:
    msgs = load_messages(
        [
            {"role": "user", "content": [{"type": "text", "text": "hi "}, {"type": "image"}]},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "function": {"name": "f", "arguments": {"city": "Paris"}}},
                    {"function": {"name": "g", "arguments": '{"n": 1}'}},
                ],
            },
        ]
    )
    assert msgs[0].content == "hi "
    assert [c.arguments_value() for c in msgs[1].tool_calls] == [{"city": "Paris"}, {"n": 1}]
    assert msgs[1].tool_calls[0].id == "c1"


@pytest.mark.parametrize(
    "arguments",
    [
        '{"x": NaN}',
        '{"x": Infinity}',
        '{"x": -Infinity}',
        '{"x": 1e999999}',
        '{"x": ' + "1" * 5000 + "}",
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_arguments_that_are_not_strict_json_stay_text(arguments: str) -> None:
    """The parse contract prints arguments as JSON: a value strict JSON cannot hold stays the model's text."""
    import json

    from workbench.runtime.chat import ToolCall

    value = ToolCall(name="f", arguments=arguments).arguments_value()
    assert value == arguments
    json.dumps(ToolCall(name="f", arguments=arguments).to_contract(), allow_nan=False)
