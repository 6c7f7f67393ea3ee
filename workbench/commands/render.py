"""``workbench render TEMPLATE --messages M.json [--tools T.json] [--kw key=value ...]
[--add-generation-prompt] [--template-name NAME] [--time-limit S] [--json]``.

Prints the prompt exactly as transformers' ``apply_chat_template(..., tokenize=False)`` would build it: the
template's special tokens come from its config (tokenizer_config.json, GGUF metadata) as transformers
passes them, ``--kw`` values override them, and ``tool_use`` is picked for named templates when tools are
given.  Messages and tools are validated, then handed to the template as written in the file (so tool-call
arguments stay objects when the file has objects, as templates such as Qwen3-Coder need).

Output: the rendered text with nothing added (byte-exact, for diffing and piping); with ``--json``:
``{"text", "template", "origin", "selected", "kwargs"}``.  Exit codes: 0 rendered, 1 bad input (one line
on stderr: missing file, bad JSON, template syntax error, ``raise_exception``, time-out, ...), 2 usage.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from workbench.commands._common import (
    TimeLimitOption,
    fail,
    input_errors,
    load_json_file,
    print_json,
    warn_unread_kwargs,
)
from workbench.inputs import find_unencodable
from workbench.runtime.chat import load_messages, load_tools
from workbench.template.render import DEFAULT_TIME_LIMIT, RENDER_ARGUMENTS, TemplateError, render
from workbench.template.source import load_template


def register(app: typer.Typer) -> None:
    app.command("render")(render_command)


#: Names ``render`` passes itself: a ``--kw`` of the same name would collide with them (``messages`` and
#: ``tools`` come from their files, the others from their own options).
RESERVED_KW = RENDER_ARGUMENTS


def parse_kw(items: list[str] | None) -> dict[str, Any]:
    """``key=value`` pairs; a value is JSON when it parses (``true``, ``3``, ``{"a": 1}``), else a string.

    A key the command sets itself (:data:`RESERVED_KW`) is a usage error naming the option to use instead.
    """
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise typer.BadParameter(
                f"expected key=value with a name as key, got {item!r}", param_hint="--kw"
            )
        if key in RESERVED_KW:
            raise typer.BadParameter(
                f"{key!r} is set by the command itself (use --messages, --tools, "
                "--add-generation-prompt or --time-limit), not by --kw",
                param_hint="--kw",
            )
        try:
            out[key] = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON (or JSON too deep / a huge integer): a string
            out[key] = raw
        if find_unencodable(out[key]) is not None:  # bytes that are not UTF-8 in the argument
            raise typer.BadParameter(
                f"the value of {key!r} is not text that can be encoded", param_hint="--kw"
            )
    return out


def render_command(
    template: Annotated[
        str,
        typer.Argument(
            metavar="TEMPLATE",
            help="A .jinja, tokenizer_config.json, model folder, .gguf, Hugging Face id or built-in name.",
        ),
    ],
    messages_path: Annotated[
        str,
        typer.Option("--messages", "-m", help="Messages JSON (a list, or {'messages': [...]}); - = stdin."),
    ],
    tools_path: Annotated[
        str | None,
        typer.Option("--tools", "-t", help="Tools JSON (OpenAI form). Default: 'tools' in --messages."),
    ] = None,
    kw: Annotated[
        list[str] | None,
        typer.Option(
            "--kw", help="Template variable key=value (JSON if it parses), e.g. enable_thinking=false."
        ),
    ] = None,
    add_generation_prompt: Annotated[
        bool, typer.Option("--add-generation-prompt", help="End with the assistant's turn header.")
    ] = False,
    template_name: Annotated[
        str | None,
        typer.Option("--template-name", help="Pick one of a config's named templates (e.g. tool_use)."),
    ] = None,
    time_limit: TimeLimitOption = DEFAULT_TIME_LIMIT,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the text with what was used to render it.")
    ] = False,
) -> None:
    """Render a conversation through a chat template, byte for byte as transformers would."""
    kwargs = parse_kw(kw)
    with input_errors():
        raw_messages, raw_tools = _load_inputs(messages_path, tools_path)
        source = load_template(template, template_name=template_name).for_tools(raw_tools is not None)
        warn_unread_kwargs(source, kwargs)
        context = {**source.render_kwargs(), **kwargs}
        try:
            text = render(
                source.text,
                raw_messages,
                tools=raw_tools,
                add_generation_prompt=add_generation_prompt,
                time_limit=time_limit,
                **context,
            )
        except TemplateError as exc:
            fail(f"{source.origin}: {exc}")
    if as_json:
        print_json(
            {
                "text": text,
                "template": source.name,
                "origin": source.origin,
                "selected": source.selected,
                "kwargs": context,
            }
        )
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _load_inputs(messages_path: str, tools_path: str | None) -> tuple[list[Any], list[Any] | None]:
    """The messages and tools as written in their files, after checking their OpenAI shape."""
    data = load_json_file(messages_path, "messages")
    raw_messages = data["messages"] if isinstance(data, dict) and "messages" in data else data
    load_messages(raw_messages)  # validation only: ChatDataError names what is wrong
    if tools_path is not None:
        tools_data = load_json_file(tools_path, "tools")
    elif isinstance(data, dict) and "tools" in data:
        tools_data = data["tools"]
    else:
        return list(raw_messages), None
    raw_tools = tools_data["tools"] if isinstance(tools_data, dict) and "tools" in tools_data else tools_data
    load_tools(raw_tools)
    return list(raw_messages), list(raw_tools)
