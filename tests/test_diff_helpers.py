"""The diff primitives: llama.cpp's own helper cases (from ../shared) plus our own properties.

Markers come from comparison, not from their shape (issue 18): :func:`diff_split` and :func:`segmentize`
know where a marker begins only from evidence, the literal text the template writes whole and its
tokenizer's added tokens (:class:`Evidence`).  llama.cpp's helper cases recognise ``<...>`` and ``[...]`` by
their shape; here each runs under the evidence the template that wrote it gives: the tags it writes as
literals (``'<tag>'``, ``'<|START_RESPONSE|>'``), listed per case below.  Without evidence nothing is a
marker and a cut is the plain common prefix (the last tests).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import SHARED
from workbench.analysis.diff import (
    DiffSplit,
    Evidence,
    after_common_suffix,
    diff_split,
    is_marker,
    marker_evidence,
    segmentize,
    until_common_prefix,
)

HELPERS = SHARED / "conformance" / "llamacpp" / "_auto-parser-helpers.json"


def _cases(section: str) -> list[Any]:
    if not HELPERS.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared not present"))]
    data = json.loads(HELPERS.read_text(encoding="utf-8"))
    return [
        pytest.param(c, id=f"line{c.get('source_line', i)}") for i, c in enumerate(data[section]["cases"])
    ]


def _check(split: DiffSplit, check: dict[str, Any]) -> bool:
    parts = split.to_dict()
    kind = check["check"]
    if kind == "starts_with":
        return parts[check["part"]].startswith(check["value"])
    if kind == "contains":
        return check["value"] in parts[check["part"]]
    if kind == "any_nonempty":
        return any(parts[p] for p in check["parts"])
    raise AssertionError(f"unknown check kind {kind}")


#: The literals the templates behind llama.cpp's helper cases write whole (what its shape rule recognises).
_LITERALS = (
    "<tag>",
    "</tag>",
    "<think>",
    "</think>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|START_OF_TURN_TOKEN|>",
    "<|CHATBOT_TOKEN|>",
    "[marker]",
    "<marker>",
    "<hello>",
    "</hello>",
    "[hello]",
    "<world>",
    "[world]",
    "<blue>",
    "<dee>",
    "[hey]",
)


@pytest.mark.shared
@pytest.mark.parametrize("case", _cases("calculate_diff_split"))
def test_llamacpp_diff_split_cases(case: dict[str, Any]) -> None:
    with marker_evidence(Evidence.of(_LITERALS)):
        split = diff_split(case["a"], case["b"])
    for part, value in case.get("expect", {}).items():
        assert getattr(split, part) == value, (part, split)
    for check in case.get("checks", []):
        assert _check(split, check), (check, split)


@pytest.mark.shared
@pytest.mark.parametrize("case", _cases("until_common_prefix"))
def test_llamacpp_until_common_prefix_cases(case: dict[str, Any]) -> None:
    assert until_common_prefix(case["full"], case["left"], case["right"]) == case["expect"]


@pytest.mark.shared
@pytest.mark.parametrize("case", _cases("after_common_suffix"))
def test_llamacpp_after_common_suffix_cases(case: dict[str, Any]) -> None:
    assert after_common_suffix(case["full"], case["left"], case["right"]) == case["expect"]


@pytest.mark.shared
@pytest.mark.parametrize("case", _cases("segmentize_markers"))
def test_llamacpp_segmentize_cases(case: dict[str, Any]) -> None:
    with marker_evidence(Evidence.of(_LITERALS)):
        got = [[s.kind.upper(), s.text] for s in segmentize(case["input"])]
    assert got == case["expect"]


# ----------------------------------------------------------------------------------------- our own cases
def test_half_cut_special_token_moves_out_of_prefix_and_suffix() -> None:
    a = "X<|START_RESPONSE|>hi<|END_RESPONSE|>Y"
    b = "X<|START_ACTION|>[]<|END_ACTION|>Y"
    tokens = ("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_ACTION|>", "<|END_ACTION|>")
    with marker_evidence(Evidence.of(tokens=tokens)):  # a tokenizer's added tokens
        split = diff_split(a, b)
    assert split == DiffSplit(
        "X", "<|START_RESPONSE|>hi<|END_RESPONSE|>", "<|START_ACTION|>[]<|END_ACTION|>", "Y"
    )
    # Without evidence the cut is the plain common prefix and suffix: nothing is a marker by its shape.
    assert diff_split(a, b).prefix == "X<|START_"


def test_json_array_bracket_is_not_mistaken_for_a_marker() -> None:
    """A ``]`` closing a JSON array must stay in the suffix; only identifier-like ``[...]`` are markers."""
    split = diff_split('[{"name": "foofoo", "arguments": {}}]', '[{"name": "barbar", "arguments": {}}]')
    assert split.suffix == '", "arguments": {}}]'
    assert (split.left, split.right) == ("foofoo", "barbar")


def test_a_name_after_a_literal_tag_opening_is_the_diff() -> None:
    """``'<function=' + name + '>'``: the literal is the template's, the name the variable part."""
    with marker_evidence(Evidence.of(["<function=", ">\n{}"])):
        split = diff_split("<function=foofoo>\n{}", "<function=barbar>\n{}")
    assert (split.prefix, split.left, split.right) == ("<function=", "foofoo", "barbar")
    assert split.suffix == ">\n{}"


def test_a_tag_written_whole_is_never_cut() -> None:
    """A template that writes the whole tag as one literal per name: the cut moves out of it."""
    with marker_evidence(Evidence.of(["<function=foofoo>", "<function=barbar>"])):
        split = diff_split("<function=foofoo>\n{}", "<function=barbar>\n{}")
    assert (split.prefix, split.left, split.right, split.suffix) == (
        "",
        "<function=foofoo>",
        "<function=barbar>",
        "\n{}",
    )


def test_differing_units_that_end_alike_are_not_cut() -> None:
    """A prompt that ends with '</think>' when thinking is off and '<think>' when on (DeepSeek V3.2): the
    middles are each a whole unit, and share 'think>' at their end; the suffix must not take it."""
    with marker_evidence(Evidence.of(["<｜Assistant｜>", "<think>", "</think>"])):
        split = diff_split("<｜Assistant｜></think>", "<｜Assistant｜><think>")
    assert (split.prefix, split.suffix) == ("<｜Assistant｜>", "")
    assert (split.left, split.right) == ("</think>", "<think>")
    # Phi-4-mini: a history ends with '<|endoftext|>', a prompt with '<|assistant|>' (both end in '|>')
    with marker_evidence(Evidence.of(["<|assistant|>", "<|end|>", "<|endoftext|>"])):
        split = diff_split("<|user|>hi<|end|><|endoftext|>", "<|user|>hi<|end|><|assistant|>")
    assert (split.left, split.right, split.suffix) == ("<|endoftext|>", "<|assistant|>", "")


def test_a_short_unit_across_two_written_ones_is_no_boundary() -> None:
    """Hash-spelled tags back to back: the markdown '###' the tool list writes is seen across '##/id##' and
    '##param##'; it must not let the cut fall two characters into '##param##'."""
    units = ["##/id##", "##param##", "##/param##", "##/function##", "###"]
    with marker_evidence(Evidence.of(units)):
        split = diff_split("##/id####/function##", "##/id####param##a##/param####/function##")
    assert split.prefix == "##/id##"
    assert split.right == "##param##a##/param##"


def test_a_stray_less_than_on_another_line_does_not_move_the_prefix() -> None:
    a = "if a < b\nthen X"
    b = "if a < b\nthen Y"
    assert diff_split(a, b).prefix == "if a < b\nthen "
    with marker_evidence(Evidence.of(["<tool>", "</tool>"])):
        assert diff_split(a, b).prefix == "if a < b\nthen "


def test_segmentize_keeps_fullwidth_special_tokens_whole() -> None:
    tokens = ("<｜tool▁call▁begin｜>", "<｜tool▁sep｜>")
    with marker_evidence(Evidence.of(tokens=tokens)):
        segs = segmentize("<｜tool▁call▁begin｜>get<｜tool▁sep｜>{}")
    assert [s.text for s in segs if s.is_marker] == ["<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"]
    assert not [s for s in segmentize("<｜tool▁call▁begin｜>get") if s.is_marker]  # no shape rule


def test_is_marker_is_one_unit_of_evidence_whatever_its_spelling() -> None:
    with marker_evidence(Evidence.of(["[TOOL_CALLS]", '<invoke name="', "<<reasoning>>", "##x##"])):
        assert is_marker("[TOOL_CALLS]")
        assert is_marker("<<reasoning>>") and is_marker("##x##")
        assert not is_marker('["a", "b"]')
        assert not is_marker("[TOOL_CALLS] and prose")
    assert not is_marker("[TOOL_CALLS]")  # no evidence, no marker


@given(st.text(alphabet="ab<>[]|x \n", max_size=30), st.text(alphabet="ab<>[]|x \n", max_size=30))
def test_diff_split_reassembles_both_inputs(a: str, b: str) -> None:
    split = diff_split(a, b)
    assert split.text_a == a
    assert split.text_b == b


@given(st.text(alphabet="ab<>[]|x \n", max_size=40))
def test_segmentize_reassembles_its_input(text: str) -> None:
    assert "".join(s.text for s in segmentize(text)) == text


def test_two_whole_literals_sharing_a_head_part_before_it() -> None:
    """s1 writes '<|im_start|>think\\n' and '<|im_start|>answer\\n' whole, and '<|im_start|>' alone too: the
    renders part after the shared head, but the markers are the whole literals, not the words after it
    (a plain 'answer' in the text was read as the answer's marker)."""
    heads = ["<|im_start|>think", "<|im_start|>answer"]
    ev = Evidence.of(["<|im_start|>", *heads], whole=heads)
    answer = "<|im_start|>assistant\n<|im_start|>answer\nIt is 42.<|im_end|>"
    reasoned = "<|im_start|>assistant\n<|im_start|>think\nHm.\n<|im_start|>answer\nIt is 42.<|im_end|>"
    with marker_evidence(ev):
        inserted = diff_split(answer, reasoned)
        swapped = diff_split("x\n<|im_start|>answer\n", "x\n<|im_start|>think\n")
    assert (inserted.left, inserted.right) == ("", "<|im_start|>think\nHm.\n")
    assert (swapped.left, swapped.right) == ("<|im_start|>answer", "<|im_start|>think")
    with marker_evidence(Evidence.of(["<|im_start|>", *heads])):  # not whole: the head's edge is a cut
        assert diff_split(answer, reasoned).right == "think\nHm.\n<|im_start|>"
