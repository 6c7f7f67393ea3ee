"""Orchestration: resolve the spec and its validation report, build the target, prove it, write it.

Nothing is written except by :func:`write_export`, which writes atomically and never overwrites with a
half-finished result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workbench.export.response_profile import prove_profile
from workbench.export.spec_target import render_spec_export, spec_with_provenance
from workbench.export.structural_tag import (
    build_structural_tag,
    compile_or_fail,
    load_grammar_tokenizer,
    prove_structural_tag,
)
from workbench.export.tests_file import build_tests_file
from workbench.proofs import ExportError, Proof
from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.session import Session, write_atomic
from workbench.template.source import TemplateSource
from workbench.validate import FAIL, ValidationReport, report_from_spec, validate, validate_recorded

TARGETS = ("spec", "response-template", "structural-tag", "tests", "lark", "vllm-plugin", "sglang-plugin")
#: Targets written as a folder of files (``ExportResult.files``), not one text.
FOLDER_TARGETS = ("vllm-plugin", "sglang-plugin")


@dataclass(frozen=True)
class ExportResult:
    """An export ready to be written: the text, the spec and report it came from, and the consumer's proof."""

    target: str
    text: str
    spec: FormatSpec
    report: ValidationReport
    proof: Proof | None = None
    warnings: tuple[str, ...] = ()
    files: dict[str, str] | None = None  # folder targets: relative path -> text (``text`` is the README)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "validated": self.report.validated,
            "validation": self.report.summary(),
            "proof": self.proof.to_dict() if self.proof is not None else None,
            "warnings": list(self.warnings),
        }


def resolve_inputs(
    template: TemplateSource | None,
    spec: FormatSpec | None,
    *,
    time_limit: float = 2.0,
    template_kwargs: dict[str, Any] | None = None,
) -> tuple[FormatSpec, ValidationReport]:
    """The spec to export and its validation report, from a template, a spec, or both.

    * template only: analyse it, then validate the result against the template's renders;
    * template and spec: validate the given spec against the template's renders;
    * spec only: re-parse the round-trip outputs recorded in the spec's own report (nothing to render).
    """
    if template is not None:
        if spec is None:
            from workbench.formats import analyze

            spec = analyze(template, time_limit=time_limit).spec
        return spec, validate(template, spec, time_limit=time_limit, template_kwargs=template_kwargs)
    if spec is None:
        raise ExportError("pass a template or --spec FILE")
    recorded = report_from_spec(spec)
    if recorded is None:
        note = "no template given and the spec carries no round-trip cases: nothing could be checked"
        return spec, ValidationReport(
            spec.provenance.template_name,
            spec.provenance.template_sha256,
            (),
            notes=(note,),
            source="recorded",
        )
    return spec, validate_recorded(spec, recorded)


def _validation_for_export(spec: FormatSpec, report: ValidationReport, from_template: bool) -> dict[str, Any]:
    """The report stored in the exported spec.  Re-exporting an exported spec keeps its original report when
    the recorded cases still give the same results, so export -> import -> export is byte-identical."""
    recorded = spec.provenance.validation
    if not from_template and recorded is not None:
        old = report_from_spec(spec)
        if old is not None and [(c.id, c.status, c.parsed) for c in old.cases] == [
            (c.id, c.status, c.parsed) for c in report.cases
        ]:
            return recorded
    return report.to_dict()


def export(
    target: str,
    *,
    template: TemplateSource | None = None,
    spec: FormatSpec | None = None,
    tools: Sequence[Tool] | None = None,
    sessions: Sequence[tuple[str, Session]] = (),
    force: bool = False,
    tokenizer: str | Path | None = None,
    time_limit: float = 2.0,
    profile: str | None = None,
) -> ExportResult:
    """Build the export for ``target`` and prove it with its consumer; nothing is written here.

    ``profile`` (response-template only) picks the consumer the template is shaped for; None picks the
    strictest profile that can express the format (see :mod:`workbench.engines.response_rules`).

    Raises:
        ExportError: unknown target, a spec that is not validated (unless ``force``), a target that cannot
            express the spec, or a consumer that disagrees with our parser (unless ``force``).
    """
    if profile is not None and target != "response-template":
        raise ExportError("--profile applies to the response-template target only")
    if target not in TARGETS:
        raise ExportError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    spec, report = resolve_inputs(template, spec, time_limit=time_limit)
    warnings: list[str] = []
    if not report.validated:
        if not force:
            raise ExportError(f"{report.summary()}; run `workbench validate` for details, or pass --force")
        warnings.append(f"exported with --force: {report.summary()}")
    exported = spec_with_provenance(
        spec,
        None,
        template_sha256=template.sha256 if template else "",
        template_name=template.name if template else "",
    )
    exported = replace(
        exported,
        provenance=replace(
            exported.provenance, validation=_validation_for_export(spec, report, template is not None)
        ),
    )
    proof: Proof | None = None
    if target == "spec":
        text = render_spec_export(exported)
    elif target == "response-template":
        built, proof, provenance, notes = prove_profile(spec, report, exported, profile, tokenizer)
        warnings.extend(notes)
        wrapped = {"response_template": built, "response_template_provenance": provenance}
        text = json.dumps(wrapped, indent=2, ensure_ascii=False) + "\n"
    elif target == "structural-tag":
        if not tools:
            raise ExportError("the structural-tag target needs the tool list: pass --tools TOOLS.json")
        built = build_structural_tag(spec, tools)
        tok = load_grammar_tokenizer(tokenizer)
        compile_or_fail(built, tok)
        proof = prove_structural_tag(spec, report, tok)
        text = json.dumps(built, indent=2, ensure_ascii=False) + "\n"
    elif target in FOLDER_TARGETS:
        from workbench.engines.plugin_proof import export_plugin

        files, proof, notes = export_plugin(target, exported, report, tokenizer=tokenizer)
        warnings.extend(notes)
        result = ExportResult(target, files["README.md"], exported, report, proof, (), files)
        return _checked(result, force, warnings)
    elif target == "lark":
        from workbench.export.lark import export_lark

        text, proof, notes = export_lark(spec, report, exported, tools, tokenizer)
        warnings.extend(notes)
    else:
        for name, session in sessions:
            mismatch = _session_mismatch(spec, session)
            if mismatch and not force:
                raise ExportError(
                    f"session {name} does not replay with this spec: {mismatch}; or pass --force"
                )
            if mismatch:
                warnings.append(f"session {name} does not replay with this spec: {mismatch}")
        text = build_tests_file(exported, report, sessions)
    return _checked(ExportResult(target, text, exported, report, proof), force, warnings)


def _checked(result: ExportResult, force: bool, warnings: list[str]) -> ExportResult:
    """``result`` with its warnings, unless the consumer's proof failed and ``force`` is off."""
    proof = result.proof
    if proof is not None and not proof.passed:
        failing = next((c for c in proof.cases if c.status == FAIL), None)
        detail = f" (first: {failing.id}: {failing.detail})" if failing else ""
        if not force:
            raise ExportError(f"{proof.summary()}{detail}; pass --force to export anyway")
        warnings.append(f"exported with --force: {proof.summary()}{detail}")
    return replace(result, warnings=tuple(warnings))


def _session_mismatch(spec: FormatSpec, session: Session) -> str:
    from workbench.session import replay_session

    result = replay_session(replace(session, spec=spec))
    return result.mismatches[0] if result.mismatches else ""


def check_destination(target: str, path: str | Path) -> None:
    """Refuse, before any validation or engine proof runs, a destination :func:`write_export` could not
    write: a folder target to ``-`` or over a file, a file target over a folder, or a parent folder that
    does not exist.  Reads the disk only; raises :class:`ExportError` with the reason."""
    if str(path) == "-":
        if target in FOLDER_TARGETS:
            raise ExportError(f"the {target} target writes a folder: pass -o DIR")
        return
    where = Path(path).expanduser()
    if target in FOLDER_TARGETS and where.exists() and not where.is_dir():
        raise ExportError(f"the {target} target writes a folder: {where} is a file")
    if target not in FOLDER_TARGETS and where.is_dir():
        raise ExportError(f"cannot write {where}: it is a folder (the {target} target writes one file)")
    if not where.parent.is_dir():
        raise ExportError(f"cannot write {where}: folder {where.parent} does not exist")


def write_export(result: ExportResult, path: str | Path) -> Path:
    """Write an export atomically; ``-`` writes to stdout.  A folder target is written under ``path`` (a
    folder, made if absent; each file atomically)."""
    if result.files is not None:
        from workbench.engines.plugin_proof import write_files

        folder = Path(path)
        if str(path) == "-" or (folder.exists() and not folder.is_dir()):
            raise ExportError(f"the {result.target} target writes a folder: pass -o DIR")
        if not folder.parent.is_dir():
            raise ExportError(f"cannot write {folder}: folder {folder.parent} does not exist")
        folder.mkdir(exist_ok=True)
        write_files(folder, result.files)
        return folder
    if str(path) == "-":
        import sys

        sys.stdout.write(result.text)
        return Path("-")
    target = Path(path)
    write_atomic(target, result.text)
    return target
