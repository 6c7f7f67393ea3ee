"""The vocabulary the families' response-template hooks write in: regex pieces of a transformers
``response_template`` region, and :class:`ResponseGap` for what a response template cannot express.

The ``response-template`` export target (:mod:`workbench.export.response_template`) builds the reasoning and
content regions and asks the format's family (``formats/<name>/export.py``) for the tool-call region; both
speak this module's language, which sits with the families so that the families never import the export.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.runtime.errors import WorkbenchError
from workbench.runtime.spec import FormatSpec


class ResponseGap(WorkbenchError):
    """A response template cannot express this spec (the message names the feature); the export turns it
    into :class:`workbench.proofs.Unsupported`."""


def lit(marker: str) -> str:
    """A marker as a regex, surrounding whitespace made flexible (templates pad markers with newlines)."""
    core = marker.strip()
    return re.escape(core) if core else ""


def seq(*parts: str) -> str:
    """Join regex parts with optional whitespace between them."""
    return r"\s*".join(p for p in parts if p)


def call_transform(spec: FormatSpec, *, from_captures: bool, each: bool = False) -> dict[str, Any]:
    """The transform turning one parsed call into an OpenAI tool call.

    ``each``: the transform is applied to every element of a JSON array, whose keys are then top-level
    placeholders (``{name}``) rather than paths under ``{content}``.
    """
    t = spec.tools
    if from_captures:
        function: dict[str, Any] = {"name": "{name}", "arguments": "{content}"}
        out: dict[str, Any] = {"type": "function", "function": function}
        if t.id_position in ("pre_func_name", "between_func_and_args") or t.function_namespace:
            out["id"] = "{id}"
        return out
    if t.fun_name_is_key:
        raise ResponseGap("the function name is a JSON key; response_template transforms cannot read it")
    parts = [p for p in ("" if each else "content", t.function_field) if p]
    root = "".join(f"{p}." for p in parts)
    function = {"name": f"{{{root}{t.name_field}}}", "arguments": f"{{{root}{t.args_field}}}"}
    out = {"type": "function", "function": function}
    if t.id_field:
        out["id"] = f"{{{'' if each else 'content.'}{t.id_field}}}"
    return out


def name_regex(spec: FormatSpec) -> str:
    """The part of a call header that holds the function name (and an id, when the format writes one).

    With a ``function_namespace`` (Kimi-K2: ``functions.get_weather:0``) the whole token is the call id and
    the name sits between the namespace and an optional ``:index``, as our parser reads it.
    """
    t = spec.tools
    if t.function_namespace:
        name = rf"(?P<id>{re.escape(t.function_namespace)}(?P<name>[\w\-/@$.]+?)(?::\d+)?)"
        return seq(lit(t.name_prefix), name, lit(t.name_suffix))
    name = r"(?P<name>[^\s<>\[\]{}\"'=]+)"
    ident = r"(?P<id>[^\s<>]+?)"
    if t.id_position == "pre_func_name":
        return seq(lit(t.id_prefix), ident, lit(t.id_suffix), lit(t.name_prefix), name, lit(t.name_suffix))
    if t.id_position == "between_func_and_args":
        return seq(lit(t.name_prefix), name, lit(t.name_suffix), lit(t.id_prefix), ident, lit(t.id_suffix))
    return seq(lit(t.name_prefix), name, lit(t.name_suffix))


def optional(pattern: str) -> str:
    return f"(?:{pattern})?" if pattern else ""


def call_closer(end: str, section_close: str, next_call: str) -> str:
    """A call's close: its end marker, followed by the section's close after the last call.

    Not ``END(?:SECTION_CLOSE)?``: a streaming parser that sees ``END`` at a chunk's end closes the region
    there (vLLM 0.32 and SGLang 0.5.23 do), and the section close then leaks into the content.  Each
    alternative here is decided only once the text after ``END`` is known: the section close, or the next
    call's opener (left for the next region to read).
    """
    if not section_close:
        return end
    if not next_call:
        return seq(end, optional(section_close))
    return f"{seq(end, section_close)}|{end}(?=\\s*{next_call})"
