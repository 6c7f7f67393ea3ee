"""Hostile tool schemas (issue 13): backtracking regexes, unresolvable $refs, huge enums.

The schema comes with the request, so parsing and grammar building must not trust it: a regex is run with
a time bound, a ``$ref`` that does not resolve is named in a diagnostic (parse) or an error (grammar), and a
grammar is not built from more enum values than xgrammar compiles in reasonable time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from workbench.runtime.chat import Tool
from workbench.runtime.grammar import GrammarError, build_grammar
from workbench.runtime.grammar.tool_schemas import MAX_ENUM_VALUES, check_tool_schemas
from workbench.runtime.parsing import parse, parse_events
from workbench.runtime.parsing.schema_check import unresolved_refs
from workbench.testing.reference_specs import HARMONY, QWEN3_LIKE

REPO = Path(__file__).resolve().parents[2]
EVIL = "a" * 30 + "!"  # 2^30 ways for ^(a+)+$ to fail with a backtracking engine


def _tool(params: dict[str, Any], name: str = "f") -> Tool:
    return Tool(name, parameters=params)


def _string_param(**extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"type": "string", **extra}}}


def _qwen_call(args: dict[str, Any], name: str = "f") -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"


def _codes_and_messages(spec: Any, text: str, tools: list[Tool]) -> list[tuple[str, str]]:
    one = parse(spec, text, tools)
    _events, streamed = parse_events(spec, [text[i : i + 7] for i in range(0, len(text), 7)], tools)
    assert streamed.message == one.message
    assert [d.code for d in streamed.diagnostics] == [d.code for d in one.diagnostics]
    assert [c.name for c in one.message.tool_calls] == ["f"] * len(one.message.tool_calls)
    return [(d.code, d.message) for d in one.diagnostics]


# --- regexes ------------------------------------------------------------------------------------------


def test_a_backtracking_pattern_does_not_hang_parse() -> None:
    # With jsonschema's own `re` this parse runs for minutes; run it in a child process with a deadline so
    # a regression fails instead of hanging the suite.
    params = json.dumps(_string_param(pattern="^(a+)+$"))
    code = f"""
import json
from workbench.runtime.chat import Tool
from workbench.testing.reference_specs import QWEN3_LIKE
from workbench.runtime.parsing import parse
r = parse(QWEN3_LIKE, {_qwen_call({"x": EVIL})!r}, [Tool("f", parameters=json.loads({params!r}))])
print(json.dumps([[d.code, d.message] for d in r.diagnostics]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=True
    )
    diags = json.loads(out.stdout)
    assert diags == [["E-CALL-SCHEMA", f"tool call 0 (f): {EVIL!r} does not match '^(a+)+$'"]]


@pytest.mark.parametrize(
    "params",
    [
        _string_param(pattern="^(a|a)+$"),  # slow even for the `regex` module: hits the time bound
        {"type": "object", "patternProperties": {"^(a|a)+$": {"type": "string"}}},
        {
            "type": "object",
            "properties": {},
            "patternProperties": {"^(a|a)+$": {}},
            "additionalProperties": False,
        },
    ],
)
def test_a_regex_that_runs_out_of_time_is_reported_once_and_not_retried(params: dict[str, Any]) -> None:
    key = "x" if params.get("properties") else EVIL
    text = _qwen_call({key: EVIL}) + _qwen_call({key: EVIL})
    diags = _codes_and_messages(QWEN3_LIKE, text, [_tool(params)])
    assert [c for c, _ in diags] == ["E-TOOL-SCHEMA"]
    assert "'^(a|a)+$' took over" in diags[0][1] and "not checked" in diags[0][1]


def test_ordinary_patterns_are_still_checked() -> None:
    tools = [_tool(_string_param(pattern="^[0-9]+$"))]
    assert _codes_and_messages(QWEN3_LIKE, _qwen_call({"x": "123"}), tools) == []
    diags = _codes_and_messages(QWEN3_LIKE, _qwen_call({"x": "12a"}), tools)
    assert diags == [("E-CALL-SCHEMA", "tool call 0 (f): '12a' does not match '^[0-9]+$'")]


def test_a_kept_verdict_belongs_to_its_schema_and_a_timeout_is_never_kept() -> None:
    """Verdicts are kept per (schema, arguments text): the same text under another schema gets that schema's
    verdict, every parse of a refused call reports it again, and a regex that ran out of time is run (and
    reported) again rather than remembered as a pass."""
    from workbench.runtime.parsing import schema_check

    digits, letters = [_tool(_string_param(pattern="^[0-9]+$"))], [_tool(_string_param(pattern="^[a-z]+$"))]
    call = _qwen_call({"x": "abc"})
    for _ in range(2):
        assert _codes_and_messages(QWEN3_LIKE, call, digits) == [
            ("E-CALL-SCHEMA", "tool call 0 (f): 'abc' does not match '^[0-9]+$'")
        ]
        assert _codes_and_messages(QWEN3_LIKE, call, letters) == []
    _bad, validator = schema_check.checked_validator(_string_param(pattern="^(a|a)+$"))
    text = json.dumps({"x": EVIL})
    for _ in range(2):
        with pytest.raises(schema_check.PatternTimeout):
            schema_check.first_error(validator, text, json.loads(text))


def test_pattern_properties_and_additional_properties_keep_their_meaning() -> None:
    params = {
        "type": "object",
        "properties": {"keep": {}},
        "patternProperties": {"^n_": {"type": "integer"}},
        "additionalProperties": False,
    }
    tools = [_tool(params)]
    assert _codes_and_messages(QWEN3_LIKE, _qwen_call({"keep": 1, "n_a": 2}), tools) == []
    assert [c for c, _ in _codes_and_messages(QWEN3_LIKE, _qwen_call({"n_a": "s"}), tools)] == [
        "E-CALL-SCHEMA"
    ]
    ((code, message),) = _codes_and_messages(QWEN3_LIKE, _qwen_call({"other": 1}), tools)
    assert code == "E-CALL-SCHEMA" and "'other'" in message


# --- $ref ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref", ["#/$defs/nothere", "#/properties/y", "https://example.invalid/s.json", "#bad"]
)
def test_an_unresolvable_ref_is_named_and_the_call_is_still_parsed(ref: str) -> None:
    params = {"type": "object", "$defs": {"c": {"type": "integer"}}, "properties": {"x": {"$ref": ref}}}
    one = parse(QWEN3_LIKE, _qwen_call({"x": EVIL}), [_tool(params)])
    assert not one.message.content  # before: the rest of the output ended up in the content
    assert [(c.name, c.arguments_value()) for c in one.message.tool_calls] == [("f", {"x": EVIL})]
    ((diag),) = one.diagnostics
    assert diag.code == "E-TOOL-SCHEMA" and repr(ref) in diag.message and "does not resolve" in diag.message


def test_a_harmony_call_with_an_unresolvable_ref() -> None:
    params = {"type": "object", "properties": {"x": {"$ref": "#/$defs/none"}}}
    text = '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"x": 1}<|call|>'
    one = parse(HARMONY, text, [_tool(params)])
    assert [(c.name, c.arguments_value()) for c in one.message.tool_calls] == [("f", {"x": 1})]
    assert [d.code for d in one.diagnostics] == ["E-TOOL-SCHEMA"]


def test_refs_that_resolve_are_followed() -> None:
    params = {
        "type": "object",
        "$defs": {"c": {"type": "integer"}},
        "properties": {"x": {"$ref": "#/$defs/c"}},
    }
    assert unresolved_refs(params) == []
    tools = [_tool(params)]
    assert _codes_and_messages(QWEN3_LIKE, _qwen_call({"x": 3}), tools) == []
    ((code, _),) = _codes_and_messages(QWEN3_LIKE, _qwen_call({"x": "s"}), tools)
    assert code == "E-CALL-SCHEMA"


def test_unresolved_refs_survives_a_deeply_nested_schema() -> None:
    schema: dict[str, Any] = {"$ref": "#/nowhere"}
    for _ in range(50_000):
        schema = {"items": schema}
    assert unresolved_refs(schema) == ["#/nowhere"]


# --- grammar building ---------------------------------------------------------------------------------


def test_grammar_building_refuses_an_unresolvable_ref_by_name() -> None:
    params = {"type": "object", "properties": {"x": {"$ref": "#/$defs/nothere"}}, "required": ["x"]}
    with pytest.raises(
        GrammarError, match=r"tool 'f': the schema's \$ref '#/\$defs/nothere' does not resolve"
    ):
        build_grammar(QWEN3_LIKE, [_tool(params)], tool_choice="required")


def test_grammar_building_refuses_a_huge_enum_at_once() -> None:
    params = _string_param(enum=[f"v{i}" for i in range(200_000)])
    with pytest.raises(GrammarError, match=r"200,000 enum values \(tool 'f': 200,000\); .* at most 4,096"):
        build_grammar(QWEN3_LIKE, [_tool(params)], tool_choice="required")


def test_the_enum_limit_counts_every_tool_of_the_request() -> None:
    half = MAX_ENUM_VALUES // 2
    ok = [
        _tool(_string_param(enum=list(range(half))), "a"),
        _tool(_string_param(enum=list(range(half))), "b"),
    ]
    check_tool_schemas(ok)
    over = [*ok, _tool({"type": "object", "properties": {"c": {"const": 1}}}, "c")]
    with pytest.raises(GrammarError, match=f"{MAX_ENUM_VALUES + 1:,} enum values"):
        check_tool_schemas(over)


def test_a_small_enum_still_builds() -> None:
    plan = build_grammar(QWEN3_LIKE, [_tool(_string_param(enum=["xval", "yval"]))], tool_choice="required")
    assert plan.kind == "structural_tag" and "xval" in plan.text and "yval" in plan.text


# --- shape and size, checked where a tool is read (issue 22, items 8 and 10) ------------------------------


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"x": node}}
    return node


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"type": "object", "properties": ["city"]}, "parameters.properties: expected an object of schemas"),
        ({"type": "object", "properties": {"a": 5}}, "parameters.properties.a: expected a schema"),
        ({"anyOf": {"type": "string"}}, "parameters.anyOf: expected a list of schemas"),
        ({"type": "object", "required": "a"}, "parameters.required: expected a list of property names"),
        ({"type": "array", "items": "string"}, "parameters.items: expected a schema"),
        ({"type": 5}, "parameters.type: expected a type name"),
        ({"enum": "abc"}, "parameters.enum: expected a list of values"),
        (_string_param(const="x" * 1_000_000), "a value of 1,000,000 characters"),
        (_string_param(enum=["ok", "y" * 20_000]), "enum[1]: a value of 20,000 characters"),
        (_deep(40), "nests more than 64 levels deep"),
        ({"enum": list(range(110_000))}, "more than 100,000 values"),
    ],
    ids=[
        "properties-list",
        "property-not-schema",
        "anyOf-object",
        "required-string",
        "items-string",
        "type-number",
        "enum-string",
        "const-1MB",
        "enum-value-20k",
        "depth",
        "values",
    ],
)
def test_a_tool_schema_of_the_wrong_shape_or_size_is_refused_where_it_is_read(
    params: dict[str, Any], words: str, tmp_path: Path
) -> None:
    from workbench.runtime.chat import ChatDataError, load_tools

    tools = [{"type": "function", "function": {"name": "f", "parameters": params}}]
    with pytest.raises(ChatDataError, match=words.replace("[", r"\[").replace("]", r"\]")):
        load_tools(tools)
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    output = tmp_path / "out.txt"
    output.write_text(_qwen_call({"city": "Paris"}), encoding="utf-8")
    args = ["parse", "--template", "chatml-think-tools", "--tools", str(path), str(output), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "E-INTERNAL" not in done.stderr, done.stderr


def test_sloppy_values_the_parser_does_not_read_are_not_refused() -> None:
    """A real test suite writes ``"type": "float"``; a draft-3 schema ``"required": true`` on a property."""
    from workbench.runtime.chat import load_tools

    params = {"type": "object", "properties": {"x": {"type": "float", "required": True}}, "required": ["x"]}
    assert load_tools([{"type": "function", "function": {"name": "f", "parameters": params}}])[0].name == "f"
