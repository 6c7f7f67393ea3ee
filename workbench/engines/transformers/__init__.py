"""transformers: ``tokenizer.parse_response`` reads a ``response_template`` (the richest profile); its
results keep the template's call ids."""

from __future__ import annotations

from workbench.engines.base import Engine

ENGINE = Engine(
    name="transformers",
    display="transformers",
    distribution="transformers",
    response_profile="transformers",
    compares_ids=True,
)
