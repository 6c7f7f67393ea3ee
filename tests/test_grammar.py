"""Grammar building: what each tool choice enforces, which strings the grammars accept, clear errors.

Acceptance is checked with xgrammar's own matcher on strings (``accept_string``), with a tokenizer-free
compile, so these tests need no model and no tokenizer.  The expected strings are written by hand from each
family's published format.
"""

from __future__ import annotations

import json

import pytest
import xgrammar as xgr

from workbench.runtime.chat import Tool
from workbench.runtime.grammar import GrammarError, build_grammar
from workbench.runtime.grammar.elements import json_schema_ebnf
from workbench.runtime.spec import FormatSpec, ToolsSpec
from workbench.testing.reference_specs import DEEPSEEK_V31_LIKE, HARMONY, MISTRAL_LIKE, QWEN3_LIKE, XML_TAGGED

WEATHER = Tool(
    "get_weather",
    "Get the weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 12},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        "required": ["city"],
    },
)
SEARCH = Tool("search", "", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})


def accepts(grammar_json: str, text: str | bytes) -> bool:
    """Whether the grammar accepts ``text`` as a complete output (byte-level, no tokenizer)."""
    info = xgr.TokenizerInfo([])
    compiled = xgr.GrammarCompiler(info).compile_structural_tag(grammar_json)
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return matcher.accept_string(text) and matcher.is_completed()


QWEN_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'


@pytest.mark.parametrize(
    ("spec", "good", "bad"),
    [
        (
            QWEN3_LIKE,
            QWEN_CALL,
            '<tool_call>\n{"name": "get_weather", "arguments": {"days": 3}}\n</tool_call>',
        ),
        (
            DEEPSEEK_V31_LIKE,
            '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Rome"}'
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"town": "Rome"}'
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        ),
        (
            MISTRAL_LIKE,
            '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "a1B2c3D4e"}]',
            '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]',
        ),
        (
            XML_TAGGED,
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n"
            "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>",
            "<tool_call>\n<function=get_weather>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>",
        ),
        (
            HARMONY,
            '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Kyiv"}'
            "<|call|>",
            '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": 5}<|call|>',
        ),
    ],
    ids=["qwen3", "deepseek-v3.1", "mistral", "xml-tagged", "harmony"],
)
def test_required_grammar_accepts_the_family_format_and_rejects_schema_violations(
    spec: FormatSpec, good: str, bad: str
) -> None:
    plan = build_grammar(spec, [WEATHER], tool_choice="required", reasoning=False, parallel=False)
    assert plan.kind == "structural_tag"
    assert accepts(plan.text, good)
    assert not accepts(plan.text, bad)


def test_json_arguments_have_no_free_whitespace_by_default() -> None:
    plan = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=False, parallel=False)
    spaced = QWEN_CALL.replace('{"city": "Paris"', '{ "city" :  "Paris"')
    assert not accepts(plan.text, spaced)
    loose = build_grammar(
        QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=False, parallel=False, any_whitespace=True
    )
    assert accepts(loose.text, spaced)


def test_length_bounded_strings_cannot_hold_raw_control_characters() -> None:
    # xgrammar's own grammar for maxLength strings lets a raw tab through (invalid JSON); ours must not.
    plan = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=False, parallel=False)
    assert not accepts(plan.text, QWEN_CALL.replace("Paris", "Pa\tris"))
    assert "\\x1f" in json_schema_ebnf({"type": "string", "maxLength": 3})


def test_strings_cannot_hold_surrogate_code_points() -> None:
    # xgrammar takes the 3-byte form of U+D800 as a character; it is not UTF-8 (Python decodes it to three
    # replacement characters, so a maxLength that xgrammar counted as kept is broken).
    surrogate = QWEN_CALL.encode().replace(b"Paris", b"Pa\xed\xa0\x80ris")
    plan = build_grammar(
        QWEN3_LIKE, [WEATHER, SEARCH], tool_choice="required", reasoning=False, parallel=False
    )
    assert accepts(plan.text, QWEN_CALL.encode().replace(b"Paris", "Pa\u20acris".encode()))
    assert not accepts(plan.text, surrogate)
    search = b'<tool_call>\n{"name": "search", "arguments": {"q": "a\xed\xa0\x80"}}\n</tool_call>'
    assert not accepts(plan.text, search)  # unbounded strings too
    tagged = build_grammar(XML_TAGGED, [WEATHER], tool_choice="required", reasoning=False, parallel=False)
    call = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n</function>\n</tool_call>"
    )
    assert accepts(tagged.text, call)
    assert not accepts(tagged.text, call.encode().replace(b"Lima", b"Li\xed\xa0\x80ma"))


def test_named_tool_choice_forces_that_tool_only() -> None:
    plan = build_grammar(QWEN3_LIKE, [WEATHER, SEARCH], tool_choice="search", reasoning=False)
    assert plan.tools == ("search",)
    assert accepts(plan.text, '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>')
    assert not accepts(plan.text, QWEN_CALL)


def test_parallel_calls_repeat_only_when_allowed() -> None:
    two = QWEN_CALL + "\n" + QWEN_CALL
    parallel = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=False, parallel=True)
    single = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=False, parallel=False)
    assert accepts(parallel.text, two)
    assert not accepts(single.text, two)
    assert accepts(single.text, QWEN_CALL)


def test_auto_engages_at_the_trigger_and_none_forbids_it() -> None:
    auto = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="auto", reasoning=False)
    assert auto.trigger == "<tool_call>" and auto.answer is None and auto.section is not None
    assert auto.text == auto.section and accepts(auto.section, QWEN_CALL)
    none = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="none", reasoning=False)
    assert none.answer is not None
    assert accepts(none.answer, "Just text, no calls.")
    assert not accepts(none.answer, "Sure: " + QWEN_CALL)


def test_reasoning_gate_follows_the_prompt() -> None:
    plan = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=True, thinking_opened=False)
    assert plan.reasoning is not None and not plan.reasoning.starts_inside
    # Before the model opens its reasoning, it may either open it or answer with the forced call.
    assert plan.lead is not None and accepts(plan.lead, "<think>") and accepts(plan.lead, QWEN_CALL)
    opened = build_grammar(
        QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=True, thinking_opened=True
    )
    assert opened.reasoning is not None and opened.reasoning.starts_inside and opened.lead is None
    assert build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=False).reasoning is None


def test_harmony_reenters_the_assistant_role_only_after_reasoning() -> None:
    call = (
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Oslo"}<|call|>'
    )
    after = build_grammar(HARMONY, [WEATHER], tool_choice="required", reasoning=True, thinking_opened=False)
    assert after.answer is not None and accepts(after.answer, "<|start|>assistant" + call)
    assert after.lead is not None and accepts(after.lead, call)
    assert not accepts(after.lead, "<|start|>assistant" + call)


def test_tagged_arguments_follow_schema_order_with_optional_parameters() -> None:
    plan = build_grammar(XML_TAGGED, [WEATHER], tool_choice="required", reasoning=False, parallel=False)
    head = "<tool_call>\n<function=get_weather>\n"
    tail = "</function>\n</tool_call>"
    city = "<parameter=city>\nLima\n</parameter>\n"
    unit = "<parameter=unit>\ncelsius\n</parameter>\n"
    assert accepts(plan.text, head + city + unit + tail)
    assert not accepts(plan.text, head + city + "<parameter=unit>\nkelvin\n</parameter>\n" + tail)
    assert not accepts(plan.text, head + unit + city + tail)


def test_tagged_arguments_with_a_separator_put_it_only_between_present_parameters() -> None:
    spec = FormatSpec(
        tools=ToolsSpec(
            format="tag_with_tagged",
            call_start="<call>",
            call_end="</call>",
            name_prefix="<name>",
            name_suffix="</name>",
            arg_name_prefix="<",
            arg_name_suffix=">",
            arg_value_suffix="</v>",
            arg_separator=";",
        )
    )
    tool = Tool(
        "f",
        "",
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
            "required": ["c"],
        },
    )
    plan = build_grammar(spec, [tool], tool_choice="required", reasoning=False)
    assert accepts(plan.text, "<call><name>f</name><b>2</v>;<c>3</v></call>")
    assert accepts(plan.text, "<call><name>f</name><c>3</v></call>")
    assert not accepts(plan.text, "<call><name>f</name>;<c>3</v></call>")
    assert not accepts(plan.text, "<call><name>f</name><a>1</v></call>")


@pytest.mark.parametrize(
    ("json_literals", "good", "bad"),
    [
        (False, ["[f(ok=True, n=3)]", "[f(ok=False), f(ok=True)]"], ["[f(ok=true)]"]),
        # Llama 4's shape: every keyword value written with tojson (``ok=true``, ``x=null``); a grammar
        # forcing ``True`` masked the very text the template writes.
        (
            True,
            ["[f(ok=true, n=3)]", "[f(ok=false, x=null), f(ok=true)]"],
            ["[f(ok=True)]", "[f(ok=false, x=None)]"],
        ),
    ],
)
def test_pythonic_calls_use_the_templates_literals(
    json_literals: bool, good: list[str], bad: list[str]
) -> None:
    spec = FormatSpec(tools=ToolsSpec(format="pythonic", parallel=True, json_literals=json_literals))
    tool = Tool(
        "f",
        "",
        {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}, "x": {"type": "null"}},
            "required": ["ok"],
        },
    )
    plan = build_grammar(spec, [tool], tool_choice="required", reasoning=False)
    assert all(accepts(plan.text, text) for text in good)
    assert not any(accepts(plan.text, text) for text in bad)


def test_tagged_calls_carry_the_id_where_the_spec_writes_it() -> None:
    # ``[[invoke=NAME]]\n[[call_id]]ID[[/call_id]][[argument=KEY]]\nVALUE\n[[/argument]]\n[[/invoke]]``: the
    # parser reads the id and the arguments' opener; the grammar had neither, so it refused every call.
    spec = FormatSpec(
        tools=ToolsSpec(
            format="tag_with_tagged",
            call_start="[[invoke=",
            call_end="[[/invoke]]",
            name_suffix="]]\n",
            id_position="between_func_and_args",
            id_prefix="[[call_id]]",
            args_start="[[/call_id]]",
            arg_name_prefix="[[argument=",
            arg_name_suffix="]]\n",
            arg_value_suffix="\n[[/argument]]\n",
        )
    )
    plan = build_grammar(spec, [SEARCH], tool_choice="required", reasoning=False)
    call = (
        "[[invoke=search]]\n[[call_id]]Ab3dE5gH7[[/call_id]][[argument=q]]\nParis\n[[/argument]]\n[[/invoke]]"
    )
    assert accepts(plan.text, call)
    assert not accepts(plan.text, call.replace("[[call_id]]Ab3dE5gH7[[/call_id]]", ""))


def test_a_bare_pythonic_list_leaves_other_brackets_to_the_answer() -> None:
    # ``[get_weather(city="Paris")]`` with no section marker: only ``[`` and a tool's name announce a call,
    # so an answer may cite ``[1]`` or open with its own ``[ANSWER]`` (the tag refused both).
    from workbench.runtime.grammar.assembler import assemble
    from workbench.testing.fuzz_grammar import compile_tag, rejection

    spec = FormatSpec(tools=ToolsSpec(format="pythonic", parallel=True, array_wrapped=True))
    none = build_grammar(spec, [SEARCH], tool_choice="none", reasoning=False)
    assert accepts(none.text, "[ANSWER] see [1].")
    assert not accepts(none.text, '[search(q="x")]')
    tag = compile_tag(assemble(spec, [SEARCH], "auto"))
    assert rejection(tag, "[ANSWER] see [1].", []) == ""
    assert rejection(tag, 'Looking it up. [search(q="x")]', []) == ""
    assert rejection(tag, "[search(q=1)]", []) != ""  # a call is still held to its schema


def test_plan_text_is_a_structural_tag_and_its_ebnf_is_inspectable() -> None:
    plan = build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="required", reasoning=False)
    doc = json.loads(plan.text)
    assert doc["type"] == "structural_tag"
    assert "<tool_call>" in plan.ebnf()
    assert "tool_choice=required" in plan.describe()
    assert plan.to_dict()["answer"]["type"] == "structural_tag"


def test_unknown_tool_choice_is_a_clear_error() -> None:
    with pytest.raises(GrammarError, match=r"'get_wether' is not one of the tools \(get_weather\)"):
        build_grammar(QWEN3_LIKE, [WEATHER], tool_choice="get_wether")


def test_schema_xgrammar_cannot_compile_is_a_clear_error_naming_the_tool() -> None:
    bad = Tool(
        "lookbehind",
        "",
        {"type": "object", "properties": {"x": {"type": "string", "pattern": "(?<=a)b"}}, "required": ["x"]},
    )
    with pytest.raises(GrammarError, match=r"tool 'lookbehind' cannot be compiled by xgrammar: .*Lookbehind"):
        build_grammar(QWEN3_LIKE, [bad], tool_choice="required")


def test_forcing_a_call_needs_tools_and_a_tool_format() -> None:
    with pytest.raises(GrammarError, match="needs at least one tool"):
        build_grammar(QWEN3_LIKE, [], tool_choice="required")
    with pytest.raises(GrammarError, match="template has no tool calls"):
        build_grammar(FormatSpec(), [WEATHER], tool_choice="required")
    assert build_grammar(FormatSpec(), [WEATHER], tool_choice="auto").kind == "none"
