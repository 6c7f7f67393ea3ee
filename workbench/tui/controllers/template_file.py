"""Saving the edited template (``ctrl+s`` on the Template screen): where it goes, and when to ask first.

A ``.jinja`` file is saved in place, unless it changed on disk since it was loaded (someone else edited
it): then the user is asked.  A template that came from a ``tokenizer_config.json``, a GGUF file or a model
folder is never written back into that file: it is saved as a new ``.jinja`` beside it.  A template with no
file of its own to go back to (a session's recorded template, the project's built-in templates, a Hub id)
is saved where the person says: a dialog offers ``<name>.jinja`` in the working folder.  Every save is
atomic (``write_atomic``) and writes exactly the path the notification names.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

from workbench.session import write_atomic
from workbench.template.source import PROJECT_TEMPLATES
from workbench.tui.errors import Refused
from workbench.tui.workspace import Workspace

EDITED_NAME = "chat_template.edited.jinja"
_NOT_JINJA = {".json", ".gguf"}


@dataclass(frozen=True)
class TemplateSave:
    """Where the template would be written and, when that could destroy something, the question to ask.

    ``choose`` is set when the template has no file of its own to go back to (a session's template, the
    project's built-in templates, the embedded default, a Hub id): ``path`` is then only a suggestion, and
    the person types or confirms the file to write.
    """

    path: Path
    question: str = ""  # "" when the write replaces nothing the user has not seen
    choose: bool = False


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "template"


def plan_template_save(ws: Workspace, cwd: Path | None = None) -> TemplateSave:
    """Where ``ctrl+s`` writes the template text and whether to ask first (reads the disk, writes nothing).

    Raises:
        Refused: the text is already what the file holds (nothing to save).
    """
    origin = Path(ws.source.origin).expanduser()
    if ws.source.origin.startswith("session:") or _is_builtin(origin):
        # A session's template is not the file that was open, and the project's own templates are not
        # the person's to change by a habitual ctrl+s: ask where to save.
        return _suggested(ws, cwd)
    if origin.is_file() and origin.suffix.lower() not in _NOT_JINJA:
        path = origin.resolve()
        on_disk = origin.read_text(encoding="utf-8", errors="replace")
        if on_disk == ws.template_text:
            raise Refused(f"nothing to save: {path} already holds this text", title="Save template")
        if on_disk != ws.source.text:
            return TemplateSave(path, f"{path} changed on disk since it was loaded")
        return TemplateSave(path)
    if origin.is_file():
        target = origin.parent / EDITED_NAME
    elif origin.is_dir():
        target = origin / EDITED_NAME
    else:
        return _suggested(ws, cwd)
    target = target.resolve()
    if target.exists():
        return TemplateSave(target, f"{target} exists")
    return TemplateSave(target)


def plan_chosen_save(typed: str, cwd: Path | None = None) -> TemplateSave:
    """The save to a path the person typed: relative to the working folder, asking when it exists.

    Raises:
        Refused: the path is a folder, or its folder does not exist (nothing is created).
    """
    path = Path(typed).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    path = path.resolve()
    if path.is_dir():
        raise Refused(f"{path} is a folder: type a file name", title="Save template")
    if not path.parent.is_dir():
        raise Refused(f"cannot save to {path}: folder {path.parent} does not exist", title="Save template")
    if path.exists():
        return TemplateSave(path, f"{path} exists")
    return TemplateSave(path)


def _suggested(ws: Workspace, cwd: Path | None) -> TemplateSave:
    """A name to offer in the working folder, for the person to confirm or change."""
    return TemplateSave(((cwd or Path.cwd()) / f"{_safe_name(ws.source.name)}.jinja").resolve(), choose=True)


def _is_builtin(origin: Path) -> bool:
    """Whether ``origin`` is one of the project's own templates (``templates/``)."""
    try:
        return origin.resolve().is_relative_to(PROJECT_TEMPLATES.resolve())
    except OSError:
        return False


def accept_template_save(ws: Workspace, path: Path) -> None:
    """Write the template text to ``path`` and make that file the workspace's source (UI thread).

    The source keeps its special tokens; its text becomes the saved text, so "edited" and the next
    changed-on-disk check compare against what is now on disk.
    """
    write_atomic(path, ws.template_text)
    ws.source = dataclasses.replace(ws.source, text=ws.template_text, origin=str(path), pinned=True)
