"""The literal units a template writes (``workbench.template.literals``): evidence of where markers begin.

A unit held by another splits it into remainders (``<|END_RESPONSE|><|END_OF_TURN_TOKEN|>`` gives
``<|END_RESPONSE|>``); a unit found only across the edge of two others is a coincidence of characters and
must not (``##think####/think##`` beside a ``### `` heading gave ``##think`` and ``#/think##``, which cut
the reasoning marker in two: fuzz seeds 300312, 400104, 750332, 750441).
"""

from __future__ import annotations

from workbench.analysis.diff import Evidence, diff_split, marker_evidence
from workbench.template.literals import (
    template_closed_instances,
    template_instances,
    template_literals,
)

GLUED = (
    "{{ '### ' ~ tools[0].name }}"
    "{% if m.reasoning_content %}{{ '##think##' ~ m.reasoning_content ~ '##/think##' }}"
    "{% else %}{{ '##think####/think##' }}{% endif %}"
)
NESTED = "{{ '<|END_RESPONSE|><|END_OF_TURN_TOKEN|>' }}{{ '<|END_OF_TURN_TOKEN|>' }}"


def test_a_unit_found_across_two_others_splits_nothing() -> None:
    units = template_literals(GLUED)
    assert {"###", "##think##", "##/think##", "##think####/think##"} <= units
    assert not {"##think", "#/think##"} & units


def test_a_unit_held_whole_still_leaves_its_remainders() -> None:
    assert "<|END_RESPONSE|>" in template_literals(NESTED)


#: Arguments as elements named by their key, in a spelling whose closing head is a unit (``<|/``), beside a
#: reasoning closer written whole: fuzz seeds 980210, 990316, 990335 read ``<|/analysis|>`` as ``<|/`` then
#: ``analysis|>``.
KEYED = (
    "{% for k, v in args | items %}{{ '<|' ~ k ~ '|>' ~ v ~ '<|/' ~ k ~ '|>' }}{% endfor %}"
    "{{ '<|analysis|>\\n' ~ r ~ '\\n<|/analysis|>' }}{{ '<|/analysis|>' }}"
)
#: A head whose tail is a unit of its own: the finest reading finds the tail, nothing is read whole.
ROLE = "{{ '<|im_start|>' ~ role ~ '\\n<think>\\n' }}{{ '<|im_start|>assistant\\n<think>' }}"


def test_an_instance_of_a_head_value_tail_is_read_whole() -> None:
    assert "<|/analysis|>" in template_instances(KEYED)
    assert "analysis|>" not in template_literals(KEYED)  # no remainder after the head '<|/'
    evidence = Evidence.of(template_literals(KEYED), whole=template_instances(KEYED))
    segments = evidence.segment("<|/analysis|>x")
    assert [s.text for s in segments] == ["<|/analysis|>", "x"]


def test_a_head_whose_tail_is_a_unit_leaves_the_finest_reading() -> None:
    assert not template_instances(ROLE)
    segments = Evidence.of(template_literals(ROLE)).segment("<|im_start|>assistant\n<think>")
    assert segments[0].text == "<|im_start|>" and segments[-1].text == "<think>"


#: Turn headers '### ROLE' beside a reasoning heading '#### Thoughts' (the heddle-like mimic): the headers'
#: head '###' read first cut the heading into '###' and '# Thoughts'.
HEADINGS = "{{ '### ' ~ role ~ '\\n' }}{{ '#### Thoughts\\n' ~ r ~ '\\n#### Reply\\n' }}"


def test_a_head_with_a_blank_tail_leaves_longer_literals_whole() -> None:
    assert {"#### Thoughts", "#### Reply"} <= template_instances(HEADINGS)
    evidence = Evidence.of(template_literals(HEADINGS), whole=template_instances(HEADINGS))
    assert [s.text for s in evidence.segment("#### Thoughts\nR") if s.kind == "marker"] == ["#### Thoughts"]


#: Markers spelled as HTML comments, the role written between the comment's marks (cmtkv-like, session 14):
#: every marker holds the unit '<!--', and the end of turn was read as '<!--' (every turn cut at the next
#: comment), the reasoning as '-->' ... '<!--'.
COMMENTS = (
    "{{ '<!--' ~ role ~ '-->\\n' ~ text ~ '\\n<!--/' ~ role ~ '-->\\n' }}"
    "{{ '<!--assistant-->\\n' }}{{ '<!--think-->\\n' ~ r ~ '\\n<!--/think-->\\n' }}"
    "{{ '<!--call ' ~ name ~ '-->\\n' }}{{ '\\n<!--/assistant-->\\n' }}"
)


def _comment_evidence() -> Evidence:
    return Evidence.of(
        template_literals(COMMENTS),
        whole=template_instances(COMMENTS),
        closed=template_closed_instances(COMMENTS),
    )


def test_a_tail_written_only_after_a_value_closes_an_instance() -> None:
    closed = template_closed_instances(COMMENTS)
    assert {"<!--/assistant-->", "<!--think-->", "<!--/think-->"} <= closed
    assert "call" not in template_literals(
        COMMENTS
    )  # '<!--call ' is a head of the same shape, not '<!--' + unit
    markers = [s.text for s in _comment_evidence().segment("x\n<!--/assistant-->\n") if s.kind == "marker"]
    assert markers == ["<!--/assistant-->"]


def test_two_texts_do_not_part_inside_a_closed_marker() -> None:
    with marker_evidence(_comment_evidence()):
        split = diff_split("<!--assistant-->\n<!--think-->\nR", "<!--assistant-->\n<!--call f-->\n")
    assert split.prefix == "<!--assistant-->\n"


#: A closer's value that holds a unit of its own is markup, not a word: the header is read as its markers.
CHANNEL_HEADER = (
    "{{ '<|im_start|>' ~ role ~ '<|im_sep|>' }}{{ '<|channel|>' }}"
    "{{ '<|im_start|>assistant<|channel|>response<|im_sep|>' }}"
)
#: Role tokens written as '<|' ~ role ~ '_end|>' (Apertus-like): no unit '<|assistant' in front of the tail.
ROLE_TOKENS = "{{ '<|' ~ role ~ '_end|>' }}{{ '<|assistant_end|>' }}{{ '<|assistant_start|>' }}"


def test_markup_between_head_and_closer_is_no_instance() -> None:
    assert "<|im_start|>assistant<|channel|>response<|im_sep|>" not in template_instances(CHANNEL_HEADER)


def test_no_unit_in_front_of_a_closer() -> None:
    units = template_literals(ROLE_TOKENS)
    assert "<|assistant_end|>" in units and "<|assistant" not in units


#: Tags written from a name set once to a string (Hunyuan v4: every tag carries the checkpoint suffix):
#: '<tool_call' + S + '>' is one literal in every render, and was cut at its head '<tool_call'.
SUFFIXED = (
    "{%- set S = ':6124c78e' -%}"
    "{{ '<tool_call' + S + '>' + name + '</tool_call' + S + '>' }}"
    "{{ '<think' + S + '>' + r + '</think' + S + '>' }}"
)


def test_a_tag_written_with_a_constant_name_is_one_unit() -> None:
    units = template_literals(SUFFIXED)
    assert {"<tool_call:6124c78e>", "</tool_call:6124c78e>", "</think:6124c78e>"} <= units
    assert "</tool_call:6124c78e>" in template_closed_instances(SUFFIXED)
