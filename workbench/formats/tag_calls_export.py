"""What the two marker-delimited families share in a transformers ``response_template``: the call header
captures the name (and id), the closing markers end the region; each family says how its body is read."""

from __future__ import annotations

from typing import Any

from workbench.formats.response_parts import (
    ResponseGap,
    call_closer,
    call_transform,
    lit,
    name_regex,
    optional,
    seq,
)
from workbench.runtime.spec import FormatSpec


def tag_call_fields(spec: FormatSpec) -> dict[str, Any]:
    """The ``tool_calls`` region without its ``content`` (the family adds how the body is read)."""
    t = spec.tools
    section_open, section_close = lit(t.section_start), lit(t.section_end)
    header = seq(optional(section_open), lit(t.call_start), name_regex(spec), lit(t.args_start))
    if not header.strip():
        raise ResponseGap("the call header has no markers")
    end = seq(lit(t.args_end), lit(t.func_close), lit(t.call_end))
    closer = (
        call_closer(end, section_close, lit(t.call_start) or lit(t.name_prefix)) if end else section_close
    )
    fields: dict[str, Any] = {
        "open_pattern": header,
        "repeats": True,
        "transform": call_transform(spec, from_captures=True),
    }
    if closer:
        fields["close_pattern"] = closer
    else:
        nxt = lit(t.call_start) or lit(t.name_prefix)
        if nxt:
            # The call ends where the next one starts, or at the end of the output: SGLang drops a call
            # whose region is cut off by the end of the stream unless its closer matches there.
            fields["close_pattern"] = rf"(?={nxt})|\Z"
    return fields
