"""Analysis, spec edits and validation: template -> Analysis -> spec -> ValidationReport."""

from __future__ import annotations

from workbench.analysis import analyze
from workbench.spec import FormatSpec
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.errors import Refused
from workbench.tui.workspace import Workspace
from workbench.validate import ValidationReport, validate


# ---------------------------------------------------------------------- analysis
def prepare_analysis(ws: Workspace) -> TemplateSource:
    """Mark an analysis as running and return the source to analyse (UI thread)."""
    ws.analysis_running = True
    ws.analysis_error = ""
    return ws.edited_source()


def compute_analysis(source: TemplateSource) -> msg.AnalysisDone:
    """Analyse ``source`` (worker thread); a ``TemplateError`` propagates to the app's failure handler."""
    return msg.AnalysisDone(analyze(source), template_sha=source.sha256)


def accept_analysis(ws: Workspace, done: msg.AnalysisDone) -> None:
    """Install a finished analysis and its spec; the old validation no longer applies."""
    ws.analysis_running = False
    ws.analysis = done.analysis
    ws.analysis_sha = done.template_sha
    ws.analysis_error = ""
    ws.spec = done.analysis.spec
    ws.validation = None
    ws.validation_summary = ""


def accept_analysis_failure(ws: Workspace, error: str) -> None:
    """Keep the previous analysis (if any) and remember why the new one failed."""
    ws.analysis_running = False
    ws.analysis_error = error


# ---------------------------------------------------------------------- spec edits and validation
def accept_spec_edit(ws: Workspace, spec: FormatSpec) -> None:
    """Install an edited spec (already checked by ``with_edit``); it needs validating again."""
    ws.spec = spec
    ws.validation = None
    ws.validation_summary = "edited: validating…"


def prepare_validation(ws: Workspace) -> tuple[FormatSpec, TemplateSource]:
    """The spec and source to validate; refused when there is no spec yet (UI thread)."""
    if ws.spec is None:
        raise Refused("no spec yet: analyse the template first")
    ws.validation_summary = "validating…"
    return ws.spec, ws.edited_source()


def compute_validation(spec: FormatSpec, source: TemplateSource) -> msg.ValidationDone:
    """Validate ``spec`` against ``source`` (worker thread); failures propagate to the app's handler."""
    report = validate(source, spec)
    return msg.ValidationDone(report, report.summary())


def spec_warning(report: ValidationReport) -> str:
    """The self-check's one-line warning for a report ("" when the spec reads every rendered feature)."""
    from workbench.selfcheck import verdicts_from_report, warning_line

    return warning_line(verdicts_from_report(report))


def accept_validation(ws: Workspace, done: msg.ValidationDone) -> None:
    ws.validation = done.report
    ws.validation_summary = done.summary if not done.error else f"validation failed: {done.error}"
