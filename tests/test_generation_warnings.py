"""A generation with the tiny model writes no deprecation warnings (they used to reach the TUI's stderr at
every step: the KV cache was passed as ``past_key_values``, which transformers 5.2x renamed to ``cache``)."""

from __future__ import annotations

import logging
import warnings

import pytest

from workbench.generation.kv import NEW_NAME, OLD_NAME, cache_name
from workbench.runtime.chat import Message


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_tiny_generation_with_rewind_emits_no_warnings() -> None:
    pytest.importorskip("xgrammar")
    from workbench.generation.generate import Generator
    from workbench.generation.tiny import load_tiny
    from workbench.tui.demo import demo_analysis

    loaded = load_tiny()
    spec = demo_analysis().spec
    handler = _Records()
    tf_logger = logging.getLogger("transformers")
    tf_logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gen = Generator(loaded, spec, messages=[Message(role="user", content="hi")], max_new_tokens=12)
            gen.run(6)
            gen.rewind(3)  # the cache crop and the re-fed token go through the same forward
            gen.run(4)
    finally:
        tf_logger.removeHandler(handler)
    assert len(gen.steps) >= 4
    assert [str(w.message) for w in caught] == []
    assert [line for line in handler.lines if "deprecat" in line.lower()] == []


def test_the_cache_argument_name_follows_the_models_forward() -> None:
    class New:
        def forward(self, input_ids: object = None, cache: object = None) -> None: ...

    class Old:
        def forward(self, input_ids: object = None, past_key_values: object = None) -> None: ...

    assert cache_name(New()) == NEW_NAME
    assert cache_name(Old()) == OLD_NAME
