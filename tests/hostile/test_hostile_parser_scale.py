"""Hostile parser input at scale (issue 13): long streams of tiny chunks stay cheap and rewindable.

Timing goals live in ``benchmarks/stream_parse.py --only shapes``; these tests pin the behaviour the
linear cost relies on, at a size that runs in about a second.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

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


@given(st.text(alphabet=st.sampled_from(list("<a /|>\n\té_1")), max_size=400))
def test_parse_stream_pieces_add_up_and_are_at_most_a_quarter_of_the_characters(text: str) -> None:
    """``parse --stream`` feeds pieces of at least four characters: 1 MB of ``<a<a...`` (or of ``<``) is at
    most 262,145 feeds, not a million (issue 22, item 8: it streamed past 60 s)."""
    from workbench.commands.parse import MIN_PIECE, stream_pieces

    pieces = stream_pieces(text)
    assert "".join(pieces) == text
    assert all(len(p) >= MIN_PIECE for p in pieces[:-1])
    assert len(pieces) <= len(text) // MIN_PIECE + 1


def test_parse_stream_of_a_megabyte_of_angle_brackets_is_a_few_pieces() -> None:
    from workbench.commands.parse import stream_pieces

    assert stream_pieces("<" * (1 << 20)) == ["<" * (1 << 20)]
    assert len(stream_pieces("<a" * (1 << 19))) == 1 << 18
