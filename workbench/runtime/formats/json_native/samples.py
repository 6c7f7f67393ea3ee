"""JSON_NATIVE samples: each call is one JSON object (``{"name": ..., "arguments": {...}}``) as ``tojson``
writes it, behind the spec's markers, in an array or a code block when the template does so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.values import dumps

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The calls as the spec's template writes them (JSON values need no schema: ``tools`` is unused)."""
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
        objects.append(dumps(obj))
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
