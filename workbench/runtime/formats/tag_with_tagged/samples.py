"""TAG_WITH_TAGGED samples: every argument between its own markers, its value written by the one value
encoding (:func:`workbench.runtime.values.write_value`: strings raw, other types as JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.formats.tag_calls import write_tag_calls
from workbench.runtime.values import parameter_schema, write_value

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The calls as the spec's template writes them; ``tools`` types the values (see the module doc)."""
    t = spec.tools

    def body(call: SampleCall) -> str:
        parts = []
        for k, v in call.arguments.items():
            value = write_value(v, parameter_schema(tools, call.name, k))
            parts.append(
                f"{t.arg_name_prefix}{k}{t.arg_name_suffix}{t.arg_value_prefix}{value}{t.arg_value_suffix}"
            )
        return (t.arg_separator or "").join(parts)

    return write_tag_calls(spec, calls, body)
