"""What the two marker-delimited families (``tag_with_json``, ``tag_with_tagged``) share when writing a
call: the header (per-call markers, call id, namespaced name, argument opener) and the closing markers.
Only the arguments differ, and each family writes its own."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.spec import FormatSpec


def write_tag_calls(spec: FormatSpec, calls: Sequence[SampleCall], body: Callable[[SampleCall], str]) -> str:
    """The section with every call; ``body(call)`` writes a call's arguments."""
    t = spec.tools
    text = (t.call_separator or "").join(_tag_call(spec, c, i, body(c)) for i, c in enumerate(calls))
    return f"{t.section_start}{text}{t.section_end}"


def _tag_call(spec: FormatSpec, call: SampleCall, index: int, body: str) -> str:
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
    return f"{head}{body}{t.args_end}{t.func_close}{post}{t.call_end}"
