"""The options of the commands that read a request the way a server would (``parse``, ``generate``).

One declaration each (a typer ``Annotated`` alias), so the commands cannot drift apart in an option's name,
type or meaning; the options every command shares otherwise (``--time-limit``) live in ``_common``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: ``--spec`` where the spec is read as the format to use: an exported FormatSpec file.
SpecFileOption = Annotated[Path | None, typer.Option("--spec", help="A FormatSpec JSON file (the export).")]

#: ``--template``: the template whose analysis gives the format.
TemplateOption = Annotated[
    str | None, typer.Option("--template", "-t", help="Template (file, model dir or built-in name).")
]

#: ``--tools``: the request's tools, an OpenAI tools JSON file.
ToolsFileOption = Annotated[Path | None, typer.Option("--tools", help="The request's tools (OpenAI JSON).")]

#: ``--enable-thinking``: the request's thinking switch (reasoning is read, and never masked, when on).
EnableThinkingOption = Annotated[
    bool,
    typer.Option("--enable-thinking/--no-enable-thinking", help="The request's thinking switch."),
]
