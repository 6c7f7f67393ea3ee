"""``workbench tui [TEMPLATE] [--spec S] [--model M] [--session S]``: open the terminal workbench."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from workbench.commands._common import fail, input_errors


def register(app: typer.Typer) -> None:
    app.command("tui")(tui)


def tui(
    template: Annotated[
        str | None, typer.Argument(help="Template to open (default: the embedded one).")
    ] = None,
    spec: Annotated[
        str | None,
        typer.Option(
            "--spec",
            help="Use this spec (an exported spec, or `workbench analyze --json` output) instead of the "
            "analysis' for Generate, the Inspector and Export.",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model folder, GGUF file or hub id.")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Session file to step through.")
    ] = None,
    session_dir: Annotated[
        str | None,
        typer.Option("--session-dir", help="Where ctrl+s saves sessions (default: the user data directory)."),
    ] = None,
    no_model: Annotated[bool, typer.Option("--no-model", help="Do not load any model.")] = False,
) -> None:
    """Open the workbench TUI: template, analysis, generation and the decode inspector."""
    from workbench.template.source import DEFAULT_TEMPLATE, load_template

    with input_errors():
        source = load_template(template or DEFAULT_TEMPLATE)
    loaded = None
    if spec is not None:
        from workbench.spec_io import load_spec

        with input_errors():
            loaded = load_spec(spec)
    if session is not None:
        from pathlib import Path

        if not Path(session).is_file():
            fail(f"session file not found: {session}")
    from workbench.tui.app import WorkbenchApp

    # A session replays without a model; one is loaded only when asked for with --model.
    load = bool(model) if session is not None else not no_model
    app = WorkbenchApp(
        source,
        model=model,
        session=session,
        load_model=load,
        session_dir=session_dir,
        spec=loaded,
        spec_path=spec or "",
    )
    app.run()
    leave_now(app.return_code or 0)


def leave_now(code: int) -> None:
    """End the process as soon as the app has closed.

    Everything worth keeping is written before the app exits (saves are atomic and happen on the UI
    thread), but worker threads may still be inside a model load or a template render that cannot be
    interrupted, and the interpreter would wait for them: ``ctrl+q`` must end the process within a second,
    so the render workers are stopped and the process leaves without waiting for those threads.
    """
    from workbench.template.render import stop_render_workers

    stop_render_workers()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
