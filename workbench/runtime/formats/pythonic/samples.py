"""PYTHONIC samples: a Python list of calls, ``[f(a=1, b='x'), g()]``, values as Python literals (as JSON
where the spec says the template writes JSON literals: ``tools.json_literals``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import SampleCall
from workbench.runtime.values import dumps, write_python

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.spec import FormatSpec


def write_calls(spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None) -> str:
    """The calls as one Python list between the spec's markers (literals need no schema)."""
    t = spec.tools
    write = dumps if t.json_literals else write_python
    separator = t.arg_separator or ", "
    inner = ", ".join(
        f"{c.name}(" + separator.join(f"{k}={write(v)}" for k, v in c.arguments.items()) + ")" for c in calls
    )
    start, end = t.section_start or t.call_start, t.section_end or t.call_end
    return f"{start}[{inner}]{end}"
