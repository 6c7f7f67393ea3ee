"""Model outputs written from a FormatSpec: what a model following the spec would emit.

The inverse of parsing, used where an output is needed without a model: round-trip tests (write, parse,
compare with what was written), property and fuzz tests over every spec, the streaming benchmark, and demo
text for the TUI.  Markers are written exactly as the spec holds them, whitespace included, as the
template renders them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.parsing.markers import core_of
from workbench.spec import FormatSpec


@dataclass(frozen=True)
class SampleCall:
    """One call to write: a name, its arguments (a JSON object) and an optional id."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _py(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    return repr(value)


def reasoning_opened(spec: FormatSpec) -> bool:
    """Whether the prompt of ``spec`` leaves the output inside reasoning (thinking enabled)."""
    return spec.reasoning.mode in ("forced_open", "delimiter") or spec.prompt.thinking_opened


def write_reasoning(spec: FormatSpec, text: str) -> str:
    r = spec.reasoning
    if r.mode == "none" or not text or not core_of(r.end):
        return ""
    start = "" if reasoning_opened(spec) else r.start
    return f"{start}{text}{r.end}"


def write_content(spec: FormatSpec, text: str, *, with_reasoning: bool) -> str:
    c = spec.content
    if not text:
        return ""
    if c.mode == "always_wrapped" or (c.mode == "wrapped_with_reasoning" and with_reasoning):
        return f"{c.start}{text}{c.end}"
    return text


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall]) -> str:
    """The tool-call part of an output (empty when the spec has no tool format)."""
    if not calls:
        return ""
    t = spec.tools
    fmt = t.format
    if fmt == "json_native":
        return _json_native(spec, calls)
    if fmt in ("tag_with_json", "tag_with_tagged"):
        body = (t.call_separator or "").join(_tag_call(spec, c, i) for i, c in enumerate(calls))
        return f"{t.section_start}{body}{t.section_end}"
    if fmt == "pythonic":
        inner = ", ".join(
            f"{c.name}(" + ", ".join(f"{k}={_py(v)}" for k, v in c.arguments.items()) + ")" for c in calls
        )
        start, end = t.section_start or t.call_start, t.section_end or t.call_end
        return f"{start}[{inner}]{end}"
    if fmt == "recipient":
        prefix = core_of(t.call_start) or ">>>"
        return "".join(f"{prefix}{c.name}\n{_json(dict(c.arguments))}" for c in calls)
    if fmt == "harmony":
        return "".join(
            f"<|start|>assistant<|channel|>commentary to=functions.{c.name} <|constrain|>json<|message|>"
            f"{_json(dict(c.arguments))}<|call|>"
            for c in calls
        )
    return ""


def _json_native(spec: FormatSpec, calls: Sequence[SampleCall]) -> str:
    t = spec.tools
    objects = []
    for c in calls:
        args = dict(c.arguments)
        if t.fun_name_is_key:
            obj: dict[str, Any] = {c.name: args}
        else:
            inner: dict[str, Any] = {t.name_field or "name": c.name, t.args_field or "arguments": args}
            obj = {t.function_field: inner} if t.function_field else inner
        if c.id and (t.id_field or t.gen_id_field):
            obj = {t.id_field or t.gen_id_field: c.id, **obj}
        objects.append(_json(obj))
    if t.array_wrapped:
        text = t.call_start + "[" + ", ".join(objects) + "]" + t.call_end
    else:
        text = (t.call_separator or "").join(f"{t.call_start}{o}{t.call_end}" for o in objects)
        if not (t.section_start or t.call_start or t.code_block_marker) and len(objects) > 1:
            text = "; ".join(objects)
    if t.code_block_marker:
        lang = t.code_block_language
        return f"{t.code_block_marker}\n```{lang}\n{text}\n```"
    return f"{t.section_start}{text}{t.section_end}"


def _tag_call(spec: FormatSpec, call: SampleCall, index: int) -> str:
    t = spec.tools
    name = call.name
    if t.function_namespace:
        name = f"{t.function_namespace}{name}:{index}"
    call_id = f"{t.id_prefix}{call.id}{t.id_suffix}" if call.id and t.id_prefix else ""
    pre = call_id if t.id_position == "pre_func_name" else ""
    between = call_id if t.id_position == "between_func_and_args" else ""
    post = call_id if t.id_position == "post_args" else ""
    head = f"{t.call_start}{pre}{t.name_prefix}{name}{t.name_suffix}{between}"
    if core_of(t.args_start) != core_of(t.name_suffix):
        head += t.args_start
    if t.format == "tag_with_json":
        body = _json(dict(call.arguments)) + t.args_end
    else:
        parts = []
        for k, v in call.arguments.items():
            value = v if isinstance(v, str) else _json(v)
            parts.append(
                f"{t.arg_name_prefix}{k}{t.arg_name_suffix}{t.arg_value_prefix}{value}{t.arg_value_suffix}"
            )
        body = (t.arg_separator or "").join(parts) + t.args_end
    return f"{head}{body}{t.func_close}{post}{t.call_end}"


def sample_output(
    spec: FormatSpec,
    *,
    reasoning: str = "",
    content: str = "",
    calls: Sequence[SampleCall] = (),
    end: bool = True,
) -> str:
    """A whole output: reasoning, content, calls and the first end-of-turn marker (when ``end``)."""
    if spec.tools.format == "harmony":
        out = ""
        if reasoning:
            out += f"<|channel|>analysis<|message|>{reasoning}<|end|>"
        if content:
            out += f"<|start|>assistant<|channel|>final<|message|>{content}" + ("<|end|>" if calls else "")
        out += write_calls(spec, calls)
        if end and not calls:
            out += "<|return|>"
        return out
    r = write_reasoning(spec, reasoning)
    c = write_content(spec, content, with_reasoning=bool(r))
    out = r + c + write_calls(spec, calls)
    if end and spec.end_markers:
        out += spec.end_markers[0]
    return out
