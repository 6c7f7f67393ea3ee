"""Streaming semantics: hold-back, no retraction, name first, exact argument fragments, linear buffering."""

from __future__ import annotations

import json
import random

import pytest

from tests.spec_fixtures import CODER, HERMES, MISTRAL_NEMO
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import DeltaTracker, ParseOptions, StreamParser, parse, parse_events
from workbench.runtime.spec import FormatSpec, ReasoningSpec

QWEN3 = FormatSpec(
    reasoning=ReasoningSpec(mode="forced_closed", start="<think>", end="</think>\n\n"),
    tools=HERMES.tools,
    end_markers=("<|im_end|>",),
)
TWO_CALLS = (
    "<think>plan</think>\n\nOK.<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call><|im_end|>'
)
TOOLS = [Tool("get_weather"), Tool("get_time"), Tool("get")]


def chunked(text: str, sizes: list[int]) -> list[str]:
    out, i = [], 0
    for n in sizes:
        if i >= len(text):
            break
        out.append(text[i : i + n])
        i += n
    if i < len(text):
        out.append(text[i:])
    return out


def test_partial_marker_is_held_back_until_disambiguated() -> None:
    p = StreamParser(QWEN3, TOOLS)
    p.feed("<think>x</think>Hello <tool")
    assert p.current().content == "Hello " and p.pending == "<tool"
    p.feed("bar> is not a marker")
    assert p.current().content == "Hello <toolbar> is not a marker" and p.pending == ""


def test_events_concatenate_to_the_input_for_any_chunking() -> None:
    rng = random.Random(3)
    for _ in range(20):
        sizes = [rng.randint(1, 9) for _ in range(len(TWO_CALLS))]
        events, _ = parse_events(QWEN3, chunked(TWO_CALLS, sizes), TOOLS)
        assert "".join(e.text for e in events) == TWO_CALLS


def test_deltas_add_up_to_the_final_message_and_are_never_retracted() -> None:
    rng = random.Random(5)
    final = parse(QWEN3, TWO_CALLS, TOOLS).message
    for _ in range(20):
        p = StreamParser(QWEN3, TOOLS)
        tracker = DeltaTracker(p)
        deltas: list[dict] = []
        for piece in chunked(TWO_CALLS, [rng.randint(1, 6) for _ in TWO_CALLS]):
            p.feed(piece)
            deltas += tracker.take()
        p.finish()
        deltas += tracker.take()
        content = "".join(d.get("content", "") for d in deltas)
        reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
        names: dict[int, list[str]] = {}
        args: dict[int, str] = {}
        for d in deltas:
            for tc in d.get("tool_calls", []):
                fn = tc["function"]
                if "name" in fn:
                    names.setdefault(tc["index"], []).append(fn["name"])
                args[tc["index"]] = args.get(tc["index"], "") + fn.get("arguments", "")
        assert content == final.content and reasoning == final.reasoning_content
        assert names == {0: ["get_weather"], 1: ["get_time"]}  # each name once, complete, indices 0, 1
        assert [args[0], args[1]] == [c.arguments for c in final.tool_calls]


def test_a_name_that_is_a_prefix_of_another_tool_is_never_sent_early() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>'
    p = StreamParser(QWEN3, TOOLS)
    seen = []
    for ch in text:
        p.feed(ch)
        seen += [c.name for c in p.current().tool_calls]
    assert set(seen) == {"get_weather"}


def test_tagged_arguments_stream_as_exact_json_fragments() -> None:
    tools = [
        Tool(
            "f",
            parameters={
                "type": "object",
                "properties": {"code": {"type": "string"}, "n": {"type": "integer"}},
            },
        )
    ]
    text = (
        "<tool_call>\n<function=f>\n<parameter=code>\nprint('a\"b')\n\n</parameter>\n"
        "<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>"
    )
    p = StreamParser(CODER, tools)
    tracker = DeltaTracker(p)
    fragments = []
    for ch in text:
        p.feed(ch)
        fragments += [
            tc["function"].get("arguments", "") for d in tracker.take() for tc in d.get("tool_calls", [])
        ]
    p.finish()
    fragments += [
        tc["function"].get("arguments", "") for d in tracker.take() for tc in d.get("tool_calls", [])
    ]
    assert json.loads("".join(fragments)) == {"code": "print('a\"b')\n", "n": 7}
    assert "".join(fragments) == p.current().tool_calls[0].arguments


@pytest.mark.parametrize(
    "pieces",
    [
        ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'],
        [
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
            '<tool_call>\n{"na',
            'me": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>',
        ],
    ],
)
def test_multi_token_chunks_carry_whole_calls_or_call_boundaries(pieces: list[str]) -> None:
    events, result = parse_events(QWEN3, pieces, TOOLS)
    indices = sorted({e.tool_index for e in events if e.kind.startswith("tool_")})
    assert indices == list(range(len(result.message.tool_calls)))
    assert result.message == parse(QWEN3, "".join(pieces), TOOLS).message


def test_unreleased_text_stays_small_while_a_long_output_streams() -> None:
    p = StreamParser(QWEN3, TOOLS)
    longest = 0
    for i in range(20000):
        p.feed(f" word{i % 97}" if i % 50 else " <")
        longest = max(longest, len(p.pending))
    assert longest <= len("<tool_call>")  # held back: at most a marker prefix, never the whole buffer


def test_truncated_stream_keeps_what_was_sent_and_reports_it() -> None:
    p = StreamParser(QWEN3, TOOLS)
    p.feed('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par')
    before = p.current()
    result = p.finish()
    assert result.message.tool_calls == before.tool_calls
    assert result.message.tool_calls[0].arguments == '{"city": "Par'
    assert "E-STREAM-TRUNCATED" in [d.code for d in result.diagnostics]


def test_snapshot_and_restore_rewind_to_the_same_state() -> None:
    p = StreamParser(QWEN3, TOOLS)
    half = len(TWO_CALLS) // 2
    for ch in TWO_CALLS[:half]:
        p.feed(ch)
    snap = p.snapshot()
    before = (p.current(), p.pending)
    p.feed("garbage that the rewind must forget")
    p.restore(snap)
    assert (p.current(), p.pending) == before
    p.feed(TWO_CALLS[half:])
    assert p.finish().message == parse(QWEN3, TWO_CALLS, TOOLS).message


def test_feed_after_finish_is_a_programming_error() -> None:
    p = StreamParser(QWEN3)
    p.finish()
    with pytest.raises(RuntimeError):
        p.feed("x")


def test_whitespace_between_reasoning_and_a_call_is_not_content_when_streamed() -> None:
    p = StreamParser(QWEN3, TOOLS, options=ParseOptions(thinking_opened=True))
    p.feed("plan</think>")
    p.feed("\n\n\n")
    assert p.current().content is None  # held: it only separates, unless text follows
    p.feed('<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>')
    assert p.finish().message.content is None


def test_an_id_written_after_the_arguments_is_sent_together_with_the_name() -> None:
    p = StreamParser(MISTRAL_NEMO, [{"type": "function", "function": {"name": "f"}}])
    tracker = DeltaTracker(p)
    firsts = []
    for ch in '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}, "id": "123456789"}]':
        p.feed(ch)
        firsts += [tc for d in tracker.take() for tc in d.get("tool_calls", []) if "name" in tc["function"]]
    assert [(tc["id"], tc["function"]["name"]) for tc in firsts] == [("123456789", "f")]
