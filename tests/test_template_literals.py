"""The literal units a template writes (``workbench.template.literals``): evidence of where markers begin.

A unit held by another splits it into remainders (``<|END_RESPONSE|><|END_OF_TURN_TOKEN|>`` gives
``<|END_RESPONSE|>``); a unit found only across the edge of two others is a coincidence of characters and
must not (``##think####/think##`` beside a ``### `` heading gave ``##think`` and ``#/think##``, which cut
the reasoning marker in two: fuzz seeds 300312, 400104, 750332, 750441).
"""

from __future__ import annotations

from workbench.analysis.diff import Evidence
from workbench.template.literals import template_instances, template_literals

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
