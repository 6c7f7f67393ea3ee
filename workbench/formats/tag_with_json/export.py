"""TAG_WITH_JSON export hooks: the tool-call region of a transformers ``response_template``."""

from __future__ import annotations

from typing import Any

from workbench.formats.tag_calls_export import tag_call_fields
from workbench.runtime.spec import FormatSpec


def response_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    """The name is captured from the call header; the body is one JSON object."""
    fields = tag_call_fields(spec)
    fields["content"] = "json"
    return {"tool_calls": fields}
