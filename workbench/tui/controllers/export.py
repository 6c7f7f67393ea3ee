"""Exporting the current spec through ``workbench.export`` (which validates first and may refuse)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.export import check_destination, export, write_export
from workbench.proofs import ExportError
from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.errors import Refused, Severity, one_line
from workbench.tui.workspace import Workspace


@dataclass(frozen=True)
class ExportJob:
    """What an export worker needs, captured on the UI thread."""

    target: str
    path: str
    spec: FormatSpec
    source: TemplateSource
    tools: list[Tool]
    force: bool


@dataclass(frozen=True)
class Notice:
    """One notification: what the user reads about a finished job."""

    text: str
    title: str
    severity: Severity = "information"
    timeout: float | None = None


def prepare_export(ws: Workspace, request: msg.RequestExport) -> ExportJob:
    """The export to run for ``request``; refused without a spec, with unreadable tools JSON, or when it
    would replace an existing file the user did not agree to overwrite."""
    if ws.spec is None:
        raise Refused("no spec to export yet")
    if not request.overwrite and Path(request.path).expanduser().exists():
        raise Refused(
            f"{absolute(request.path)} exists: not overwritten (confirm the overwrite to replace it)",
            title="Export",
        )
    try:
        check_destination(request.target, request.path)  # refused now, not after the engine proof
    except ExportError as exc:
        raise Refused(one_line(exc), title=f"Export {request.target}", severity="error") from None
    try:
        tools = ws.parse_tools()
    except ValueError as exc:
        raise Refused(str(exc), title="Export", severity="error") from None
    return ExportJob(request.target, request.path, ws.spec, ws.edited_source(), tools, request.force)


def run_export(job: ExportJob) -> msg.ExportDone:
    """Export and write (worker thread); an ``ExportError`` refusal propagates to the failure handler."""
    result = export(job.target, template=job.source, spec=job.spec, tools=job.tools, force=job.force)
    written = write_export(result, job.path)
    return msg.ExportDone(job.target, absolute(written), warnings=tuple(result.warnings), spec=job.spec)


def absolute(path: str | Path) -> str:
    """``path`` as the absolute path the user can find the file at (pure: does not touch the file)."""
    return str(Path(path).expanduser().resolve())


def export_notice(done: msg.ExportDone) -> Notice:
    """What to tell the user about a finished or refused export (pure)."""
    if done.error:
        hint = " (shift+s exports anyway)" if "--force" in done.error else ""
        return Notice(done.error + hint, f"Export {done.target} refused", "error", timeout=10)
    extra = "; ".join(done.warnings)
    return Notice(f"wrote {done.path}" + (f" — {extra}" if extra else ""), f"Export {done.target}")
