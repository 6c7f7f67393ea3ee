"""Hostile parser input at scale (issue 13): long streams of tiny chunks stay cheap and rewindable.

Timing goals live in ``benchmarks/stream_parse.py --only shapes``; these tests pin the behaviour the
linear cost relies on, at a size that runs in about a second.
"""

from __future__ import annotations

import json

from workbench.runtime.parsing import DeltaTracker, StreamParser, parse, parse_events
from workbench.testing.reference_specs import QWEN3_LIKE

CALL = '<tool_call>\n{"name": "f", "arguments": {"n": 1}}\n</tool_call>\n'
TEXT = "<think>" + "plan " * 600 + "</think>\n" + CALL * 300 + "<|im_end|>"


def test_a_stream_of_one_character_chunks_equals_the_one_shot_parse() -> None:
    events, streamed = parse_events(QWEN3_LIKE, list(TEXT))
    assert streamed.message == parse(QWEN3_LIKE, TEXT).message
    assert "".join(e.text for e in events) == TEXT
    assert len(streamed.message.tool_calls) == 300


def test_deltas_of_a_long_stream_add_up_to_the_message() -> None:
    parser = StreamParser(QWEN3_LIKE)
    tracker = DeltaTracker(parser)
    deltas = []
    for i in range(0, len(TEXT), 3):
        parser.feed(TEXT[i : i + 3])
        deltas += tracker.take()
    result = parser.finish()
    deltas += tracker.take()
    args: dict[int, str] = {}
    for d in deltas:
        for call in d.get("tool_calls", ()):
            args[call["index"]] = args.get(call["index"], "") + call["function"]["arguments"]
    assert [json.loads(a) for a in args.values()] == [
        json.loads(c.arguments) for c in result.message.tool_calls
    ]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == result.message.reasoning_content


def test_restore_after_thousands_of_chunks() -> None:
    """The fed text is kept in joined groups of chunks: a rewind still lands exactly on its snapshot."""
    parser = StreamParser(QWEN3_LIKE)
    cut = len(TEXT) - 2500
    for ch in TEXT[:cut]:
        parser.feed(ch)
    snap = parser.snapshot()
    before = (parser.current(), parser.pending)
    for ch in TEXT[cut:]:
        parser.feed(ch)
    parser.restore(snap)
    assert (parser.current(), parser.pending) == before
    assert parser.snapshot() == snap  # the chunk count survives the rewind
    parser.feed(TEXT[cut:])
    assert parser.finish().message == parse(QWEN3_LIKE, TEXT).message
