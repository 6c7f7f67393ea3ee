"""Analysis, spec edits and validation: template -> Analysis -> spec -> ValidationReport."""

from __future__ import annotations

from typing import Any

from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.errors import Refused

# The switches are part of this workflow's vocabulary (re-exported; they live in a light module of their
# own because the first screen reads them).
from workbench.tui.switches import Switch as Switch
from workbench.tui.switches import SwitchValue as SwitchValue
from workbench.tui.switches import extra_pairs as extra_pairs
from workbench.tui.switches import switches_of as switches_of
from workbench.tui.switches import validation_kwargs as validation_kwargs
from workbench.tui.switches import with_pair as with_pair
from workbench.tui.workspace import Workspace
from workbench.validate import ValidationReport, validate


# ---------------------------------------------------------------------- analysis
def prepare_analysis(ws: Workspace) -> TemplateSource:
    """Mark an analysis as running and return the source to analyze (UI thread)."""
    ws.analysis_running = True
    ws.analysis_error = ""
    return ws.edited_source()


def compute_analysis(source: TemplateSource, *, replace_spec: bool = True) -> msg.AnalysisDone:
    """Analyze ``source`` (worker thread); a ``TemplateError`` propagates to the app's failure handler."""
    from workbench.formats import analyze  # heavy: imported in the worker, never on the UI thread

    return msg.AnalysisDone(analyze(source), template_sha=source.sha256, replace_spec=replace_spec)


def accept_analysis(ws: Workspace, done: msg.AnalysisDone) -> None:
    """Install a finished analysis and, unless the spec in use came from a file or a session and the
    analysis was not asked to replace it, its spec; a replaced spec's validation no longer applies."""
    ws.analysis_running = False
    ws.analysis = done.analysis
    ws.analysis_sha = done.template_sha
    ws.analysis_error = ""
    if done.replace_spec or ws.spec is None:
        ws.spec = ws.base_spec = done.analysis.spec
        ws.spec_origin = ""
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
        raise Refused("no spec yet: analyze the template first")
    ws.validation_summary = "validating…"
    return ws.spec, ws.edited_source()


def compute_validation(
    spec: FormatSpec, source: TemplateSource, template_kwargs: dict[str, Any] | None = None
) -> msg.ValidationDone:
    """Validate ``spec`` against ``source`` (worker thread); failures propagate to the app's handler.

    ``template_kwargs`` are the Kwargs tab's switches (:func:`validation_kwargs`): every case is rendered
    with them, as ``workbench validate --kw`` does.
    """
    if template_kwargs:
        report = validate(source, spec, template_kwargs=template_kwargs)
    else:
        report = validate(source, spec)
    return msg.ValidationDone(report, report.summary())


def spec_warning(report: ValidationReport) -> str:
    """The self-check's one-line warning for a report ("" when the spec reads every rendered feature)."""
    from workbench.selfcheck import verdicts_from_report, warning_line

    return warning_line(verdicts_from_report(report))


def accept_validation(ws: Workspace, done: msg.ValidationDone) -> None:
    ws.validation = done.report
    ws.validation_summary = done.summary if not done.error else f"validation failed: {done.error}"
