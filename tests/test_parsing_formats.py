"""Every tool-call format the FormatSpec can express, with hand-written specs."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tests.spec_fixtures import CODER, DEEPSEEK_V31, GLM, HERMES, KIMI, MISTRAL_NEMO, MISTRAL_V11
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import ParseOptions, parse, parse_events
from workbench.runtime.spec import FormatSpec, ToolsSpec


def calls(
    spec: FormatSpec, text: str, tools: list[Tool] | None = None, **opts: Any
) -> list[tuple[str, Any, str]]:
    """(name, decoded arguments, id) of every call, checked to be identical when streamed per character."""
    one = parse(spec, text, tools, ParseOptions(**opts))
    _events, streamed = parse_events(spec, list(text), tools, ParseOptions(**opts))
    assert streamed.message == one.message
    return [(c.name, json.loads(c.arguments), c.id) for c in one.message.tool_calls]


def content(spec: FormatSpec, text: str, tools: list[Tool] | None = None) -> str:
    return parse(spec, text, tools).message.content or ""


def tool(name: str, **props: Any) -> Tool:
    return Tool(name, parameters={"type": "object", "properties": props})


# ------------------------------------------------------------------------------------------ json_native


def test_json_native_flat_object_in_section_markers() -> None:
    text = 'Sure.<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    assert calls(HERMES, text) == [("f", {"a": 1}, "")]
    assert content(HERMES, text) == "Sure."


def test_json_native_arguments_keep_the_models_key_order_and_text() -> None:
    r = parse(HERMES, '<tool_call>{"name": "f", "arguments": {"z": 1,"a":[2, 3]}}</tool_call>')
    assert r.message.tool_calls[0].arguments == '{"z": 1,"a":[2, 3]}'


def test_json_native_arguments_before_the_name() -> None:
    text = '<tool_call>{"arguments": {"a": 1}, "name": "f"}</tool_call>'
    assert calls(HERMES, text) == [("f", {"a": 1}, "")]


def test_json_native_string_encoded_arguments_are_decoded_once() -> None:
    text = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>'
    assert calls(HERMES, text) == [("f", {"a": 1}, "")]


def test_json_native_nested_function_field() -> None:
    s = FormatSpec(
        tools=ToolsSpec(
            format="json_native",
            section_start="<tool_call>",
            section_end="</tool_call>",
            function_field="function",
        )
    )
    text = '<tool_call>{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}</tool_call>'
    assert calls(s, text) == [("f", {"a": 1}, "")]


def test_json_native_name_as_key_in_an_array() -> None:
    s = FormatSpec(
        tools=ToolsSpec(
            format="json_native",
            section_start="<|tools_prefix|>",
            section_end="<|tools_suffix|>",
            fun_name_is_key=True,
            array_wrapped=True,
        )
    )
    text = '<|tools_prefix|>[{"f": {"a": 1}}, {"g": {}}]<|tools_suffix|>'
    assert calls(s, text) == [("f", {"a": 1}, ""), ("g", {}, "")]


def test_json_native_ids_from_a_string_field_and_a_generated_field() -> None:
    assert calls(MISTRAL_NEMO, '[TOOL_CALLS][{"name": "f", "arguments": {}, "id": "123456789"}]') == [
        ("f", {}, "123456789")
    ]
    r7b = FormatSpec(
        tools=ToolsSpec(
            format="json_native",
            section_start="<|START_ACTION|>",
            section_end="<|END_ACTION|>",
            name_field="tool_name",
            args_field="parameters",
            gen_id_field="tool_call_id",
            array_wrapped=True,
        )
    )
    text = (
        '<|START_ACTION|>[\n {"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}}\n]<|END_ACTION|>'
    )
    assert calls(r7b, text) == [("f", {"a": 1}, "0")]


def test_json_native_markdown_code_block() -> None:
    s = FormatSpec(
        tools=ToolsSpec(
            format="json_native",
            code_block_marker="Action:",
            code_block_language="json",
            name_field="tool_name",
            args_field="parameters",
            array_wrapped=True,
        )
    )
    text = 'Action:\n```json\n[{"tool_name": "f", "parameters": {"a": 1}}]\n```'
    assert calls(s, text) == [("f", {"a": 1}, "")]
    assert content(s, text) == ""


def test_json_native_without_markers_needs_a_name_first() -> None:
    s = FormatSpec(tools=ToolsSpec(format="json_native", args_field="parameters", call_separator=";"))
    text = '{"name": "f", "parameters": {"q": 1}}; {"name": "g", "parameters": {}}'
    assert calls(s, text) == [("f", {"q": 1}, ""), ("g", {}, "")]
    assert content(s, 'Use {"a": 1} here') == 'Use {"a": 1} here'


# ------------------------------------------------------------------------------------------ tag_with_json


def test_tag_with_json_parallel_calls() -> None:
    text = (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜>\n'
        "<｜tool▁call▁begin｜>g<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )
    assert calls(DEEPSEEK_V31, text) == [("f", {"a": 1}, ""), ("g", {}, "")]


def test_tag_with_json_section_without_call_marker_is_content() -> None:
    text = '<｜tool▁calls▁begin｜>f<｜tool▁sep｜>{"x":1}<｜tool▁calls▁end｜>'
    assert calls(DEEPSEEK_V31, text) == [] and content(DEEPSEEK_V31, text) == text


def test_tag_with_json_cut_off_arguments_are_closed_by_the_closing_marker() -> None:
    r = parse(
        DEEPSEEK_V31, '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": "b"<｜tool▁call▁end｜>'
    )
    assert [(c.name, c.arguments) for c in r.message.tool_calls] == [("f", '{"a": "b"}')]
    assert "W-ARGS-REPAIRED" in [d.code for d in r.diagnostics]


def test_tag_with_json_invalid_arguments_drop_the_call_and_keep_its_siblings() -> None:
    text = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{a: b}<｜tool▁call▁end｜>"
        '<｜tool▁call▁begin｜>g<｜tool▁sep｜>{"c": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    r = parse(DEEPSEEK_V31, text)
    assert [c.name for c in r.message.tool_calls] == ["g"]
    assert "E-CALL-SCHEMA" in [d.code for d in r.diagnostics]


def test_kimi_ids_come_from_the_output_through_the_function_namespace() -> None:
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>"
        '{"city": "X"}<|tool_call_end|><|tool_call_begin|>functions.f:1<|tool_call_argument_begin|>{}'
        "<|tool_call_end|><|tool_calls_section_end|>"
    )
    assert calls(KIMI, text) == [
        ("get_weather", {"city": "X"}, "functions.get_weather:0"),
        ("f", {}, "functions.f:1"),
    ]


def test_mistral_name_then_json_with_or_without_args_marker() -> None:
    assert calls(MISTRAL_V11, '[TOOL_CALLS]f[ARGS]{"a": 1}[TOOL_CALLS]g{"b": 2}') == [
        ("f", {"a": 1}, ""),
        ("g", {"b": 2}, ""),
    ]
    assert content(MISTRAL_V11, 'hi{hi[TOOL_CALLS]f{"a": 1}') == "hi{hi"


def test_deepseek_r1_json_fence_around_arguments() -> None:
    # DeepSeek R1 shares V3.1's section and call markers; the name comes after `function<｜tool▁sep｜>`.
    s = FormatSpec(tools=replace(DEEPSEEK_V31.tools, name_prefix="function<｜tool▁sep｜>", name_suffix="\n"))
    text = (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": 1}\n```'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )
    assert calls(s, text) == [("f", {"a": 1}, "")]


@pytest.mark.parametrize(
    ("position", "text"),
    [
        ("pre_func_name", "<call>[ID]c-1[/ID]<fn=f>{}</call>"),
        ("between_func_and_args", "<call><fn=f>[ID]c-1[/ID]{}</call>"),
        ("post_args", "<call><fn=f>{}[ID]c-1[/ID]</call>"),
    ],
)
def test_call_ids_in_every_position(position: str, text: str) -> None:
    s = FormatSpec(
        tools=ToolsSpec(
            format="tag_with_json",
            call_start="<call>",
            call_end="</call>",
            name_prefix="<fn=",
            name_suffix=">",
            id_position=position,
            id_prefix="[ID]",
            id_suffix="[/ID]",
        )
    )
    assert calls(s, text) == [("f", {}, "c-1")]


def test_no_id_is_invented_when_the_format_has_none() -> None:
    assert calls(HERMES, '<tool_call>{"name": "f", "arguments": {}}</tool_call>')[0][2] == ""


# ------------------------------------------------------------------------------------------ tag_with_tagged
def coder_call(name: str, **values: str) -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in values.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def test_tagged_values_are_typed_by_the_schema() -> None:
    t = Tool(
        "f",
        parameters={
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "n": {"type": "integer"},
                "x": {"type": "number"},
                "b": {"type": "boolean"},
                "o": {"type": "object"},
                "a": {"type": "array"},
                "z": {"type": ["string", "null"]},
            },
        },
    )
    text = coder_call("f", s="5123123", n="42", x="-3.5", b="True", o='{"k": [1]}', a="[1, 2]", z="null")
    assert calls(CODER, text, [t]) == [
        ("f", {"s": "5123123", "n": 42, "x": -3.5, "b": True, "o": {"k": [1]}, "a": [1, 2], "z": None}, "")
    ]


def test_tagged_string_values_lose_exactly_one_newline_on_each_side() -> None:
    t = tool("f", code={"type": "string"})
    text = coder_call("f", code="\n  def f():\n      pass\n")
    assert calls(CODER, text, [t])[0][1] == {"code": "\n  def f():\n      pass\n"}


def test_tagged_values_without_a_schema_stay_strings_by_default() -> None:
    # No tools in the request: nothing types the values (issue 3: "typed by the tool's JSON schema").
    assert calls(CODER, coder_call("f", a="1", b="hello", c="[1]"))[0][1] == {
        "a": "1",
        "b": "hello",
        "c": "[1]",
    }
    # A parameter the schema does not declare is untyped too.
    got = calls(CODER, coder_call("f", n="2", extra="3"), [tool("f", n={"type": "integer"})])[0][1]
    assert got == {"n": 2, "extra": "3"}


def test_tagged_values_without_a_schema_are_json_when_they_parse_under_the_json_policy() -> None:
    got = calls(CODER, coder_call("f", a="1", b="hello", c="[1]"), untyped_values="json")[0][1]
    assert got == {"a": 1, "b": "hello", "c": [1]}


def test_tagged_arguments_json_uses_openai_separators() -> None:
    r = parse(CODER, coder_call("f", a="x", b="2"), [tool("f", a={"type": "string"}, b={"type": "integer"})])
    assert r.message.tool_calls[0].arguments == '{"a": "x", "b": 2}'


def test_tagged_call_without_arguments() -> None:
    assert calls(CODER, "<tool_call>\n<function=f>\n</function>\n</tool_call>") == [("f", {}, "")]


def test_glm_style_name_then_key_value_tags() -> None:
    text = (
        "<tool_call>f\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>"
        "<tool_call>g</tool_call>"
    )
    assert calls(GLM, text) == [("f", {"city": "Beijing"}, ""), ("g", {}, "")]


def test_minimax_several_invokes_in_one_block() -> None:
    s = FormatSpec(
        tools=ToolsSpec(
            format="tag_with_tagged",
            section_start="<minimax:tool_call>\n",
            section_end="</minimax:tool_call>",
            name_prefix='<invoke name="',
            name_suffix='">\n',
            func_close="</invoke>\n",
            arg_name_prefix='<parameter name="',
            arg_value_prefix='">',
            arg_value_suffix="</parameter>\n",
        )
    )
    text = (
        '<minimax:tool_call><invoke name="a"><parameter name="x">1</parameter></invoke>'
        '<invoke name="b"><parameter name="y">q</parameter></invoke></minimax:tool_call>'
    )
    assert calls(s, text) == [("a", {"x": "1"}, ""), ("b", {"y": "q"}, "")]


def test_dsml_string_attribute_and_json_body() -> None:
    s = FormatSpec(
        tools=ToolsSpec(
            format="tag_with_tagged",
            section_start="<｜DSML｜function_calls>\n",
            section_end="</｜DSML｜function_calls>",
            name_prefix='<｜DSML｜invoke name="',
            name_suffix='">\n',
            func_close="</｜DSML｜invoke>\n",
            arg_name_prefix='<｜DSML｜parameter name="',
            arg_name_suffix=">",
            arg_value_suffix="</｜DSML｜parameter>\n",
        )
    )
    text = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n'
        '<｜DSML｜parameter name="n" string="false">10</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="s" string="true">10</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
        '<｜DSML｜invoke name="g">\n{"a": 1}\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'
    )
    assert calls(s, text, [tool("f", n={"type": "integer"}, s={"type": "string"}), tool("g")]) == [
        ("f", {"n": 10, "s": "10"}, ""),
        ("g", {"a": 1}, ""),
    ]


# ------------------------------------------------------------------------------------------ pythonic
PY = FormatSpec(
    tools=ToolsSpec(format="pythonic", section_start="<|tool_call_start|>", section_end="<|tool_call_end|>")
)


def test_pythonic_list_with_python_literals() -> None:
    text = "[f(a='x', b=[1, 2], c={'k': None}, d=True), g()]"
    assert calls(PY, text) == [("f", {"a": "x", "b": [1, 2], "c": {"k": None}, "d": True}, ""), ("g", {}, "")]


def test_pythonic_inside_wrapper_markers_after_content() -> None:
    text = 'Let me check.<|tool_call_start|>[get_time(city="Paris")]<|tool_call_end|>'
    assert calls(PY, text) == [("get_time", {"city": "Paris"}, "")]
    assert content(PY, text) == "Let me check."


def test_pythonic_value_json_cannot_hold_drops_only_that_call() -> None:
    r = parse(PY, "[bad(x=b'z'), calc(x=1e999), ok(y=1)]")
    assert [c.name for c in r.message.tool_calls] == ["ok"]


def test_pythonic_brackets_in_prose_stay_content() -> None:
    assert content(PY, "see [1] and [note(s)] here", [tool("f")]) == "see [1] and [note(s)] here"


# ------------------------------------------------------------------------------------------ recipient / tools
def test_functionary_recipients_route_content_and_calls() -> None:
    s = FormatSpec(tools=ToolsSpec(format="recipient", call_start=">>>"))
    text = '>>>all\nLet me look.>>>get_weather\n{"city": "X"}'
    assert calls(s, text) == [("get_weather", {"city": "X"}, "")]
    assert content(s, text) == "Let me look."


def test_calls_to_tools_not_in_the_request_are_ignored_with_a_diagnostic() -> None:
    text = coder_call("nope", a="1")
    r = parse(CODER, text, [tool("f")])
    assert r.message.tool_calls == () and "E-CALL-SCHEMA" in [d.code for d in r.diagnostics]
    kept = parse(CODER, text, [tool("f")], ParseOptions(check_tool_names=False))
    assert [c.name for c in kept.message.tool_calls] == ["nope"]


def test_parse_tools_false_keeps_calls_as_content() -> None:
    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    r = parse(HERMES, text, options=ParseOptions(parse_tools=False))
    assert r.message.content == text and r.message.tool_calls == ()


def test_schema_mismatch_is_reported_but_the_call_kept() -> None:
    r = parse(
        HERMES,
        '<tool_call>{"name": "f", "arguments": {"n": "x"}}</tool_call>',
        [tool("f", n={"type": "integer"})],
    )
    assert [c.name for c in r.message.tool_calls] == ["f"]
    assert any(d.code == "E-CALL-SCHEMA" and d.severity == "info" for d in r.diagnostics)
