"""JSON_NATIVE export hooks: the tool-call region of a transformers ``response_template``."""

from __future__ import annotations

import json
import re
from typing import Any

from workbench.formats.response_parts import ResponseGap, call_closer, call_transform, lit, optional, seq
from workbench.runtime.spec import FormatSpec


def response_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    """Calls are JSON objects: read as ``json`` content, one region per call (or one array)."""
    t = spec.tools
    section_open, section_close = lit(t.section_start), lit(t.section_end)
    if t.array_wrapped:
        opener = lit(t.section_start or t.call_start or t.code_block_marker)
        closer = lit(t.section_end or t.call_end)
        if not opener:
            raise ResponseGap("a bare JSON array with no marker before it cannot start a region")
        fields: dict[str, Any] = {
            "open_pattern": opener,
            "content": "json",
            "transform_each": True,
            "transform": call_transform(spec, from_captures=False, each=True),
        }
        if closer:
            fields["close_pattern"] = closer
        if t.code_block_marker:
            fields["open_pattern"] = seq(opener, r"```(?:\w+)?")
            fields["close_pattern"] = seq("```", closer) if closer else "```"
        return {"tool_calls": fields}
    opener = lit(t.call_start) or section_open
    fields = {"content": "json", "repeats": True, "transform": call_transform(spec, from_captures=False)}
    if opener:
        fields["open_pattern"] = seq(optional(section_open), opener) if lit(t.call_start) else opener
        closer = call_closer(lit(t.call_end), section_close, opener) if lit(t.call_end) else section_close
        # With no closing marker a call ends at the next one or at the end of the output (SGLang drops a
        # call the end of the stream cuts off unless its closer matches there).
        fields["close_pattern"] = closer or rf"(?={opener})|\Z"
    else:
        # Bare JSON calls (Llama 3.x): a call starts where an object opens with the name key, and ends
        # where the object is followed by another call or by the end of the output.
        key = re.escape(json.dumps(t.name_field))
        fields["open_pattern"] = rf"(?=\{{\s*{key}\s*:)"
        fields["close_pattern"] = rf"(?<=\}})(?=\s*(?:[;,]?\s*\{{\s*{key}\s*:|\Z))"
    return {"tool_calls": fields}
