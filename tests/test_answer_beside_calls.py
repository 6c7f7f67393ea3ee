"""The answer's text written otherwise when calls follow it (spec v7, ``content.with_calls_start``/``end``).

Agents write a round's text as a report or a plan beside its calls and as the final answer otherwise:
WebResearcher's ``<report>...</report>`` then ``<tool_call>``, ``<answer>...</answer>`` when the turn does
not call; AgentFlow's ``Sub-Goal:`` / ``Answer:`` labels; Command R+'s ``Plan:`` before its ``Action:`` and
a bare answer.  With one answer wrapper in the spec the second one stayed in the content.  The turn learner
already saw the header of the answer beside calls; now the marker layout carries it, the parser strips it,
the sample writer writes it and the response template opens the answer with either wrapper.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import PROJECT_TEMPLATES
from tests.stream_helpers import cut_points, streamed_message
from workbench.export.response_template import build_response_template
from workbench.formats import analyze
from workbench.proofs import Unsupported
from workbench.runtime.chat import Tool
from workbench.runtime.formats.base import SampleCall
from workbench.runtime.parsing import parse
from workbench.runtime.parsing.samples import sample_output
from workbench.runtime.spec import ContentSpec, FormatSpec, SpecError
from workbench.template.source import load_template
from workbench.testing.reference_specs import QWEN3_LIKE

SHAPES = PROJECT_TEMPLATES / "recent-shapes"
WEATHER = Tool(
    "get_weather",
    "",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
#: WebResearcher's turn by hand: '<answer>' alone, '<report>' beside calls.
REPORT = replace(
    QWEN3_LIKE,
    content=ContentSpec(
        mode="always_wrapped",
        start="<answer>\n",
        end="\n</answer>",
        with_calls_start="<report>\n",
        with_calls_end="\n</report>\n",
    ),
)
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'


def _read(spec: FormatSpec, text: str) -> tuple[str, list[tuple[str, object]]]:
    m = parse(spec, text, [WEATHER]).message
    # (the blanks inside a wrapper stay content, as with any wrapper: validation compares stripped text)
    return m.content.strip(), [(c.name, c.arguments_value()) for c in m.tool_calls]


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        ("webresearcher", "<report>\n", "\n</report>\n"),
        ("agentflow", "Sub-Goal: ", "\n"),
        ("commandrplus", "Plan: ", "\n"),
        # the same opener; the block's closer written only before calls (alone it is glued to the turn's end)
        ("mathgenie", "<|text|>", "<|endofblock|>"),
    ],
)
def test_the_wrapper_beside_calls_is_learned(name: str, start: str, end: str) -> None:
    spec = analyze(load_template(SHAPES / f"{name}-like.jinja")).spec
    assert (spec.content.with_calls_start, spec.content.with_calls_end) == (start, end)


def test_a_conclusion_after_the_calls_is_no_wrapper_beside_them() -> None:
    """GUI-Owl writes its '<conclusion>' after the calls: the text is not before them, nothing is learned."""
    spec = analyze(load_template(SHAPES / "guiowl-like.jinja")).spec
    assert spec.content.with_calls_start == spec.content.with_calls_end == ""


def test_either_wrapper_is_read_as_the_answer() -> None:
    assert _read(REPORT, "<report>\nChecking.\n</report>\n" + CALL) == (
        "Checking.",
        [("get_weather", {"city": "Oslo"})],
    )
    assert _read(REPORT, "<answer>\nIt is sunny.\n</answer>") == ("It is sunny.", [])


def test_a_label_before_the_calls_is_read_off_a_plain_answer() -> None:
    spec = replace(REPORT, content=ContentSpec(with_calls_start="Plan: ", with_calls_end="\n"))
    assert _read(spec, "Plan: Look it up.\n" + CALL) == ("Look it up.", [("get_weather", {"city": "Oslo"})])
    assert _read(spec, "It is sunny.") == ("It is sunny.", [])


def test_the_sample_writer_writes_the_wrapper_beside_calls_only() -> None:
    call = SampleCall("get_weather", {"city": "Oslo"})
    beside = sample_output(REPORT, content="Checking.", calls=[call], end=False)
    assert beside.startswith("<report>\nChecking.\n</report>\n<tool_call>")
    assert sample_output(REPORT, content="Sunny.", end=False) == "<answer>\nSunny.\n</answer>"
    assert _read(REPORT, beside) == ("Checking.", [("get_weather", {"city": "Oslo"})])


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(1, 120), max_size=20), one_by_one=st.booleans())
def test_streaming_reads_the_wrapper_beside_calls_as_one_shot_does(cuts: list[int], one_by_one: bool) -> None:
    text = "<report>\nChecking <b>.\n</report>\n" + CALL + "<|im_end|>"
    streamed = streamed_message(REPORT, text, cut_points(text, cuts, one_by_one), [WEATHER])
    assert streamed == parse(REPORT, text, [WEATHER]).message
    assert streamed.content.strip() == "Checking <b>."


def test_the_spec_round_trips_and_an_older_file_loads() -> None:
    from workbench.export import check_spec_schema

    data = REPORT.to_dict()
    assert data["content"]["with_calls_start"] == "<report>\n"
    assert FormatSpec.from_dict(data) == REPORT
    assert check_spec_schema(data) == []
    older = REPORT.to_dict()
    older["version"] = 6
    del older["content"]["with_calls_start"], older["content"]["with_calls_end"]
    assert FormatSpec.from_dict(older).content.with_calls_start == ""
    data["version"] = 99
    with pytest.raises(SpecError):
        FormatSpec.from_dict(data)


def test_the_response_template_opens_the_answer_with_either_wrapper() -> None:
    content = build_response_template(REPORT)["fields"]["content"]
    assert "report" in content["open_pattern"] and "answer" in content["open_pattern"]
    plain = replace(REPORT, content=ContentSpec(with_calls_start="Plan: ", with_calls_end="\n"))
    with pytest.raises(Unsupported, match="beside calls"):
        build_response_template(plain)


def test_the_prompts_role_token_is_no_answer_wrapper() -> None:
    """Command R+'s probes took '<|CHATBOT_TOKEN|>' ... '<|END_OF_TURN_TOKEN|>' for the answer's wrapper: the
    prompt writes the token and no output does, so a response template that opened the answer there read
    no answer.  The learned turn keeps a wrapper only where an output writes its opener."""
    spec = analyze(load_template(SHAPES / "commandrplus-like.jinja")).spec
    assert (spec.content.mode, spec.content.start, spec.content.end) == ("plain", "", "")
    assert spec.content.with_calls_start == "Plan: "
