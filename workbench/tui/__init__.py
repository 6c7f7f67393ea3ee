"""The workbench terminal UI: a thin Textual shell over the core stages (see docs/tui.md).

Nothing in this package decides how a template is analyzed, parsed or decoded: screens show what the core
packages compute and send the user's actions back to them.
"""

from __future__ import annotations

__all__ = ["WorkbenchApp"]


def __getattr__(name: str) -> object:
    # Importing the package must stay cheap (the CLI imports it to register the command).
    if name == "WorkbenchApp":
        from workbench.tui.app import WorkbenchApp

        return WorkbenchApp
    raise AttributeError(name)
