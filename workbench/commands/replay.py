"""``workbench replay SESSION [--json]``: step through a recorded session without a model.

The recorded token texts are fed, step by step, to a fresh parser built from the session's spec; the text is
printed colour-coded by what the parser made of it (reasoning, content, tool name, tool arguments, markers),
followed by the final message and whether it matches the message recorded in the session.

The template kwargs the session was generated with (``enable_thinking``, switches such as
``reasoning_effort``; none in a session written before they were recorded) are shown, and the prompt is
re-rendered with them from the recorded template text and compared with the recorded prompt (a difference is
reported, not an error: the replay itself only needs the steps).

Output contract (``--json``): ``{"session", "matches", "mismatches", "message", "recorded", "diagnostics",
"steps": [{"index", "token_id", "token_text", "events": [{"kind", "text", "tool_index"}]}], "template_kwargs",
"prompt_check": {"status": "matches" | "differs" | "not checked", "detail"}}``.
Exit codes: 0 the replay reproduces the recorded message; 1 bad input (unreadable, truncated, corrupt or
newer-version session) or a replay that differs from the recording; 2 usage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from workbench.commands._common import SPAN_STYLES, console, fail, print_json, strict_json


def format_kwargs(kwargs: dict[str, Any]) -> str:
    """``key=value`` pairs as ``--kw`` takes them (values as JSON), or a word when there are none."""
    if not kwargs:
        return "(none recorded)"
    return " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in kwargs.items())


def register(app: typer.Typer) -> None:
    app.command("replay")(replay_command)


def replay_command(
    session: Annotated[Path, typer.Argument(help="A session file (sessions/*.json).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the replay as JSON.")] = False,
) -> None:
    """Replay a recorded session offline and check it reproduces its parsed message."""
    from workbench.session import SessionError, load_session, prompt_check, replay_session

    try:
        recorded = load_session(session)
        result = replay_session(recorded)
    except SessionError as exc:
        fail(str(exc))
    except Exception as exc:  # a parser failure on recorded text is reported, not a traceback
        fail(f"replaying {session} failed: {type(exc).__name__}: {exc}")
    check = prompt_check(recorded)
    if as_json:
        print_json(
            {
                "session": str(session),
                **result.to_dict(),
                "template_kwargs": recorded.template_kwargs,
                "prompt_check": check,
            }
        )
    else:
        # Everything recorded in a session is untrusted text: printed escaped, never as markup.
        header = f"[bold]{escape(session.name)}[/]  template {escape(recorded.template.name or '?')}"
        model = escape(recorded.model.name or recorded.model.ref or "?")
        console.print(f"{header}  model {model}  {len(recorded.steps)} steps")
        console.print(f"template kwargs: {escape(format_kwargs(recorded.template_kwargs))}")
        style = {"matches": "green", "differs": "yellow"}.get(check["status"], "dim")
        said = f" ({escape(check['detail'])})" if check["detail"] else ""
        console.print(f"[{style}]prompt re-rendered with them: {check['status']}[/]{said}")
        text = Text()
        for item in result.steps:
            for event in item.events:
                text.append(event.text, style=SPAN_STYLES.get(event.kind, ""))
        console.print(text)
        console.print("[bold]message[/]")
        console.print(strict_json(result.parsed), markup=False)
        for diag in result.diagnostics:
            code, message = escape(str(diag.get("code"))), escape(str(diag.get("message")))
            console.print(f"[yellow]diagnostic[/] {code}: {message}")
    if not result.matches:
        fail(f"replay differs from the recorded message: {result.mismatches[0]}")
    if not as_json:
        console.print("[green]replay matches the recorded message[/]")
