"""Worker failures, handled in one place: which message a failed worker stands for, by its group.

Workers raise instead of catching: the app's ``on_worker_state_changed`` calls :func:`failure_message`
and posts what it returns, so an analysis that fails shows in its panel, a refused export says why, and so
on, through the same handlers as a success.  A worker of a group not listed here is loud by default: one
error notification with the worker's name and the error's one line.  Worker names carry the context a
message needs (``export:TARGET``, ``session:PATH``).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message

from workbench.tui import messages as msg
from workbench.tui.controllers.engine import EngineStopped
from workbench.tui.errors import one_line
from workbench.tui.steps import ControlRefused


def _detail(name: str) -> str:
    """The context after ``group:`` in a worker name."""
    return name.partition(":")[2]


def _engine(name: str, error: BaseException) -> Message:
    if isinstance(error, EngineStopped):
        return msg.EngineFailed(error.one_line(), error.severity)
    if isinstance(error, ControlRefused):
        return msg.EngineFailed(one_line(error), "warning")
    return msg.EngineFailed(f"{_detail(name) or 'engine'}: {one_line(error)}", "error")


FAILURES: dict[str, Callable[[str, BaseException], Message]] = {
    "analysis": lambda name, error: msg.AnalysisFailed(one_line(error)),
    "validation": lambda name, error: msg.ValidationDone(None, "validation failed", error=one_line(error)),
    "export": lambda name, error: msg.ExportDone(_detail(name), "", error=one_line(error)),
    "model": lambda name, error: msg.ModelFailed(one_line(error)),
    "session": lambda name, error: msg.ModelFailed(f"session {_detail(name)}: {one_line(error)}"),
    "warm": lambda name, error: msg.Warmed(one_line(error)),
    "engine": _engine,
    "engine-control": _engine,
}


def failure_message(group: str, name: str, error: BaseException) -> Message | None:
    """The message that reports ``error`` of the worker ``name`` in ``group``; ``None`` when the group
    has no handler of its own (the app then shows one loud notification)."""
    make = FAILURES.get(group)
    return make(name, error) if make is not None else None
