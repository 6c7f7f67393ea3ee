"""Pythonic calls whose function names are dotted (``weather.get_current(...)``): streamed in any chunks,
one character at a time included, they give the same message as one-shot parsing.

A streamed buffer can end right after ``[weather`` or ``[weather.``: the name is not complete yet, so the
parser must wait for more text rather than decide that ``[`` starts prose (issue 10's must-show).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_parsing_properties import chunk
from workbench.runtime.chat import Message, Tool
from workbench.runtime.parsing import StreamParser, parse
from workbench.runtime.spec import FormatSpec, ToolsSpec

BARE = FormatSpec(tools=ToolsSpec(format="pythonic"))
WRAPPED = FormatSpec(
    tools=ToolsSpec(format="pythonic", section_start="<|tool_call_start|>", section_end="<|tool_call_end|>")
)
TOOLS = [
    Tool(
        "weather.get_current",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    ),
    Tool("a.b.c", parameters={"type": "object", "properties": {}}),
    Tool("plain", parameters={"type": "object", "properties": {"x": {"type": "string"}}}),
]
BARE_TEXT = 'Checking.[weather.get_current(city="Paris", days=2), a.b.c()]'
WRAPPED_TEXT = 'Checking.<|tool_call_start|>[weather.get_current(city="Paris"), a.b.c()]<|tool_call_end|>'
EXPECTED = [("weather.get_current", {"city": "Paris", "days": 2}), ("a.b.c", {})]


def streamed(spec: FormatSpec, pieces: list[str]) -> Message:
    parser = StreamParser(spec, TOOLS)
    for piece in pieces:
        parser.feed(piece)
    return parser.finish().message


def calls_of(message: Message) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, json.loads(c.arguments)) for c in message.tool_calls]


def test_one_shot_reads_dotted_names() -> None:
    message = parse(BARE, BARE_TEXT, TOOLS).message
    assert calls_of(message) == EXPECTED
    assert message.content == "Checking."


@pytest.mark.parametrize(
    ("spec", "text"), [(BARE, BARE_TEXT), (WRAPPED, WRAPPED_TEXT)], ids=["bare", "wrapped"]
)
def test_one_character_at_a_time_equals_one_shot(spec: FormatSpec, text: str) -> None:
    one = parse(spec, text, TOOLS).message
    assert calls_of(one)[0][0] == "weather.get_current"
    assert streamed(spec, list(text)) == one


def test_prose_with_a_dot_after_a_bracket_stays_content_when_streamed() -> None:
    """Waiting for the rest of a dotted name must not turn prose into a call: ``[see.above]`` is content."""
    text = "As noted [see.above] and [plain.x] here."
    assert streamed(BARE, list(text)).content == text
    assert parse(BARE, text, TOOLS).message.content == text


NAMES = st.sampled_from(["weather.get_current", "a.b.c", "plain"])
VALUES = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8),
    st.integers(-1000, 1000),
    st.booleans(),
    st.none(),
)


def _python(value: object) -> str:
    return repr(value)


@st.composite
def call_lists(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, object]]]]:
    calls = []
    for name in draw(st.lists(NAMES, min_size=1, max_size=3)):
        if name == "weather.get_current":
            args: dict[str, object] = {"city": draw(VALUES)}
        elif name == "plain":
            args = {"x": draw(VALUES)}
        else:
            args = {}
        calls.append((name, args))
    body = ", ".join(f"{n}({', '.join(f'{k}={_python(v)}' for k, v in a.items())})" for n, a in calls)
    return f"[{body}]", calls


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    drawn=call_lists(),
    lead=st.sampled_from(["", "Sure. ", "Line\n"]),
    wrapped=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=30),
)
def test_any_chunking_of_dotted_calls_matches_one_shot(
    drawn: tuple[str, list[tuple[str, dict[str, object]]]], lead: str, wrapped: bool, cuts: list[int]
) -> None:
    body, calls = drawn
    spec = WRAPPED if wrapped else BARE
    text = lead + (f"<|tool_call_start|>{body}<|tool_call_end|>" if wrapped else body)
    one = parse(spec, text, TOOLS).message
    assert calls_of(one) == calls
    assert streamed(spec, chunk(text, cuts)) == one
    assert streamed(spec, list(text)) == one
