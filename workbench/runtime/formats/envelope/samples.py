"""Outputs written as a reply envelope (spec v6): what a model following the spec writes.

Reasoning the spec marks outside the object comes first, in its markers; then the object with its members
in order: texts as JSON strings, the calls as the tools family's JSON objects, other members with the
first value the template writes; a member with nothing to hold is written as the template writes it
empty, or left out.  What the generation prompt wrote of the object (``prompt.output_prefix``) is left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.runtime.formats.base import SampleCall

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def _call_object(spec: FormatSpec, call: SampleCall) -> dict[str, Any]:
    t = spec.tools
    if t.fun_name_is_key:
        return {call.name: dict(call.arguments)}
    if spec.envelope.flat_calls:
        return {t.name_field or "name": call.name, **dict(call.arguments)}
    inner: dict[str, Any] = {
        t.name_field or "name": call.name,
        t.args_field or "arguments": dict(call.arguments),
    }
    obj = {t.function_field: inner} if t.function_field else inner
    if call.id and t.id_field:
        obj = {t.id_field: call.id, **obj}
    return obj


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The calls member's value: a list of call objects (one object when the envelope holds one)."""
    env = spec.envelope
    objects = [_call_object(spec, c) for c in calls]
    if not env.calls_list and len(objects) == 1:
        return _dumps(spec, objects[0])
    return "[" + env.item_sep.join(_dumps(spec, o) for o in objects) + "]"


def _dumps(spec: FormatSpec, value: Any) -> str:
    env = spec.envelope
    return json.dumps(value, ensure_ascii=False, separators=(env.item_sep, env.key_sep))


def write_output(
    spec: FormatSpec, reasoning: str, content: str, calls: Sequence[SampleCall], end: bool
) -> str:
    """A whole output following ``spec.envelope``."""
    env = spec.envelope
    prefix = spec.prompt.output_prefix
    opened = "{" in prefix
    head = ""
    if reasoning and not env.key("reasoning"):
        r = spec.reasoning
        head = (reasoning + r.end) if spec.output_starts_in_reasoning() else (r.start + reasoning + r.end)
    members: list[str] = []
    for m in env.members:
        if opened and json.dumps(m.key) in prefix:
            continue
        text = {"content": content, "reasoning": reasoning}.get(m.holds)
        if m.holds in ("content", "reasoning"):
            value = json.dumps(text, ensure_ascii=False) if text else (m.empty[0] if m.empty else None)
        elif m.holds == "calls":
            value = write_calls(spec, calls) if calls else (m.empty[0] if m.empty else None)
        else:
            value = m.values[0] if m.values else None
        if value is not None:
            members.append(json.dumps(m.key, ensure_ascii=False) + env.key_sep + value)
    body = env.item_sep.join(members) + "}"
    tail = spec.end_markers[0] if end and spec.end_markers else ""
    return head + ("" if opened else "{") + body + tail


def output_end(spec: FormatSpec, text: str) -> int | None:
    """Where the reply object ends in ``text`` (the render after the generation prompt): after the
    reasoning the spec marks outside the object, the first JSON object that decodes (with what the prompt
    wrote of it); None when there is none."""
    prefix = spec.prompt.output_prefix if "{" in spec.prompt.output_prefix else ""
    start = 0
    end_mark = spec.reasoning.end.strip()
    if not prefix and end_mark and end_mark in text and text.find(end_mark) < max(text.find("{"), 0):
        start = text.find(end_mark) + len(end_mark)
    decoder = json.JSONDecoder()
    at = 0 if prefix else text.find("{", start)
    while at >= 0:
        try:
            value, end = decoder.raw_decode(prefix + text, at)
        except ValueError:
            value, end = None, -1
        if isinstance(value, dict):
            return end - len(prefix)
        if prefix:
            return None
        at = text.find("{", at + 1)
    return None
