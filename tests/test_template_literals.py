"""The literal units a template writes (``workbench.template.literals``): evidence of where markers begin.

A unit held by another splits it into remainders (``<|END_RESPONSE|><|END_OF_TURN_TOKEN|>`` gives
``<|END_RESPONSE|>``); a unit found only across the edge of two others is a coincidence of characters and
must not (``##think####/think##`` beside a ``### `` heading gave ``##think`` and ``#/think##``, which cut
the reasoning marker in two: fuzz seeds 300312, 400104, 750332, 750441).
"""

from __future__ import annotations

from workbench.template.literals import template_literals

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
