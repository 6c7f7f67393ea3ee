"""vLLM's known issues with the families' outputs (:mod:`workbench.engines.issues`)."""

from __future__ import annotations

from workbench.engines.issues import EngineIssue

NULL_AS_NONE = EngineIssue(
    "vllm/tool_parsers/utils.py:coerce_to_schema_type (called by vllm/parser/engine/parser_engine.py)",
    "a parameter that may be null is read as null only when spelled `null`, and the template writes "
    "Jinja's `None` for it; the value comes back as the string 'None'",
    ("tag_with_tagged",),
    ("null_argument",),
)
ISSUES: dict[str, EngineIssue] = {"qwen3_coder": NULL_AS_NONE, "seed_oss": NULL_AS_NONE}
