"""Reasoning and content modes, with hand-written specs (no template needed)."""

from __future__ import annotations

import pytest

from workbench.runtime.parsing import ParseOptions, parse, parse_events
from workbench.runtime.spec import ContentSpec, FormatSpec, PromptSpec, ReasoningSpec, ToolsSpec

QWEN_TOOLS = ToolsSpec(format="json_native", section_start="<tool_call>\n", section_end="</tool_call>")


def spec(mode: str = "tag_based", start: str = "<think>", end: str = "</think>", **kw: object) -> FormatSpec:
    return FormatSpec(reasoning=ReasoningSpec(mode=mode, start=start, end=end), **kw)  # type: ignore[arg-type]


def msg(s: FormatSpec, text: str, **options: object) -> tuple[str, str, list[tuple[str, str]]]:
    result = parse(s, text, options=ParseOptions(**options))  # type: ignore[arg-type]
    m = result.message
    return m.reasoning_content or "", m.content or "", [(c.name, c.arguments) for c in m.tool_calls]


# ------------------------------------------------------------------------------------------ tag_based
def test_tag_based_reasoning_is_split_from_content() -> None:
    assert msg(spec(), "<think>plan</think>answer") == ("plan", "answer", [])


def test_tag_based_without_tags_is_all_content() -> None:
    assert msg(spec(), "just an answer") == ("", "just an answer", [])


def test_start_tag_after_leading_whitespace_still_opens_reasoning() -> None:
    assert msg(spec(), "\n <think>plan</think>answer") == ("plan", "answer", [])


def test_start_tag_after_content_is_content() -> None:
    assert msg(spec(), "answer <think>not reasoning</think>") == (
        "",
        "answer <think>not reasoning</think>",
        [],
    )


def test_marker_whitespace_from_the_template_is_optional_in_the_output() -> None:
    s = spec(start="<think>\n", end="</think>\n\n")
    assert msg(s, "<think>plan</think>answer") == ("plan", "answer", [])
    assert msg(s, "<think>\nplan\n</think>\n\n\nanswer") == ("\nplan\n", "answer", [])


def test_only_the_first_end_marker_ends_reasoning() -> None:
    r, c, _ = msg(spec(), "<think>one</think>two</think>three")
    assert (r, c) == ("one", "two</think>three")


def test_unclosed_reasoning_runs_to_the_end_with_a_diagnostic() -> None:
    result = parse(spec(), "<think>still thinking")
    assert result.message.reasoning_content == "still thinking"
    assert [d.code for d in result.diagnostics] == ["E-STREAM-TRUNCATED"]


# ------------------------------------------------------------------------------------------ forced_open
def test_forced_open_output_starts_inside_reasoning() -> None:
    s = spec("forced_open")
    assert msg(s, "plan</think>answer") == ("plan", "answer", [])


def test_forced_open_reads_the_opening_written_again_once() -> None:
    """The prompt opened the block; a model writing the opening again right away is read as that marker
    (vLLM's reasoning parsers drop it too), once: a second one is reasoning text (issue 19)."""
    s = spec("forced_open")
    assert msg(s, "<think>plan</think>answer") == ("plan", "answer", [])
    assert msg(s, "<think><think>plan</think>answer") == ("<think>plan", "answer", [])


def test_forced_open_without_end_is_all_reasoning() -> None:
    result = parse(spec("forced_open"), "ABCD")
    assert result.message.reasoning_content == "ABCD" and result.message.content is None
    assert any(d.code == "E-STREAM-TRUNCATED" for d in result.diagnostics)


def test_forced_open_output_that_opens_the_answer_has_no_reasoning() -> None:
    """The prompt opened reasoning, but the output starts with the answer's own wrapper (a history turn
    without reasoning writes just that: wikicall-like): the model skipped reasoning, and the answer's
    closer, spelled as reasoning's, must not make the answer reasoning."""
    s = spec(
        "forced_open",
        start="<div class=t>",
        end="</div>",
        content=ContentSpec(mode="always_wrapped", start="<div class=a>", end="</div>"),
    )
    assert msg(s, "<div class=a>answer</div>") == ("", "answer", [])
    assert msg(s, "\n<div class=a>answer</div>") == ("", "answer", [])
    assert msg(s, "plan</div><div class=a>answer</div>") == ("plan", "answer", [])
    chunks = list("<div class=a>answer</div>")
    _, streamed = parse_events(s, chunks)
    assert (streamed.message.reasoning_content, streamed.message.content) == (None, "answer")


def test_an_answer_opened_without_the_prompts_head_has_no_reasoning() -> None:
    """Solar Open: the prompt '<|begin|>assistant<|think|>' opens reasoning; an answer is
    '<|begin|>assistant<|content|>...': right after the prompt's head, its opening is '<|content|>'."""
    s = spec(
        "forced_open",
        start="<|think|>",
        end="<|end|>",
        content=ContentSpec(
            mode="wrapped_with_reasoning", start="<|begin|>assistant<|content|>", end="<|end|>"
        ),
        prompt=PromptSpec(generation_prompt="<|begin|>assistant<|think|>", thinking_opened=True),
    )
    assert msg(s, "<|content|>answer<|end|>") == ("", "answer", [])
    assert msg(s, "plan<|end|><|begin|>assistant<|content|>answer<|end|>") == ("plan", "answer", [])
    assert msg(s, "<|content|>answer", thinking_opened=False) == ("", "answer", [])


def test_reasoning_right_after_the_calls_is_reasoning() -> None:
    """Motif-2 writes the calls first, then its reasoning block, then the answer."""
    s = spec(tools=QWEN_TOOLS)
    text = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n<think>plan</think>answer'
    assert msg(s, text) == ("plan", "answer", [("f", "{}")])
    _, streamed = parse_events(s, list(text))
    assert streamed.to_contract() == parse(s, text).to_contract()
    # text between the calls and the block makes it the answer's, as anywhere else
    assert msg(s, text.replace("\n<think>", "\nso <think>"))[0] == ""


def test_thinking_opened_option_overrides_the_mode() -> None:
    assert msg(spec("forced_open"), "ABCD", thinking_opened=False) == ("", "ABCD", [])
    assert msg(spec("tag_based"), "ABCD</think>x", thinking_opened=True) == ("ABCD", "x", [])


def test_prompt_spec_says_whether_thinking_was_opened() -> None:
    s = spec("tag_based", prompt=PromptSpec(thinking_opened=True))
    assert msg(s, "plan</think>answer") == ("plan", "answer", [])


# ------------------------------------------------------------------------------------------ forced_closed
def test_forced_closed_with_thinking_accepts_an_optional_start_tag() -> None:
    s = spec("forced_closed", end="</think>\n\n")
    assert msg(s, "<think>plan</think>\n\nanswer") == ("plan", "answer", [])
    assert msg(s, "answer only") == ("", "answer only", [])


def test_forced_closed_with_thinking_disabled_keeps_tags_verbatim() -> None:
    s = spec("forced_closed")
    assert msg(s, "<think>x</think>y", enable_thinking=False) == ("", "<think>x</think>y", [])


# ----------------------------------------------------------------------------- delimiter / tools_only
def test_delimiter_mode_reasons_until_the_delimiter() -> None:
    s = spec("delimiter", start="", end="[BEGIN FINAL RESPONSE]\n")
    assert msg(s, "I'm\nthinking\n[BEGIN FINAL RESPONSE]\nHello") == ("I'm\nthinking\n", "Hello", [])


def test_tools_only_reasoning_before_a_tool_call() -> None:
    s = spec("tools_only", start="<|START_THINKING|>", end="<|END_THINKING|>", tools=QWEN_TOOLS)
    text = '<|START_THINKING|>plan<|END_THINKING|><tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    assert msg(s, text) == ("plan", "", [("f", "{}")])


# ------------------------------------------------------------------------------------------ reasoning off
def test_extract_reasoning_false_leaves_reasoning_in_content() -> None:
    assert msg(spec("forced_open"), "plan</think>answer", extract_reasoning=False) == (
        "",
        "plan</think>answer",
        [],
    )


def test_a_tool_call_start_ends_reasoning_implicitly() -> None:
    s = spec("forced_open", tools=QWEN_TOOLS)
    text = (
        "I need the weather.\n\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "X"}}\n</tool_call>'
    )
    r, c, calls = msg(s, text)
    assert r == "I need the weather.\n\n" and c == "" and calls == [("get_weather", '{"city": "X"}')]


def test_tool_call_start_ends_reasoning_even_when_tools_are_not_parsed() -> None:
    s = spec("forced_open", tools=QWEN_TOOLS)
    r, c, calls = msg(s, "think<tool_call>\n{bad", parse_tools=False)
    assert (r, c, calls) == ("think", "<tool_call>\n{bad", [])


# ------------------------------------------------------------------------------------------ content modes
def test_always_wrapped_content_markers_are_stripped() -> None:
    s = FormatSpec(
        content=ContentSpec(mode="always_wrapped", start="<|START_RESPONSE|>", end="<|END_RESPONSE|>")
    )
    assert msg(s, "<|START_RESPONSE|>Hello<|END_RESPONSE|>") == ("", "Hello", [])


def test_wrappers_are_stripped_while_reasoning_tags_stay_when_not_extracted() -> None:
    s = FormatSpec(
        reasoning=ReasoningSpec(mode="tools_only", start="<|START_THINKING|>", end="<|END_THINKING|>"),
        content=ContentSpec(mode="always_wrapped", start="<|START_RESPONSE|>", end="<|END_RESPONSE|>"),
    )
    text = "<|START_THINKING|>hm<|END_THINKING|><|START_RESPONSE|>Hi<|END_RESPONSE|>"
    assert msg(s, text, extract_reasoning=False) == ("", "<|START_THINKING|>hm<|END_THINKING|>Hi", [])


def test_wrapped_with_reasoning_content() -> None:
    s = spec(content=ContentSpec(mode="wrapped_with_reasoning", start="<response>", end="</response>"))
    assert msg(s, "<think>hm</think><response>Hi</response>") == ("hm", "Hi", [])


# ------------------------------------------------------------------------------------------ end markers
def test_end_of_turn_markers_are_stripped() -> None:
    s = spec(end_markers=("<|im_end|>",))
    assert msg(s, "<think>a</think>b<|im_end|>") == ("a", "b", [])


@pytest.mark.parametrize("chunk", [1, 2, 3, 7])
def test_a_longer_marker_that_shares_a_prefix_with_an_end_marker_wins_when_streamed(chunk: int) -> None:
    s = FormatSpec(
        tools=ToolsSpec(format="json_native", section_start="<|message_sep|>\n\nfunction call<|role_sep|>\n"),
        end_markers=("<|message_sep|>",),
    )
    text = 'Hi<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "f", "arguments": {"a": 1}}'
    _events, result = parse_events(s, [text[i : i + chunk] for i in range(0, len(text), chunk)])
    assert result.message.content == "Hi"
    assert [(c.name, c.arguments) for c in result.message.tool_calls] == [("f", '{"a": 1}')]


# ------------------------------------------------------------------------------------------ repeated starts
@pytest.mark.parametrize(
    ("output", "reasoning"),
    [
        ("<think><think>X</think>Y", "<think>X"),
        ("<think>" * 5 + "X</think>Y", "<think>" * 4 + "X"),
        ("<think>\n<think>\nX\n</think>Y", "\n<think>\nX\n"),
        ("<think>a<think>b</think>Y", "a<think>b"),
    ],
)
def test_a_start_marker_inside_reasoning_is_reasoning_text(output: str, reasoning: str) -> None:
    """One start marker opens one block; later ones up to the end marker are reasoning text, verbatim,
    one-shot and streamed one character at a time (issue 19: they used to vanish)."""
    s = spec()
    assert msg(s, output) == (reasoning, "Y", [])
    _events, streamed = parse_events(s, list(output))
    assert (streamed.message.reasoning_content, streamed.message.content) == (reasoning, "Y")
    assert all(d.code != "E-STREAM-TRUNCATED" for d in streamed.diagnostics)


def test_the_grammar_reads_repeated_start_markers_as_the_parser_does() -> None:
    """The structural tag's reasoning block (a request that covers the reasoning) is free text from the
    opening marker to the end marker, so it accepts the repeated starts the parser keeps as reasoning text;
    the parser's reasoning is exactly that span."""
    import json

    from tests.test_grammar import QWEN_CALL, WEATHER, accepts
    from workbench.runtime.serving.tags import request_tag
    from workbench.testing.reference_specs import QWEN3_LIKE

    output = "<think><think><think>X</think>\n\n" + QWEN_CALL
    tag = json.dumps(request_tag(QWEN3_LIKE, [WEATHER.to_openai()], "required", reasoning=True))
    assert accepts(tag, output)
    reasoning, _content, calls = msg(QWEN3_LIKE, output)
    assert reasoning == output[len("<think>") : output.index("</think>")] == "<think><think>X"
    assert [name for name, _ in calls] == ["get_weather"]
