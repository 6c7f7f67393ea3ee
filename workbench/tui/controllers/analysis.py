"""Analysis, spec edits and validation: template -> Analysis -> spec -> ValidationReport."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec
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


# ---------------------------------------------------------------------- template switches
#: Kwargs-tab values that are not template switches: the generation prompt is the case's business, and
#: validation renders every case with thinking enabled (its cases carry reasoning).
_NOT_SWITCHES = ("add_generation_prompt", "enable_thinking")


def extra_pairs(extra: str) -> dict[str, Any]:
    """The well-formed ``key=value`` pairs of the Kwargs tab's extra field (values JSON, else text); a
    malformed pair is skipped here (the preview names it)."""
    out: dict[str, Any] = {}
    for pair in extra.split():
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            continue
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def with_pair(extra: str, key: str, value: Any = None, *, unset: bool = False) -> str:
    """``extra`` with ``key`` set to ``value`` (JSON, compact), or removed when ``unset``; the other pairs
    keep their text and order."""
    kept = [p for p in extra.split() if p.partition("=")[0] != key]
    if not unset:
        kept.append(f"{key}={json.dumps(value, ensure_ascii=False, separators=(',', ':'))}")
    return " ".join(kept)


def validation_kwargs(ws: Workspace) -> dict[str, Any]:
    """The template switches the Kwargs tab sets (``reasoning_effort`` and the extra pairs), which the TUI's
    validation renders every case with: the TUI's ``--kw``."""
    out: dict[str, Any] = {}
    if ws.kwargs.reasoning_effort:
        out["reasoning_effort"] = ws.kwargs.reasoning_effort
    out.update(extra_pairs(ws.kwargs.extra))
    return {k: v for k, v in out.items() if k not in _NOT_SWITCHES}


@dataclass(frozen=True)
class SwitchValue:
    """One value of a template switch the analysis tried, and what it changes against the default render."""

    value: Any
    changes: tuple[str, ...]
    start: str = ""  # where the output starts with this value's prompt (``FormatSpec.output_start_stage``)

    @property
    def label(self) -> str:
        return json.dumps(self.value, ensure_ascii=False)

    @property
    def effect(self) -> str:
        return ", ".join(self.changes) or "as the default"


@dataclass(frozen=True)
class Switch:
    """A template variable (not ``enable_thinking``) that changes the format (``PromptSpec.switches``)."""

    name: str
    kind: str  # "choice" (compared with literals) or "flag" (tested for truth)
    values: tuple[SwitchValue, ...]


def switches_of(spec: FormatSpec | None) -> list[Switch]:
    """The switches a spec records, in the analysis' order (pure; empty without a spec)."""
    if spec is None:
        return []
    out: list[Switch] = []
    for name, info in spec.prompt.switches.items():
        values = tuple(
            SwitchValue(e["value"], tuple(e.get("changes", ())), str(e.get("start", "")))
            for e in info.get("effects", ())
        )
        out.append(Switch(name, str(info.get("kind", "")), values))
    return out


def spec_warning(report: ValidationReport) -> str:
    """The self-check's one-line warning for a report ("" when the spec reads every rendered feature)."""
    from workbench.selfcheck import verdicts_from_report, warning_line

    return warning_line(verdicts_from_report(report))


def accept_validation(ws: Workspace, done: msg.ValidationDone) -> None:
    ws.validation = done.report
    ws.validation_summary = done.summary if not done.error else f"validation failed: {done.error}"
