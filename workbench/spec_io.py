"""Reading a spec from a file: the one loader behind every ``--spec`` option.

Two shapes hold a spec, and both are accepted wherever a spec is: an exported spec (``FormatSpec`` JSON, what
``workbench export --target spec`` writes) and ``workbench analyze --json`` output (``{"spec": ...,
"probes": ..., "warnings": ...}``, or a one-element list of those, as analyze prints for several templates).
Before this module the commands each read specs their own way, so a file one command took another refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.inputs import load_json_file_as
from workbench.runtime.spec import FormatSpec, SpecError


def load_spec(path: str | Path) -> FormatSpec:
    """Read a spec file or analyze output; any problem is one :class:`SpecError` line naming the file.

    Never writes.  The messages say what is wrong in words a person can act on: not found, not UTF-8,
    empty, truncated or corrupt JSON (with the position), or the field :meth:`FormatSpec.from_dict` names.
    """
    return load_json_file_as(path, "spec", spec_from_data, SpecError)


def spec_from_data(data: Any) -> FormatSpec:
    """The spec in parsed JSON: a spec object, an analyze result, or a one-element list of analyze results.

    Pure; raises :class:`SpecError` (naming the field) when ``data`` is none of these.
    """
    return FormatSpec.from_dict(unwrap_analysis(data))


def unwrap_analysis(data: Any) -> Any:
    """The spec object inside ``workbench analyze --json`` output; anything else is returned unchanged.

    A spec object has a ``reasoning`` key, an analyze result a ``spec`` key and no ``reasoning``.
    """
    if isinstance(data, list):
        if len(data) != 1:
            raise SpecError(
                f"spec: a list of {len(data)} analyses; pass the output of one template (or one element)"
            )
        data = data[0]
    if isinstance(data, dict) and "spec" in data and "reasoning" not in data:
        return data["spec"]
    return data
