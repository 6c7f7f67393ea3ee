"""SGLang (0.5.23): parse policies, and where its plug-in adapter, harness side and known issues live
(``plugin.py``, ``adapter.py``, ``harness.py``, ``issues.py``)."""

from __future__ import annotations

from workbench.engines.base import Engine

ENGINE = Engine(
    name="sglang",
    display="SGLang",
    distribution="sglang",
    parse_profile=True,
    # tool names checked; untyped tagged values decoded as JSON when they parse; one-shot: the whitespace
    # before a call is stripped and an unclosed call is content.
    policies={"check_tool_names": True, "untyped_values": "json"},
    one_shot_policies={"space_before_calls": "strip_json", "unclosed_calls": "content"},
    response_profile="sglang",
    vector_cases=True,
)
