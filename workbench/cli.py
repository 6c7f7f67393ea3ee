"""The ``workbench`` command line: a thin Typer shell over the core packages.

Each sub-command lives in ``workbench/commands/<name>.py`` and exposes ``register(app)``; adding a
command is one new file and one line in ``COMMANDS``.  Exit codes (a documented contract): 0 success,
1 bad input (one clear line on stderr), 2 usage.  Every command runs guarded
(:func:`workbench.commands._common.guard_command`): a :class:`~workbench.runtime.errors.WorkbenchError` it
does not handle itself is still one line on stderr and exit code 1, never a traceback.
"""

from __future__ import annotations

import importlib

import typer

from workbench.commands._common import guard_command

app = typer.Typer(
    name="workbench",
    help="Analyse chat templates, parse model output, step through constrained generation.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

COMMANDS: list[str] = [
    "analyze",
    "validate",
    "export",
    "replay",
    "conformance",
    "parse",
    "generate",
    "render",
    "tui",
    "model",
    "recommend",
]

for _name in COMMANDS:
    importlib.import_module(f"workbench.commands.{_name}").register(app)
for _info in app.registered_commands:
    if _info.callback is not None:
        _info.callback = guard_command(_info.callback)


def main() -> None:  # pragma: no cover - console entry point
    app()
