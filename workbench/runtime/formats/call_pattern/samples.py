"""``call_pattern`` samples: calls written part by part from the pattern (the inverse of the parser)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.formats.call_pattern.encoding import write as write_encoded
from workbench.runtime.spec import ArgVariant, CallPattern, pattern_literal
from workbench.runtime.values import json_type, write_python

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def variant_for(pattern: CallPattern, type_name: str) -> ArgVariant | None:
    """The way a value of ``type_name`` is written (an integer falls back to the number way)."""
    for wanted in (type_name, "number" if type_name == "integer" else ""):
        for v in pattern.arguments:
            if wanted and wanted in v.types:
                return v
    return None


def write_value(value: Any, how: str, pattern: CallPattern) -> str:
    if how == "raw" and isinstance(value, str):
        return value
    if how == "encoded":
        return write_encoded(value, pattern.encoding)
    if how == "python":
        return write_python(value)
    return json.dumps(value, ensure_ascii=False)


def write_arguments(pattern: CallPattern, arguments: Mapping[str, Any], arg_separator: str) -> str:
    """The arguments slot as the pattern writes it."""
    if pattern.args == "json":
        return json.dumps(dict(arguments), ensure_ascii=False)
    if pattern.args == "object":
        return write_encoded(dict(arguments), pattern.encoding)
    out = []
    for key, value in arguments.items():
        variant = variant_for(pattern, json_type(value))
        if variant is None:
            raise ValueError(f"the pattern has no way to write a {json_type(value)} argument")
        text = ""
        for part in variant.parts:
            if part == "$key":
                text += str(key)
            elif part == "$value":
                text += write_value(value, variant.value, pattern)
            else:
                text += pattern_literal(part)
        out.append(text)
    return arg_separator.join(out)


def write_call(spec: FormatSpec, call: SampleCall, index: int) -> str:
    t = spec.tools
    p = t.pattern
    text = t.call_start
    for part in p.call:
        if part == "$name":
            text += call.name
        elif part == "$id":
            text += call.id or f"call_{index}"
        elif part == "$index":
            text += str(index + p.index_base)
        elif part == "$args":
            text += write_arguments(p, call.arguments, t.arg_separator)
        else:
            text += pattern_literal(part)
    return text + t.call_end


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The section with every call, as a template with this pattern writes it."""
    t = spec.tools
    body = (t.call_separator or "").join(write_call(spec, c, i) for i, c in enumerate(calls))
    return f"{t.section_start}{body}{t.section_end}"
