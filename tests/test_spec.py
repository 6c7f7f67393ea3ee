from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.runtime.spec import (
    CONTENT_MODES,
    REASONING_MODES,
    TOOL_FORMATS,
    ContentSpec,
    FormatSpec,
    ReasoningSpec,
    SpecError,
    ToolsSpec,
)

markers = st.text(max_size=12)


@st.composite
def specs(draw: st.DrawFn) -> FormatSpec:
    return FormatSpec(
        reasoning=ReasoningSpec(draw(st.sampled_from(REASONING_MODES)), draw(markers), draw(markers)),
        content=ContentSpec(draw(st.sampled_from(CONTENT_MODES)), draw(markers), draw(markers)),
        tools=ToolsSpec(
            format=draw(st.sampled_from(TOOL_FORMATS)),
            call_start=draw(markers),
            parameter_order=tuple(draw(st.lists(markers, max_size=3))),
            fun_name_is_key=draw(st.booleans()),
        ),
        preserved_tokens=tuple(draw(st.lists(markers, max_size=4))),
    )


@given(specs())
def test_spec_round_trips_through_json_losslessly(spec: FormatSpec) -> None:
    assert FormatSpec.from_json(spec.to_json()) == spec
    assert FormatSpec.from_json(spec.to_json()).to_json() == spec.to_json()


def test_unknown_field_is_rejected_with_its_path() -> None:
    data = FormatSpec().to_dict()
    data["tools"]["call_strat"] = "<x>"
    with pytest.raises(SpecError, match=r"spec\.tools: unknown field\(s\) call_strat"):
        FormatSpec.from_dict(data)


def test_bad_enum_value_names_the_allowed_values() -> None:
    data = FormatSpec().to_dict()
    data["reasoning"]["mode"] = "sometimes"
    with pytest.raises(SpecError, match=r"spec\.reasoning\.mode: 'sometimes' is not one of none"):
        FormatSpec.from_dict(data)


def test_newer_version_is_refused() -> None:
    data = FormatSpec().to_dict()
    data["version"] = 99
    with pytest.raises(SpecError, match="newer"):
        FormatSpec.from_dict(data)


def test_truncated_json_gives_a_spec_error() -> None:
    text = FormatSpec().to_json()
    with pytest.raises(SpecError, match="not valid JSON"):
        FormatSpec.from_json(text[: len(text) // 2])


def test_edit_marks_the_spec_as_edited_and_validates_the_value() -> None:
    spec = FormatSpec().with_edit(**{"tools.call_start": "<tool_call>", "reasoning.mode": "tag_based"})
    assert spec.tools.call_start == "<tool_call>"
    assert spec.reasoning.mode == "tag_based"
    assert spec.provenance.edited
    with pytest.raises(SpecError):
        FormatSpec().with_edit(**{"reasoning.mode": "bogus"})


def test_all_markers_lists_non_empty_markers_longest_first() -> None:
    spec = FormatSpec(
        reasoning=ReasoningSpec("tag_based", "<think>", "</think>"),
        tools=ToolsSpec(format="json_native", section_start="<tool_call>", name_field="name"),
    )
    assert spec.all_markers() == ("<tool_call>", "</think>", "<think>")
    assert "name" not in json.dumps(spec.all_markers())


def test_a_marker_inside_a_longer_one_ends_nothing_and_opens_nothing() -> None:
    """':::' ends a turn and ':::reasoning' opens reasoning (pandoc fenced divs, the tessel-like mimic): the
    end marker inside the start is no end; an answer header that holds the reasoning start opens no
    reasoning (Kimi K3's '<|sep|>')."""
    spec = FormatSpec(
        reasoning=ReasoningSpec(mode="tag_based", start=":::reasoning\n", end="\n:::\n"),
        end_markers=("::::", ":::"),
    )
    assert spec.output_start_stage(generation_prompt="::::assistant\n:::reasoning\nThe user") == "reasoning"
    assert spec.output_start_stage(generation_prompt="::::user\nhi\n::::\n::::assistant\n") == "start"
    kimi = FormatSpec(
        reasoning=ReasoningSpec(mode="forced_open", start="<|sep|>", end="<|close|>think"),
        content=ContentSpec(mode="always_wrapped", start="<|sep|><|open|>response<|sep|>", end="<|close|>"),
    )
    assert (
        kimi.output_start_stage(generation_prompt='role="assistant"<|sep|><|open|>response<|sep|>')
        == "answer"
    )
