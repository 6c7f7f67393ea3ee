"""One value encoding: what a family's sample writer writes, its grammar accepts and its parser reads back.

For every format family and every kind of parameter schema, a value the schema allows is written by the
family's sample writer (:func:`workbench.runtime.parsing.samples.write_calls`, which follows
:mod:`workbench.runtime.values`), fed to the family's grammar (xgrammar's matcher, byte-level, no tokenizer,
as ``tests/test_grammar.py`` does) and parsed back: the arguments must come back equal.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
import xgrammar as xgr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.runtime.chat import Tool
from workbench.runtime.formats import names as format_names
from workbench.runtime.grammar import build_grammar
from workbench.runtime.parsing import parse
from workbench.runtime.parsing.samples import SampleCall, write_calls
from workbench.runtime.spec import ArgVariant, CallPattern, FormatSpec, PromptSpec, ToolsSpec, ValueEncoding
from workbench.runtime.values import convert_tagged, write_value, written_raw
from workbench.testing.reference_specs import (
    DEEPSEEK_V31_LIKE,
    FUNCTIONARY_V32_LIKE,
    HARMONY,
    QWEN3_LIKE,
    XML_TAGGED,
)

# The pythonic-calls project template, as the analyzer reads it (LFM2-style markers around a Python list).
PYTHONIC = FormatSpec(
    tools=ToolsSpec(
        format="pythonic",
        section_start="<|tool_call_start|>",
        section_end="<|tool_call_end|>",
        call_separator=", ",
        array_wrapped=True,
        parallel=True,
    ),
    prompt=PromptSpec(generation_prompt="<|im_start|>assistant\n"),
    eos_token="<|im_end|>",
    end_markers=("<|im_end|>",),
)

# Call patterns (spec v2), one per kind of arguments, as templates/new-formats/ document them.
_NOT_STRING = ("integer", "number", "boolean", "null", "array", "object")
PATTERN_TAGGED = FormatSpec(
    tools=ToolsSpec(
        format="call_pattern",
        section_start="<calls>",
        section_end="</calls>",
        call_start='<call name="',
        call_end="</call>",
        pattern=CallPattern(
            call=("$name", '">', "$args"),
            args="tagged",
            arguments=(
                ArgVariant(("string",), ('<arg name="', "$key", '" text="yes">', "$value", "</arg>"), "raw"),
                ArgVariant(_NOT_STRING, ('<arg name="', "$key", '" text="no">', "$value", "</arg>"), "json"),
            ),
        ),
    )
)
PATTERN_OBJECT = FormatSpec(
    tools=ToolsSpec(
        format="call_pattern",
        call_start="<|tool_call|>call:",
        call_end="<|/tool_call|>",
        pattern=CallPattern(
            call=("$name", "$args"),
            args="object",
            encoding=ValueEncoding("<|q|>", "<|q|>", "none", "", ":", ","),
        ),
    )
)
PATTERN_JSON = FormatSpec(
    tools=ToolsSpec(
        format="call_pattern",
        call_start='<|begin|>invoke fn="',
        call_end="<|end|>invoke",
        pattern=CallPattern(call=("$name", '" n="', "$index", '"<|body|>', "$args"), index_base=1),
    )
)

#: Arguments as elements named by their key, the closing tag naming it again (Anthropic's XML, MiniMax-M3).
PATTERN_KEYED = FormatSpec(
    tools=ToolsSpec(
        format="call_pattern",
        section_start="<function_calls>\n",
        section_end="</function_calls>",
        call_start="<invoke>\n<tool_name>",
        call_end="</parameters>\n</invoke>\n",
        pattern=CallPattern(
            call=("$name", "</tool_name>\n<parameters>\n", "$args"),
            args="tagged",
            arguments=(
                ArgVariant(("string",), ("<", "$key", ">", "$value", "</", "$key", ">\n"), "raw"),
                ArgVariant(_NOT_STRING, ("<", "$key", ">", "$value", "</", "$key", ">\n"), "json"),
            ),
        ),
    )
)
#: A header that names the function, then a JSON body that names it again (Inkling).
PATTERN_NAMED_TWICE = FormatSpec(
    tools=ToolsSpec(
        format="call_pattern",
        call_start="<|message_model|>",
        call_end="}<|end_message|>",
        pattern=CallPattern(
            call=("$name", '<|content_invoke_tool_json|>{"name":"', "$name", '","args":', "$args")
        ),
    )
)

#: One spec per family (every registered family is covered: see the first test); a family with several
#: kinds has one entry per kind (``family/kind``).
FAMILY_SPECS: dict[str, FormatSpec] = {
    "json_native": QWEN3_LIKE,
    "tag_with_json": DEEPSEEK_V31_LIKE,
    "tag_with_tagged": XML_TAGGED,
    "harmony": HARMONY,
    "pythonic": PYTHONIC,
    "recipient": FUNCTIONARY_V32_LIKE,
    "call_pattern": PATTERN_TAGGED,
    "call_pattern/object": PATTERN_OBJECT,
    "call_pattern/keyed": PATTERN_KEYED,
    "call_pattern/named_twice": PATTERN_NAMED_TWICE,
    "call_pattern/json": PATTERN_JSON,
}

# Text a raw value can hold: no markup (the end marker starts with "<"), no line breaks (a raw value loses
# one newline of padding on each side), nothing a JSON or Python string would need to escape unusually.
_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="<>\n\r"),
    max_size=12,
)
_SCALAR = st.one_of(st.integers(-(10**6), 10**6), _TEXT, st.booleans(), st.none())
_NUMBER = st.one_of(
    st.integers(-(10**9), 10**9), st.floats(allow_nan=False, allow_infinity=False, width=32, min_value=-1e9)
)

#: schema kind -> (schema, values it allows)
SCHEMAS: dict[str, tuple[dict[str, Any], st.SearchStrategy[Any]]] = {
    "string": ({"type": "string"}, _TEXT),
    "[string]": ({"type": ["string"]}, _TEXT),
    "integer": ({"type": "integer"}, st.integers(-(10**9), 10**9)),
    "number": ({"type": "number"}, _NUMBER),
    "boolean": ({"type": "boolean"}, st.booleans()),
    "null": ({"type": "null"}, st.none()),
    "array": ({"type": "array"}, st.lists(_SCALAR, max_size=3)),
    "object": ({"type": "object"}, st.dictionaries(st.text("abcxyz_", min_size=1, max_size=5), _SCALAR)),
    # Untyped values are strings under the default policy (``ParseOptions.untyped_values="string"``).
    "untyped": ({"description": "anything"}, _TEXT),
}


@cache
def _compiled(family: str, kind: str) -> Any:
    spec, tool = FAMILY_SPECS[family], _tool(kind)
    # The answer after reasoning: Harmony's sample calls re-open the assistant role, as after an analysis
    # message, which the answer grammar allows there.
    plan = build_grammar(spec, [tool], tool_choice="required", parallel=False)
    return xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(plan.text)


def _tool(kind: str) -> Tool:
    schema = SCHEMAS[kind][0]
    return Tool("f", "", {"type": "object", "properties": {"v": schema}, "required": ["v"]})


def _accepts(compiled: Any, text: str) -> bool:
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return bool(matcher.accept_string(text)) and bool(matcher.is_completed())


def test_every_registered_family_is_covered() -> None:
    assert set(format_names()) == {name.split("/")[0] for name in FAMILY_SPECS}


@pytest.mark.parametrize("kind", list(SCHEMAS))
@pytest.mark.parametrize("family", list(FAMILY_SPECS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_written_values_are_accepted_by_the_grammar_and_parse_back_equal(
    family: str, kind: str, data: st.DataObject
) -> None:
    spec, tool = FAMILY_SPECS[family], _tool(kind)
    value = data.draw(SCHEMAS[kind][1], label="value")
    text = write_calls(spec, [SampleCall("f", {"v": value})], tools=[tool])
    # The grammar and the parser both start after what the generation prompt already wrote.
    prefix = spec.prompt.output_prefix
    assert text.startswith(prefix)
    output = text[len(prefix) :]
    assert _accepts(_compiled(family, kind), output), f"grammar rejects {output!r}"
    result = parse(spec, output, tools=[tool])
    assert [c.name for c in result.message.tool_calls] == ["f"], result.diagnostics
    assert json.loads(result.message.tool_calls[0].arguments) == {"v": value}


@pytest.mark.parametrize(
    ("schema", "raw"),
    [
        ({"type": "string"}, True),
        ({"type": ["string"]}, True),
        ({"type": ["string", "null"]}, True),
        ({"enum": ["a", "b"]}, True),
        ({}, True),
        ({"type": "integer"}, False),
        ({"type": "object"}, False),
    ],
)
def test_a_string_is_written_raw_exactly_where_the_schema_allows_a_string(
    schema: dict[str, Any], raw: bool
) -> None:
    assert written_raw(schema) is raw
    assert write_value("Paris", schema) == ("Paris" if raw else '"Paris"')
    assert convert_tagged(write_value("Paris", schema), schema) == "Paris"


def test_a_list_of_strings_parameter_is_raw_in_grammar_and_parser_alike() -> None:
    """The disagreement this module removed: the grammar forced ``"Paris"`` (quoted) for a ``["string"]``
    tagged parameter while the parser read the quotes as part of the value."""
    tool = Tool("f", "", {"type": "object", "properties": {"v": {"type": ["string"]}}, "required": ["v"]})
    plan = build_grammar(XML_TAGGED, [tool], tool_choice="required", reasoning=False)
    compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(plan.text)
    call = "<tool_call>\n<function=f>\n<parameter=v>\nParis\n</parameter>\n</function>\n</tool_call>"
    assert _accepts(compiled, call)
    assert json.loads(parse(XML_TAGGED, call, tools=[tool]).message.tool_calls[0].arguments) == {"v": "Paris"}


def test_a_call_that_names_two_functions_is_no_call() -> None:
    """The header's name and the body's must agree: a call naming two functions is not read as either."""
    tools = [Tool(name=n, parameters={"type": "object"}) for n in ("get_weather", "get_time")]
    header = "<|message_model|>get_weather<|content_invoke_tool_json|>"
    good = header + '{"name":"get_weather","args":{}}<|end_message|>'
    bad = good.replace('"name":"get_weather"', '"name":"get_time"')
    assert [c.name for c in parse(PATTERN_NAMED_TWICE, good, tools).message.tool_calls] == ["get_weather"]
    assert not parse(PATTERN_NAMED_TWICE, bad, tools).message.tool_calls
