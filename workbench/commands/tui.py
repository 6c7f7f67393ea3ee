"""``workbench tui [TEMPLATE] [--model M] [--session S]``: open the terminal workbench."""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.commands._common import fail, input_errors


def register(app: typer.Typer) -> None:
    app.command("tui")(tui)


def tui(
    template: Annotated[
        str | None, typer.Argument(help="Template to open (default: the embedded one).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model folder, GGUF file or hub id.")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Session file to step through.")
    ] = None,
    no_model: Annotated[bool, typer.Option("--no-model", help="Do not load any model.")] = False,
) -> None:
    """Open the workbench TUI: template, analysis, generation and the decode inspector."""
    from workbench.template.source import DEFAULT_TEMPLATE, load_template

    with input_errors():
        source = load_template(template or DEFAULT_TEMPLATE)
    if session is not None:
        from pathlib import Path

        if not Path(session).is_file():
            fail(f"session file not found: {session}")
    from workbench.tui.app import WorkbenchApp

    # A session replays without a model; one is loaded only when asked for with --model.
    load = bool(model) if session is not None else not no_model
    WorkbenchApp(source, model=model, session=session, load_model=load).run()
