"""Loading a spec from a file (``workbench tui --spec FILE``, the palette's "Load spec"): a spec file as
``workbench export --target spec`` writes it, or ``workbench analyze --json`` output, read by the one loader
every ``--spec`` option uses (:func:`workbench.spec_io.load_spec`).  Once installed, the loaded spec is the
spec Generate, the Inspector and Export use, exactly as an analyzed one."""

from __future__ import annotations

from pathlib import Path

from workbench.runtime.spec import FormatSpec
from workbench.spec_io import load_spec
from workbench.tui import messages as msg
from workbench.tui.workspace import Workspace


def read_spec(path: str) -> msg.SpecLoaded:
    """Read a spec file (worker thread); a ``SpecError`` naming the file propagates to the failure handler."""
    return msg.SpecLoaded(load_spec(Path(path).expanduser()), path)


def accept_spec(ws: Workspace, spec: FormatSpec, path: str) -> None:
    """Install a loaded spec (UI thread): it is on disk, so there is nothing unsaved; edits are measured
    against it, and it needs validating against the template being edited."""
    ws.spec = ws.saved_spec = ws.base_spec = spec
    ws.spec_origin = f"spec file {Path(path).name}"
    ws.validation = None
    ws.validation_summary = "spec loaded: validating…"


def template_note(ws: Workspace, spec: FormatSpec) -> str:
    """One line when the spec says it was made for another template than the one open ("" otherwise)."""
    made_for = spec.provenance.template_sha256
    if not made_for or made_for == ws.template_sha:
        return ""
    name = spec.provenance.template_name or "another template"
    return f"the spec was made for {name}; it is validated against {ws.source.name} as open now"
