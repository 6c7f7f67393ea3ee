"""The layout's response-template hook: a transformers ``response_template`` for a turn of headed messages.

Each message kind opens a region at its header (the opener is optional: the prompt may have written it)
and closes it at any message's end; a call's region opens at its recipient attribute, whatever else its
header holds and in whatever order (the name is captured after it), and its body is the JSON arguments.
Everything comes from the learned layout and the tools spec's call header; nothing names a format.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.formats.response_parts import ResponseGap
from workbench.runtime.spec import FormatSpec, pattern_literal


def _rx(text: str) -> str:
    return re.escape(text.strip())


def _call_header(spec: FormatSpec) -> tuple[str, str]:
    """(the call header's text before the name, after the opener; the text between name and arguments)."""
    t, lay = spec.tools, spec.layout
    before, after, seen = t.call_start, "", False
    for part in t.pattern.call:
        if part == "$args":
            break
        if part == "$name":
            seen = True
            continue
        if part.startswith("$") and not part.startswith("$$"):
            raise ResponseGap("a call header with an id or a counter has no response-template spelling here")
        if seen:
            after += pattern_literal(part)
        else:
            before += pattern_literal(part)
    if before.startswith(lay.opener):
        before = before[len(lay.opener) :]
    return before, after


def response_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    """Regions for reasoning, the answer and the calls of a headed layout (see the module docstring)."""
    lay = spec.layout
    if not lay.headed:
        from workbench.formats import hooks  # the registry imports this module

        inner = hooks(spec.tools.format)
        if lay.lead or inner is None or inner.response_fields is None:
            raise ResponseGap(
                "a lead the model writes before its answer (history's 'Assistant:') has no "
                "response-template spelling"
                if lay.lead
                else (inner.response_template_gap if inner is not None else "no tool format")
            )
        return inner.response_fields(spec)
    if not lay.closer or spec.tools.pattern.args != "json":
        raise ResponseGap(
            "headed messages without a common header closer, or with non-JSON call bodies, have no "
            "response-template spelling"
        )
    ends = {e.strip() for m in lay.messages for e in m.ends if e.strip()}
    ends |= {e.strip() for e in (spec.tools.call_end, *spec.end_markers) if e.strip()}
    close = "|".join(_rx(e) for e in sorted(ends, key=len, reverse=True))
    opener = f"(?:{_rx(lay.opener)})?"
    out: dict[str, dict[str, Any]] = {}
    for kind, key in (("reasoning", "reasoning_content"), ("content", "content")):
        heads = [_rx(m.header) for m in lay.messages if m.kind == kind]
        if heads:
            out[key] = {
                "open_pattern": opener + "(?:" + "|".join(heads) + ")",
                "close_pattern": close,
                "repeats": True,
                "join": "\n",
            }
    before, _after = _call_header(spec)
    tokens = before.split()
    if not tokens:
        raise ResponseGap(
            "a call header without an attribute before the name has no response-template spelling"
        )
    piece = tokens[-1]
    lead = before[: before.rfind(piece)]
    out["tool_calls"] = {
        "open_pattern": rf"(?:{_rx(lead)}\s*)?{re.escape(piece)}\s*(?P<name>[^\s<]+)[^\n]*?{_rx(lay.closer)}",
        "close_pattern": close,
        "content": "json",
        "repeats": True,
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }
    return out
