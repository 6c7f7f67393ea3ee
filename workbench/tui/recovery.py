"""Unsaved edits: what a quit would lose, and a copy of it kept when something goes wrong.

The workspace holds every edit (the template text, a hand-edited spec) until the person saves or exports
it.  Quitting with edits asks first (``WorkbenchApp.action_quit``), and an unexpected error copies them to
the recovery folder before anything else happens, so no failure, however unforeseen, costs the work.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from workbench.session import write_atomic
from workbench.tui.workspace import Workspace


def unsaved_edits(ws: Workspace) -> list[str]:
    """What quitting now would lose, in words ("the template text", "the spec's hand edits").  Pure."""
    out: list[str] = []
    if ws.template_text != ws.source.text:
        out.append(f"the edited template text ({ws.source.name})")
    if ws.spec_unsaved:
        out.append("the spec's hand edits (no export has written them)")
    return out


def edits_digest(ws: Workspace) -> str:
    """A digest of the unsaved edits, so the same state is copied once, not at every error.  Pure."""
    spec = ws.spec.to_json() if ws.spec_unsaved and ws.spec is not None else ""
    text = ws.template_text if ws.template_text != ws.source.text else ""
    return hashlib.sha256(f"{text}\0{spec}".encode("utf-8", "replace")).hexdigest()


def write_recovery(ws: Workspace, folder: Path) -> Path | None:
    """Copy the unsaved edits into a new folder under ``folder``; the folder written, or None when there
    is nothing unsaved.  Raises ``SessionError`` / ``OSError`` when the copy cannot be written."""
    if not unsaved_edits(ws):
        return None
    target = folder / time.strftime("%Y%m%d-%H%M%S")
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{n}"
    target.mkdir(parents=True)
    if ws.template_text != ws.source.text:
        write_atomic(target / "template.jinja", ws.template_text)
    if ws.spec_unsaved and ws.spec is not None:
        write_atomic(target / "spec.json", ws.spec.to_json())
    return target
