"""Calls opened by a bare word, with the name and the id separated by blanks alone (session 17).

Held-out mimics of session 17 wrote calls as ``call NAME ID`` on a line of their own (a shell-like
``esac`` format), ``$$$$ NAME ID`` and ``⁅call NAME ID⁆``; ``INVOKE <id> <name> {json}`` (stavemark) is the
same shape.  The call pattern was learned right (``{name} {id}\\n{args}``) but its reader took the name up
to the arguments, through the blank and the id, and read no call at all.  And a bare word that opens a
call also occurs in prose: inside reasoning, ``so I call the tool`` ended the reasoning there.  A trigger
now ends reasoning only when a call's header follows it.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.stream_helpers import cut_points, streamed_message
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import parse
from workbench.runtime.spec import CallPattern, FormatSpec, ReasoningSpec, ToolsSpec

WEATHER = Tool(
    "get_weather",
    "",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
)
#: ``think ... kniht`` reasoning, then ``call NAME ID`` + a JSON line + ``llac`` per call.
ESAC = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="think\n", end="kniht\n"),
    tools=ToolsSpec(
        format="call_pattern",
        call_start="call ",
        call_end="\nllac",
        call_separator="\n",
        parallel=True,
        pattern=CallPattern(call=("$name", " ", "$id", "\n", "$args"), args="json"),
    ),
    end_markers=("nrut",),
)


def _read(spec: FormatSpec, text: str) -> tuple[str, str, list[tuple[str, str, object]]]:
    m = parse(spec, text, [WEATHER]).message
    calls = [(c.name, c.id, c.arguments_value()) for c in m.tool_calls]
    return (m.reasoning_content or "").strip(), (m.content or "").strip(), calls


def test_a_name_and_an_id_separated_by_a_blank_are_two_slots() -> None:
    text = 'Checking.\ncall get_weather Ab3dE5\n{"city": "Paris", "days": 2}\nllac'
    assert _read(ESAC, text) == ("", "Checking.", [("get_weather", "Ab3dE5", {"city": "Paris", "days": 2})])


def test_two_calls_each_with_its_id() -> None:
    text = 'call get_weather a1\n{"city": "Paris"}\nllac\ncall get_weather b2\n{"city": "Oslo"}\nllac'
    got = _read(ESAC, text)[2]
    assert got == [("get_weather", "a1", {"city": "Paris"}), ("get_weather", "b2", {"city": "Oslo"})]


def test_the_trigger_word_in_reasoning_prose_stays_reasoning() -> None:
    call = 'call get_weather a1\n{"city": "Paris"}\nllac'
    text = "think\nThe user wants the weather, so I call the tool.\nkniht\n" + call
    assert _read(ESAC, text) == (
        "The user wants the weather, so I call the tool.",
        "",
        [("get_weather", "a1", {"city": "Paris"})],
    )


def test_a_call_header_inside_unclosed_reasoning_still_ends_it() -> None:
    """A real call started before the reasoning closed: the call is read (the implicit end stays)."""
    text = 'think\nI will look it up.\ncall get_weather a1\n{"city": "Paris"}\nllac'
    assert _read(ESAC, text) == ("I will look it up.", "", [("get_weather", "a1", {"city": "Paris"})])


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(1, 200), max_size=16), one_by_one=st.booleans())
def test_streaming_reads_reasoning_prose_as_one_shot_does(cuts: list[int], one_by_one: bool) -> None:
    text = 'think\nso I call the tool\nkniht\nOk.\ncall get_weather a1\n{"city": "Pa\\"ris"}\nllac'
    streamed = streamed_message(ESAC, text, cut_points(text, cuts, one_by_one), [WEATHER])
    assert streamed == parse(ESAC, text, [WEATHER]).message


def test_an_id_behind_a_marker_of_its_own_reads_as_before() -> None:
    """The same calls with the id after a marker of its own read as before (``NAME #ID``)."""
    marked = CallPattern(call=("$name", " #", "$id", "\n", "$args"), args="json")
    spec = replace(ESAC, tools=replace(ESAC.tools, pattern=marked))
    assert _read(spec, 'call get_weather #a1\n{"city": "Paris"}\nllac')[2] == [
        ("get_weather", "a1", {"city": "Paris"})
    ]
