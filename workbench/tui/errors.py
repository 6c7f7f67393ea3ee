"""Errors as the one line a notification or a panel shows, and the refusal of a request.

Every failure of a core stage (``TemplateError``, ``ExportError``, ``SessionError``, ``ModelError``, ...)
reaches the user this way: the TUI never shows a traceback.
"""

from __future__ import annotations

from typing import Literal

from workbench.runtime.errors import WorkbenchError

Severity = Literal["information", "warning", "error"]


def one_line(exc: BaseException) -> str:
    """An exception as the one line a notification shows (type name only when the message is empty).

    A :class:`WorkbenchError` folds itself (``one_line()``); anything else (a bug in a stage) is folded
    the same way, so both read alike.
    """
    text = exc.one_line() if isinstance(exc, WorkbenchError) else " ".join(str(exc).split())
    return text or type(exc).__name__


class Refused(WorkbenchError):
    """A request the app cannot start (no model, no spec, bad tools JSON): the message says why.

    Workflows raise it on the UI thread before any worker starts; the app shows it as one notification
    with ``title`` and ``severity``.
    """

    def __init__(self, reason: str, *, title: str = "", severity: Severity = "warning") -> None:
        super().__init__(reason)
        self.title = title
        self.severity: Severity = severity
