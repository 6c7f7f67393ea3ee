"""An argument written twice (issue 13, 4c): one-shot and streamed agree on the value kept (the last, as JSON
decoders do) and both say so, for every family that reads arguments."""

from __future__ import annotations

import pytest

from tests.test_formats_values import PYTHONIC
from workbench.runtime.parsing import parse, parse_events
from workbench.testing.reference_specs import QWEN3_LIKE, XML_TAGGED

CASES = {
    "json": (
        QWEN3_LIKE,
        '<tool_call>\n{"name": "f", "arguments": {"a": 1, "b": 0, "a": 2}}\n</tool_call>',
        2,
    ),
    "tagged": (
        XML_TAGGED,
        "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n<parameter=a>\ny\n</parameter>\n"
        "</function>\n</tool_call>",
        "y",
    ),
    "pythonic": (PYTHONIC, "<|tool_call_start|>[f(a=1, a=2)]<|tool_call_end|>", 2),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_the_last_value_is_kept_and_said_one_shot_and_streamed(kind: str) -> None:
    spec, text, last = CASES[kind]
    one = parse(spec, text)
    _, streamed = parse_events(spec, list(text))
    for result in (one, streamed):
        assert result.message.tool_calls[0].arguments_value()["a"] == last
        codes = [d.code for d in result.diagnostics]
        assert codes.count("W-ARGS-DUPLICATE-KEY") == 1, result.diagnostics
    assert one.to_contract() == streamed.to_contract()
