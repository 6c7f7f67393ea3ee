"""What every command shares: one-line errors with exit code 1, JSON file loading, the rich console.

Every error a stage raises for bad input derives from :class:`~workbench.errors.WorkbenchError`, so
:func:`input_errors` catches that one root (plus the OS-level read errors) instead of a list of types that
would have to grow with every stage.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from workbench.errors import WorkbenchError

console = Console(highlight=False, soft_wrap=True)

#: One colour per event kind, shared by every command that prints coloured spans (parse, generate, replay).
SPAN_STYLES: dict[str, str] = {
    "reasoning": "italic grey62",
    "content": "default",
    "tool_name": "bold cyan",
    "tool_args": "green",
    "tool_id": "magenta",
    "marker": "dim yellow",
}

# Exceptions that mean "the input was bad": one line on stderr, exit code 1.
INPUT_ERRORS: tuple[type[BaseException], ...] = (WorkbenchError, OSError, UnicodeDecodeError)


def fail(message: str) -> NoReturn:
    """Print one clear line on stderr and exit with code 1."""
    first = " ".join(str(message).split("\n")[0].split())
    print(f"error: {first}", file=sys.stderr)
    raise typer.Exit(code=1)


@contextmanager
def input_errors() -> Iterator[None]:
    """Turn any :class:`WorkbenchError` (and unreadable files, invalid JSON) into ``fail``: one line, exit 1,
    never a traceback."""
    try:
        yield
    except typer.Exit:
        raise
    except INPUT_ERRORS as exc:
        fail(str(exc))
    except json.JSONDecodeError as exc:
        fail(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def guard_command(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` run inside :func:`input_errors`: an error a command does not catch is still one line.

    ``functools.wraps`` keeps the signature and annotations Typer reads the options from.
    """

    @functools.wraps(command)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        with input_errors():
            return command(*args, **kwargs)

    return guarded


def load_json_file(path: str | Path, what: str) -> Any:
    """Read a JSON file (``-`` = stdin); errors name the file and what it should have held."""
    try:
        text = sys.stdin.read() if str(path) == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        fail(f"{what} file not found: {path}")
    except OSError as exc:
        fail(f"cannot read {what} file {path}: {exc.strerror}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{what} file {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
