"""Parse policies where engines disagree, the engine profiles, and the gaps the conformance run found.

Every policy is checked one-shot and streamed per character (same message, text only ever grows), because
a policy that only works one-shot would break the streaming contract.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tests.spec_fixtures import CODER_NEWLINE_IN_VALUE_END, GLM, MISTRAL_V11
from tests.spec_fixtures import HERMES as HERMES_TOOLS_ONLY
from tests.spec_fixtures import KIMI as KIMI_NAMESPACED
from workbench.engines.policies import parse_options
from workbench.runtime.chat import Message, Tool
from workbench.runtime.parsing import ParseOptions, ParseResult, StreamParser, parse, parse_events
from workbench.runtime.parsing.tools_base import WEAK_HOLD_LIMIT
from workbench.runtime.spec import FormatSpec, PromptSpec, ToolsSpec

# ------------------------------------------------------------------------------------------ specs
HERMES = replace(HERMES_TOOLS_ONLY, end_markers=("<|im_end|>",))
LLAMA3 = FormatSpec(
    tools=ToolsSpec(format="json_native", args_field="parameters"), end_markers=("<|eot_id|>",)
)
PYTHONIC = FormatSpec(tools=ToolsSpec(format="pythonic"))
KIMI = FormatSpec(
    tools=ToolsSpec(
        format="tag_with_json",
        section_start="<|tool_calls_section_begin|>",
        section_end="<|tool_calls_section_end|>",
        call_start="<|tool_call_begin|>",
        call_end="<|tool_call_end|>",
        args_start="<|tool_call_argument_begin|>",
    )
)
STEP3 = FormatSpec(
    tools=ToolsSpec(
        format="tag_with_tagged",
        section_start="<｜tool_calls_begin｜>",
        section_end="<｜tool_calls_end｜>",
        call_start="<｜tool_call_begin｜>function<｜tool_sep｜>",
        call_end="<｜tool_call_end｜>",
        name_prefix='<steptml:invoke name="',
        name_suffix='">',
        func_close="</steptml:invoke>",
        arg_name_prefix='<steptml:parameter name="',
        arg_name_suffix='">',
        arg_value_suffix="</steptml:parameter>",
    )
)
# The tagged format here keeps the newline before </parameter> in the value end marker.
CODER = CODER_NEWLINE_IN_VALUE_END
HARMONY = FormatSpec(tools=ToolsSpec(format="harmony"), end_markers=("<|return|>",))


def both(spec: FormatSpec, text: str, tools: list[Tool] | None = None, **opts: Any) -> ParseResult:
    """Parse one-shot; check a per-character stream gives the same message and never retracts text."""
    options = opts.pop("options", None) or ParseOptions(**opts)
    one = parse(spec, text, tools, options)
    parser = StreamParser(spec, tools, options=options)
    before = Message(role="assistant")
    for ch in text:
        parser.feed(ch)
        now = parser.current()
        assert (now.content or "").startswith(before.content or "")
        before = now
    streamed = parser.finish()
    assert (streamed.message.content or "").startswith(before.content or "")
    assert streamed.message == one.message
    assert [d.code for d in streamed.diagnostics] == [d.code for d in one.diagnostics]
    return one


def calls_of(result: ParseResult) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in result.message.tool_calls]


def codes(result: ParseResult) -> list[str]:
    return [d.code for d in result.diagnostics]


def tool(name: str, **props: Any) -> Tool:
    return Tool(name, parameters={"type": "object", "properties": props})


# ------------------------------------------------------------------------------------------ options
def test_policy_values_are_validated() -> None:
    with pytest.raises(ValueError, match="unclosed_calls"):
        ParseOptions(unclosed_calls="maybe")
    with pytest.raises(ValueError, match="unknown engine"):
        parse_options("tgi")
    with pytest.raises(TypeError, match="no_such_switch"):
        parse_options("vllm", no_such_switch=True)


def test_engine_profiles_select_the_documented_policies() -> None:
    assert parse_options("workbench") == ParseOptions()
    assert parse_options("llama.cpp") == ParseOptions()
    vllm = parse_options("vllm")
    assert (vllm.check_tool_names, vllm.untyped_values, vllm.value_newlines) == (False, "string", "markers")
    assert (vllm.unclosed_calls, vllm.text_after_calls) == ("content", "drop")
    vllm_stream = parse_options("vllm", streaming=True)
    assert (vllm_stream.unclosed_calls, vllm_stream.text_after_calls) == ("keep", "content")
    sglang = parse_options("SGLang")
    assert (sglang.check_tool_names, sglang.untyped_values) == (True, "json")
    assert (sglang.space_before_calls, sglang.unclosed_calls) == ("strip_json", "content")
    assert parse_options("sglang", streaming=True).space_before_calls == "keep"


def test_engine_profiles_keep_the_request_switches() -> None:
    opts = parse_options("vllm", enable_thinking=False, untyped_values="json")
    assert opts.enable_thinking is False and opts.untyped_values == "json"
    assert opts.check_tool_names is False


# ------------------------------------------------------------------------------------------ tool names
def test_check_tool_names_off_keeps_calls_to_unrequested_tools() -> None:
    text = "<tool_call>get_time\n</tool_call>"
    assert calls_of(both(GLM, text, [tool("get_weather")])) == []
    assert calls_of(both(GLM, text, [tool("get_weather")], check_tool_names=False)) == [("get_time", {})]


def test_check_tool_names_applies_to_harmony_recipients() -> None:
    text = "<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{}<|call|>"
    assert calls_of(both(HARMONY, text, [tool("get_weather")])) == []
    kept = both(HARMONY, text, [tool("get_weather")], check_tool_names=False)
    assert calls_of(kept) == [("lookup", {})]


# ------------------------------------------------------------------------------------------ values
def test_untyped_tagged_values_stay_strings_unless_the_json_policy_is_chosen() -> None:
    text = "<tool_call>f\n<arg_key>days</arg_key>\n<arg_value>5</arg_value>\n</tool_call>"
    assert calls_of(both(GLM, text)) == [("f", {"days": "5"})]
    assert calls_of(both(GLM, text, untyped_values="json")) == [("f", {"days": 5})]
    # A schema type wins over either policy.
    assert calls_of(both(GLM, text, [tool("f", days={"type": "integer"})])) == [("f", {"days": 5})]


def test_value_newlines_strip_one_each_side_or_only_those_the_markers_carry() -> None:
    text = (
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="edit">'
        '<steptml:parameter name="old">return 1\n</steptml:parameter></steptml:invoke>'
        "<｜tool_call_end｜><｜tool_calls_end｜>"
    )
    assert calls_of(both(STEP3, text)) == [("edit", {"old": "return 1"})]
    assert calls_of(both(STEP3, text, value_newlines="markers")) == [("edit", {"old": "return 1\n"})]
    # Qwen3-Coder's markers carry a newline on both sides: one is removed under either policy.
    coder = "<tool_call>\n<function=f>\n<parameter=code>\n\nx = 1\n\n</parameter>\n</function>\n</tool_call>"
    for policy in ("strip", "markers"):
        assert calls_of(both(CODER, coder, value_newlines=policy)) == [("f", {"code": "\nx = 1\n"})]


# ------------------------------------------------------------------------------------------ unclosed calls
def test_unclosed_call_is_kept_by_default_and_becomes_content_under_the_content_policy() -> None:
    text = "Sure. <tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"
    kept = both(GLM, text)
    assert calls_of(kept) == [("get_weather", {"city": "Paris"})]
    assert kept.message.content == "Sure. "
    demoted = both(GLM, text, unclosed_calls="content")
    assert demoted.message.tool_calls == ()
    assert (
        demoted.message.content
        == "Sure. <tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"
    )
    assert "E-STREAM-TRUNCATED" in codes(demoted)


def test_unclosed_policy_keeps_the_finished_siblings_of_a_section() -> None:
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>a<|tool_call_argument_begin|>{}<|tool_call_end|>"
        '<|tool_call_begin|>b<|tool_call_argument_begin|>{"x": 1'
    )
    r = both(KIMI, text, unclosed_calls="content")
    assert calls_of(r) == [("a", {})]
    assert r.message.content == '<|tool_call_begin|>b<|tool_call_argument_begin|>{"x": 1'


def test_unclosed_policy_leaves_formats_without_closing_markers_alone() -> None:
    # A Mistral v11 call has no closing marker: cut off inside its JSON it keeps its text (vLLM does too).
    text = '[TOOL_CALLS]bash[ARGS]{"command": "ls'
    r = both(MISTRAL_V11, text, unclosed_calls="content")
    assert [c.name for c in r.message.tool_calls] == ["bash"]
    assert r.message.tool_calls[0].arguments == '{"command": "ls'


def test_unclosed_policy_does_not_touch_a_call_followed_by_more_text() -> None:
    text = "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\nThen more."
    r = both(GLM, text, unclosed_calls="content")
    assert calls_of(r) == [("f", {"a": "1"})]
    assert r.message.content == "\nThen more."  # whitespace after a section is content when text follows


# ------------------------------------------------------------------------------------------ text after calls
def test_text_after_calls_is_kept_by_default_and_dropped_under_the_drop_policy() -> None:
    text = 'Before. <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call> After.'
    assert both(HERMES, text).message.content == "Before.  After."
    dropped = both(HERMES, text, text_after_calls="drop")
    assert dropped.message.content == "Before. "
    assert calls_of(dropped) == [("f", {})]
    assert "W-TEXT-DROPPED" in codes(dropped)


def test_drop_policy_still_parses_calls_after_the_dropped_text() -> None:
    text = (
        '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>and'
        '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>'
    )
    r = both(HERMES, text, text_after_calls="drop")
    assert calls_of(r) == [("f", {}), ("g", {})]
    assert r.message.content is None


# ------------------------------------------------------------------------------------- space before calls
def test_space_before_a_call_is_content_by_default_and_separation_under_strip() -> None:
    text = 'Let me check. <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    assert both(HERMES, text).message.content == "Let me check. "
    assert both(HERMES, text, space_before_calls="strip").message.content == "Let me check."


def test_strip_keeps_trailing_space_that_no_call_follows() -> None:
    assert both(HERMES, "No call here. ", space_before_calls="strip").message.content == "No call here. "
    at_end = both(HERMES, "Done. <|im_end|>", space_before_calls="strip")
    assert at_end.message.content == "Done. "
    inner = both(HERMES, "a  b\n<tool_c", space_before_calls="strip")
    assert inner.message.content == "a  b\n<tool_c"


def test_strip_json_only_strips_before_json_calls() -> None:
    text = "Checking. <tool_call>f\n</tool_call>"
    assert both(GLM, text, space_before_calls="strip_json").message.content == "Checking. "
    assert both(GLM, text, space_before_calls="strip").message.content == "Checking."
    hermes = 'Checking. <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    assert both(HERMES, hermes, space_before_calls="strip_json").message.content == "Checking."


# ------------------------------------------------------------------------------------------ weak triggers
def test_bare_json_that_is_not_a_call_stays_content_verbatim() -> None:
    for text in (
        '{"name": "invalidTool", "parameters": {invalid json}',  # cut off, and not JSON
        '{"name": "toolWithoutParams"}',  # no arguments field
        'The set {"a": 1} is small.',  # a JSON object, not a call
    ):
        r = both(LLAMA3, text)
        assert r.message.tool_calls == () and r.message.content == text


def test_bare_json_calls_are_still_calls() -> None:
    r = both(LLAMA3, 'Here: {"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}')
    assert calls_of(r) == [("f", {"a": 1}), ("g", {})]
    assert r.message.content == "Here: "


def test_a_bare_json_call_cut_off_mid_arguments_is_kept_with_a_diagnostic() -> None:
    r = both(LLAMA3, '{"name": "f", "parameters": {"a": 1')
    assert [c.name for c in r.message.tool_calls] == ["f"]
    assert "E-STREAM-TRUNCATED" in codes(r)


def test_a_bare_json_candidate_is_held_back_until_it_is_decided() -> None:
    parser = StreamParser(LLAMA3)
    parser.feed('{"name": "f", "parameters": {"a"')
    assert parser.current().tool_calls == () and parser.current().content is None
    parser.feed(": 1}}")
    assert [c.name for c in parser.current().tool_calls] == ["f"]


def test_a_candidate_longer_than_the_hold_limit_is_committed_as_a_call() -> None:
    parser = StreamParser(LLAMA3)
    parser.feed('{"name": "f", "parameters": {"code": "' + "x" * (WEAK_HOLD_LIMIT + 10))
    assert [c.name for c in parser.current().tool_calls] == ["f"]


def test_a_pythonic_list_that_does_not_parse_stays_content() -> None:
    bad = "[f(a='x 'y' 'z), g(b='p 'q' 'r)]"
    r = both(PYTHONIC, bad)
    assert r.message.tool_calls == () and r.message.content == bad
    not_literal = "[f(a=b + 1)]"
    assert both(PYTHONIC, not_literal).message.content == not_literal
    good = both(PYTHONIC, "[f(a='x'), g()] done")
    assert calls_of(good) == [("f", {"a": "x"}), ("g", {})]
    assert good.message.content == " done"


# ------------------------------------------------------------------------------------------ formats
def test_step3_call_marker_tail_is_optional() -> None:
    invoke = '<steptml:invoke name="f"><steptml:parameter name="a">1</steptml:parameter></steptml:invoke>'
    for header in (
        "<｜tool_call_begin｜>function<｜tool_sep｜>",
        "<｜tool_call_begin｜>",
        "<｜tool_call_begin｜>function<｜tool_sep｜>f\n",
    ):
        text = f"<｜tool_calls_begin｜>{header}{invoke}<｜tool_call_end｜><｜tool_calls_end｜>"
        r = both(STEP3, text)
        assert calls_of(r) == [("f", {"a": "1"})], header
        assert r.message.content is None


def test_glm_output_written_json_escaped_is_read() -> None:
    text = (
        "<tool_call>todo_write\\n<arg_key>todos</arg_key>\\n"
        '<arg_value>[{\\"id\\": \\"1\\", \\"task\\": \\"Check C:\\\\\\\\tmp\\"}]</arg_value>\n</tool_call>'
    )
    r = both(GLM, text, [tool("todo_write", todos={"type": "array"})])
    assert calls_of(r) == [("todo_write", {"todos": [{"id": "1", "task": "Check C:\\tmp"}]})]
    assert r.message.content is None


def test_harmony_text_between_messages_belongs_to_no_channel() -> None:
    text = "<|channel|>analysis<|message|>thinking<|end|>stray<|start|>assistant<|channel|>final<|message|>hi"
    r = both(HARMONY, text)
    assert r.message.reasoning_content == "thinking"
    assert r.message.content == "hi"
    assert "E-PARSE-HEADER" in codes(r)


def test_harmony_reasoning_has_not_ended_after_an_analysis_message() -> None:
    parser = StreamParser(HARMONY)
    parser.feed("<|start|>assistant<|channel|>analysis<|message|>This is reasoning<|end|>")
    parser.feed("Z")
    assert parser.current().content is None


def kimi_counter_call(args: str) -> str:
    return (
        "Let me check. <|tool_calls_section_begin|><|tool_call_begin|>0 <|tool_call_argument_begin|>"
        f"{args}<|tool_call_end|><|tool_calls_section_end|>"
    )


def test_kimi_bare_counter_names_the_one_tool_whose_schema_fits_the_arguments() -> None:
    tools = [tool("read_file", path={}), tool("get_weather", city={}, unit={})]
    r = both(KIMI_NAMESPACED, kimi_counter_call('{"city": "Tokyo", "unit": "celsius"}'), tools)
    assert calls_of(r) == [("get_weather", {"city": "Tokyo", "unit": "celsius"})]
    assert r.message.tool_calls[0].id == "0"
    assert r.message.content == "Let me check. "


def test_kimi_bare_counter_is_not_a_call_when_the_arguments_fit_several_tools_or_none() -> None:
    ambiguous = [tool("get_weather", city={}, unit={}), tool("book_flight", city={})]
    text = kimi_counter_call('{"city": "Tokyo"}')
    r = both(KIMI_NAMESPACED, text, ambiguous)
    assert r.message.tool_calls == () and r.message.content == text
    none_fits = [tool("read_file", path={}), tool("get_time")]
    assert both(KIMI_NAMESPACED, text, none_fits).message.tool_calls == ()


# ------------------------------------------------------------------------------------------ output prefix
FUNCTIONARY = FormatSpec(
    tools=ToolsSpec(format="recipient", call_start=">>>"), prompt=PromptSpec(output_prefix=">>>")
)


def test_an_output_prefix_written_by_the_prompt_is_read_before_the_output() -> None:
    text = 'all\nLet me look.>>>get_weather\n{"city": "X"}'
    r = both(FUNCTIONARY, text)
    assert r.message.content == "Let me look."
    assert calls_of(r) == [("get_weather", {"city": "X"})]
    assert calls_of(both(FUNCTIONARY, 'get_weather\n{"city": "Y"}')) == [("get_weather", {"city": "Y"})]


def test_the_output_prefix_is_not_part_of_the_events_or_the_message() -> None:
    text = "all\nHi"
    events, result = parse_events(FUNCTIONARY, list(text))
    assert "".join(e.text for e in events) == text
    assert result.message.content == "Hi"
    empty = parse(FUNCTIONARY, "")
    assert empty.message.content is None and empty.message.tool_calls == ()
    parser = StreamParser(FUNCTIONARY)
    parser.feed("al")
    assert parser.pending == "al"


def test_the_hold_limit_verdict_does_not_depend_on_chunking() -> None:
    # Longer than the limit: committed as a call before its end is seen (its arguments are valid, so the
    # junk member after them does not undo it), whether the end was already in the buffer or not.
    text = '{"name": "f", "parameters": {"code": "' + "x" * (WEAK_HOLD_LIMIT + 10) + '"}, "oops": }'
    one = parse(LLAMA3, text)
    parser = StreamParser(LLAMA3)
    for i in range(0, len(text), 997):
        parser.feed(text[i : i + 997])
    assert parser.finish().message == one.message
    assert [c.name for c in one.message.tool_calls] == ["f"]
