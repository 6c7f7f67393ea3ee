"""What every command shares: one-line errors with exit code 1, JSON file loading, the rich console.

Every error a stage raises for bad input derives from :class:`~workbench.runtime.errors.WorkbenchError`, so
:func:`input_errors` catches that one root (plus the OS-level read errors) instead of a list of types that
would have to grow with every stage.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from workbench.inputs import InputError, loads_bounded, read_input_text
from workbench.runtime.errors import WorkbenchError

_SURROGATE = re.compile("[\ud800-\udfff]")

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


def time_limit_value(value: float) -> float:
    """Typer callback for every ``--time-limit``: one rule (finite, positive, bounded) for all commands."""
    from workbench.template.render import TemplateError, check_time_limit

    try:
        return check_time_limit(value)
    except TemplateError as exc:
        raise typer.BadParameter(str(exc)) from None


#: The ``--time-limit`` option every rendering command takes, checked by :func:`time_limit_value`.
TimeLimitOption = Annotated[
    float,
    typer.Option(
        "--time-limit",
        help="Seconds allowed per render; the renders of one analysis, validation or prompt together get "
        "10x this.",
        callback=time_limit_value,
    ),
]


#: The optional TEMPLATE argument of the commands that take a template, or ``--spec`` instead of one.
TemplateArgument = Annotated[
    str | None,
    typer.Argument(help="Template: .jinja, tokenizer_config.json, model folder, .gguf or alias."),
]


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
        _printable_streams()
        with input_errors():
            return command(*args, **kwargs)

    return guarded


def _printable_streams() -> None:
    """Text no encoding holds (a lone surrogate a model's escaped string decodes to, a character the
    terminal's encoding lacks) is printed escaped (``\\ud83d``), never a traceback in a report."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def render_budget(time_limit: float, what: str) -> Any:
    """One :class:`~workbench.template.budget.RenderBudget` for the renders of one unit of a command's work
    (a template analysed and self-checked, validated, exported; a prompt rendered): one deadline and one
    output cap, from the command's own ``--time-limit``.  Use as ``with render_budget(...):``."""
    from workbench.template.budget import RenderBudget

    return RenderBudget(time_limit, what=what)


def load_json_file(path: str | Path, what: str) -> Any:
    """Read a JSON file (``-`` = stdin); errors name the file and what it should have held."""
    name = f"{what} on stdin" if str(path) == "-" else f"{what} file {path}"
    try:
        return loads_bounded(read_input_text(path, what), name)
    except InputError as exc:
        fail(str(exc))


def strict_json(data: Any, *, indent: int | None = 2) -> str:
    """JSON every consumer accepts: no NaN/Infinity, and lone surrogates (which a model's text may hold and
    UTF-8 cannot encode) written as ``\\uXXXX`` escapes instead of crashing the write."""
    text = json.dumps(data, ensure_ascii=False, indent=indent, allow_nan=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_json(data: Any) -> None:
    sys.stdout.write(strict_json(data) + "\n")


def warn_unread_kwargs(source: Any, kwargs: dict[str, Any]) -> None:
    """One stderr line when a ``--kw`` key is a variable the template never reads (it would be silently
    ignored), naming the variables it does read; nothing without a template or without ``--kw``."""
    if source is None or not kwargs:
        return
    from workbench.analysis.switches import kwargs_warning

    if warning := kwargs_warning(source, kwargs):
        print(f"warning: {warning}", file=sys.stderr)
