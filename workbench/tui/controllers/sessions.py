"""Opening a recorded session (worker thread) and saving the current steps as one (UI thread)."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

from workbench.runtime.chat import Message
from workbench.session import ModelRecord, Session, load_session, save_session, session_from_generation
from workbench.template.source import TemplateSource
from workbench.tui import messages as msg
from workbench.tui.errors import Refused
from workbench.tui.steps import GeneratorDriver
from workbench.tui.workspace import REASONING_EFFORTS, RenderKwargs, Workspace


def read_session(path: str) -> msg.SessionLoaded:
    """Load a session file (worker thread); a ``SessionError`` propagates to the app's failure handler."""
    return msg.SessionLoaded(load_session(Path(path)), path)


def accept_session(ws: Workspace, session: Session, path: str) -> set[str]:
    """Take the session's template, tools, template kwargs, spec and model name; the topics that changed.

    The recorded template kwargs go to the Template screen's Kwargs tab, so its preview re-renders the
    prompt with them (an old session without them leaves the kwargs as they were).  The steps themselves are
    installed as a replay by the app (they become the inspector's driver).
    """
    changed = {"spec"}
    if session.template_kwargs:
        ws.kwargs = kwargs_from_session(session.template_kwargs, ws.kwargs)
        changed.add("template")
    ws.session_path = path
    if session.template.text and session.template.text != ws.source.text:
        # The session's template is a template of its own: it becomes the source (so the screens name it,
        # and ctrl+s asks where to save it), never an edit of the template file that was open.
        ws.source = session_source(session, path, ws.source)
        ws.template_text = session.template.text
        changed.add("template")
    elif session.template.text:
        ws.template_text = session.template.text
        changed.add("template")
    if session.tools:
        ws.tools_json = json.dumps([t.to_openai() for t in session.tools], indent=2, ensure_ascii=False)
    ws.spec = ws.base_spec = session.spec
    ws.saved_spec = session.spec  # the session file holds it: nothing to lose
    ws.spec_origin = f"session {Path(path).name}"
    ws.model_name = ws.model_name or f"(recorded with {session.model.name or session.model.ref or '?'})"
    return changed


def session_source(session: Session, path: str, current: TemplateSource) -> TemplateSource:
    """A source for a session's recorded template: named as the session names it, with no file of its own
    (its origin is the session), keeping the special tokens of the source that was open (a session does not
    record them)."""
    name = session.template.name or f"template of {Path(path).name}"
    return dataclasses.replace(
        current,
        text=session.template.text,
        name=name,
        origin=f"session:{path}",
        named={},
        selected="default",
        spec=None,
        pinned=True,
    )


def build_session(ws: Workspace, *, model_ref: str, messages: list[Message]) -> Session:
    """The current steps as a session; refused when there is nothing to save (UI thread, no writes)."""
    if not len(ws.steps) or ws.spec is None:
        raise Refused("nothing to save: no steps yet")
    settings: dict[str, Any] = {"constrain": ws.constrained, "enable_thinking": ws.kwargs.enable_thinking}
    template_kwargs = ws.kwargs.to_kwargs()  # ValueError for a malformed extra pair: reported by the app
    template_kwargs.pop("add_generation_prompt", None)
    prompt = ""
    if isinstance(ws.driver, GeneratorDriver):
        settings.update(ws.driver.parse_settings())
        prompt = ws.driver.prompt
    # The steps carry ``Step.text`` (what each fed the parser), which is what the replay feeds.
    return session_from_generation(
        template_text=ws.template_text,
        template_name=ws.source.name,
        spec=ws.spec,
        model=ModelRecord(name=ws.model_name, ref=model_ref),
        messages=list(messages),
        tools=ws.parse_tools(),
        settings=settings,
        prompt=prompt,
        steps=list(ws.steps.all()),
        parsed=ws.steps.message or Message(role="assistant"),
        template_kwargs=template_kwargs,
    )


def kwargs_from_session(recorded: dict[str, Any], current: RenderKwargs) -> RenderKwargs:
    """The Kwargs tab's state for a session's recorded template kwargs: ``enable_thinking`` and
    ``reasoning_effort`` (one of the tab's choices) in their own fields, every other switch as an extra
    ``key=value`` pair (JSON values, what the tab's extra field reads back)."""
    rest = dict(recorded)
    thinking = rest.pop("enable_thinking", current.enable_thinking)
    effort = rest.get("reasoning_effort")
    kept_effort = ""
    if isinstance(effort, str) and effort in REASONING_EFFORTS:
        kept_effort = rest.pop("reasoning_effort")
    compact = (",", ":")
    extra = " ".join(f"{k}={json.dumps(v, ensure_ascii=False, separators=compact)}" for k, v in rest.items())
    return RenderKwargs(
        add_generation_prompt=current.add_generation_prompt,
        enable_thinking=bool(thinking),
        reasoning_effort=kept_effort,
        extra=extra,
    )


def save_to_sessions(session: Session, folder: Path) -> Path:
    """Write ``session`` under ``folder`` with a time-stamped name; the absolute path written.

    A name is never reused: it is claimed with an exclusive create before the atomic write fills it, so two
    saves within one second (``-2``, ``-3``...) write two files, and a save never replaces an earlier one.
    ``folder`` is the user's sessions folder (:func:`workbench.tui.paths.sessions_dir`), created if needed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = claim_session_path(folder, time.strftime("%Y%m%d-%H%M%S"))
    try:
        return save_session(path, session).resolve()
    except BaseException:
        path.unlink(missing_ok=True)  # the claimed name must not stay behind empty
        raise


def claim_session_path(folder: Path, stamp: str) -> Path:
    """Create and return the first free ``tui-<stamp>[-N].json`` in ``folder`` (empty, created with
    ``O_EXCL``, so no other save can take the same name)."""
    n = 1
    while True:
        path = folder / (f"tui-{stamp}.json" if n == 1 else f"tui-{stamp}-{n}.json")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            n += 1
            continue
        return path


def unused_session_path(folder: Path, stamp: str) -> Path:
    """The first ``tui-<stamp>[-N].json`` in ``folder`` that does not exist yet (no state change)."""
    path = folder / f"tui-{stamp}.json"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"tui-{stamp}-{n}.json"
    return path
