"""The one exception root of the workbench.

Every error that means "the input, the template, the spec or the environment is not what this stage can use"
derives from :class:`WorkbenchError`, so the CLI and the TUI turn any of them into one line (the CLI with exit
code 1) without listing exception types.  Internal control-flow exceptions of the parsers (``More``, ``Fail``)
are not errors in this sense and stay outside the tree.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base of every error the shells report as one line: ``str(exc)`` is that line."""

    def one_line(self) -> str:
        """The message folded to one line, as the CLI and the TUI show it."""
        return " ".join(str(self).split())
