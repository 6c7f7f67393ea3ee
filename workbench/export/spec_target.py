"""The ``spec`` target: the canonical FormatSpec JSON, checked against the schema shipped in the package.

Also reads exported specs back (:func:`load_spec_file`), so export -> import -> export can be byte-identical.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.proofs import ExportError
from workbench.runtime.spec import FormatSpec, Provenance, tool_format_names
from workbench.validate import ValidationReport

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "data" / "spec.schema.json"


def load_spec_schema() -> dict[str, Any]:
    """The JSON Schema shipped with the package for exported specs.

    The shipped file lists the built-in formats; the enum of ``tools.format`` is filled from the registry
    (:func:`workbench.runtime.spec.tool_format_names`) so a format added by one folder and one registry line
    exports.
    """
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema["properties"]["tools"]["properties"]["format"]["enum"] = list(tool_format_names())
    return schema


def check_spec_schema(data: Any) -> list[str]:
    """Schema errors of a spec's JSON form (empty when it conforms), one readable line each."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_spec_schema())
    return [
        f"{'.'.join(str(p) for p in err.absolute_path) or '(root)'}: {err.message}"
        for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    ]


def spec_with_provenance(
    spec: FormatSpec, report: ValidationReport | None, *, template_sha256: str, template_name: str
) -> FormatSpec:
    """The spec as exported: provenance filled in, the validation report attached.

    ``edited`` is kept: a spec a person changed stays marked as such.  The workbench version of a spec that
    already carries one is kept too, so re-exporting an exported spec gives the same bytes.
    """
    prov = spec.provenance
    return replace(
        spec,
        provenance=Provenance(
            template_sha256=template_sha256 or prov.template_sha256,
            template_name=template_name or prov.template_name,
            workbench_version=prov.workbench_version or __version__,
            edited=prov.edited,
            validation=report.to_dict() if report is not None else prov.validation,
        ),
    )


def render_spec_export(spec: FormatSpec) -> str:
    """The exported spec's text (checked against the shipped schema before it is returned)."""
    errors = check_spec_schema(spec.to_dict())
    if errors:
        raise ExportError(f"the spec does not conform to spec.schema.json: {errors[0]}")
    return spec.to_json()


def load_spec_file(path: str | Path) -> FormatSpec:
    """Read an exported spec or ``analyze --json`` output (the one loader: ``spec_io.load_spec``)."""
    from workbench.spec_io import load_spec

    return load_spec(path)
