"""No exception ends the app: every handler of the app and of its screens is guarded.

Textual ends the whole app on an exception in any message handler (and stops that widget's message loop
first).  A bug in one action, or data nobody anticipated, must instead cost one notification: the person
keeps the app, and with it every unsaved edit.  :class:`Guarded` is mixed into the app, the workbench
screens and the dialogs; it hands the exception to the app's one handler,
``WorkbenchApp.report_error``, which shows it as one line, logs the traceback and keeps a recovery copy of
unsaved edits.  Exceptions Textual reports by other paths (timers, callbacks after a refresh, workers
started with ``exit_on_error``) reach the same handler through ``WorkbenchApp._handle_exception``.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message


class Guarded:
    """Mixin for a Textual message pump (App or Screen): a handler that raises is reported, not fatal.

    Overrides ``_on_message``, the one method every event and message of a pump passes through, since
    Textual offers no public hook there (checked against Textual 8).
    """

    app: Any

    async def _on_message(self, message: Message) -> None:
        try:
            await super()._on_message(message)  # type: ignore[misc]
        except Exception as error:
            reporter = getattr(self.app, "report_error", None)
            if reporter is None:
                raise
            reporter(error, f"{type(self).__name__}.{message.handler_name}")
