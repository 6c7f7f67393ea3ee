"""Errors as the one line a notification or a panel shows.

Every failure of a core stage (``TemplateError``, ``ExportError``, ``SessionError``, ``ModelError``, ...)
reaches the user this way: the TUI never shows a traceback.
"""

from __future__ import annotations


def one_line(exc: BaseException) -> str:
    """An exception as the one line a notification shows (type name only when the message is empty)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
