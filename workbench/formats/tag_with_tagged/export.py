"""TAG_WITH_TAGGED export hooks: the tool-call region of a transformers ``response_template``."""

from __future__ import annotations

from typing import Any

from workbench.formats.response_parts import ResponseGap, lit, seq
from workbench.formats.tag_calls_export import tag_call_fields
from workbench.runtime.spec import FormatSpec


def response_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    """The name is captured from the call header; each argument is read by transformers' ``xml-inline``."""
    t = spec.tools
    fields = tag_call_fields(spec)
    if not lit(t.arg_name_prefix) or not (lit(t.arg_value_suffix) or lit(t.arg_separator)):
        raise ResponseGap("tagged arguments need a name marker and a value end marker")
    # Whitespace is flexible around markers, but a value keeps its own (one newline of padding aside).
    key = seq(lit(t.arg_name_prefix), r"(?P<key>[^\s<>=\"]+?)", lit(t.arg_name_suffix))
    opener = seq(key, lit(t.arg_value_prefix))
    pattern = opener + r"\s*?\n?(?P<value>.*?)\n?" + lit(t.arg_value_suffix or t.arg_separator)
    fields["content"] = "xml-inline"
    fields["content_args"] = {"tag_pattern": pattern}
    return {"tool_calls": fields}
