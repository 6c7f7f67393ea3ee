"""``workbench parse (--template T | --spec S) [--tools T.json] [--engine E] [--stream] [--kw K=V]``
``[--prompt P] INPUT|- [--json]``.

``--kw`` names template switches the prompt was rendered with (``reasoning_effort=none``): the output is read
from the stage that prompt leaves it in (rendered with the template, or recorded in the spec's
``prompt.switches``).  ``--prompt FILE`` gives the rendered prompt itself (a ``continue_final_message``
render of a partial answer or partial reasoning): the output is read from the stage it leaves.

``--engine`` picks the parsing policies (``workbench.engines.policies.parse_options``): ``workbench`` (the
default) is the workbench's own rules; ``llama.cpp``, ``sglang`` and ``vllm`` reproduce where those engines
read the same output differently (tool names outside the request, a call that never closes, the text after the
calls, whitespace before a call, untyped tagged values).  With ``--stream`` the engine's streaming code path
is used, without it its one-shot path, as the engines themselves differ there.

Output contract (README):
- default: the input with every character coloured by what the parser made of it (reasoning, content,
  tool name / arguments / id, markers), then the parsed message and the diagnostics;
- ``--json``: ``{"content", "reasoning_content", "tool_calls": [{"id", "name", "arguments"}],
  "diagnostics": [...], "finish_reason"}`` with ``arguments`` as a JSON value;
- ``--stream --json``: the input is fed in small pieces (about one token each) and every OpenAI
  ``chat.completion.chunk`` is printed on its own line; the last one carries ``finish_reason`` and the
  diagnostics.

A call the output ends inside (its arguments are not a whole JSON object: a ``max_tokens`` cut) is never
reported as a call that was made, as the servers do: the one-shot answer leaves it out with an
E-STREAM-TRUNCATED diagnostic, and ``finish_reason`` is ``length`` (streamed: after the pieces already sent).

Exit codes: 0 parsed (diagnostics included), 1 bad input (unreadable file, invalid spec/tools, template
error), 2 usage (neither or both of --template / --spec, an unknown --engine).
"""

from __future__ import annotations

import re
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from workbench.commands._common import (
    SPAN_STYLES,
    console,
    input_errors,
    load_json_file,
    print_json,
    render_budget,
    strict_json,
    warn_unread_kwargs,
)
from workbench.commands.options import EnableThinkingOption, SpecFileOption, TemplateOption, ToolsFileOption
from workbench.engines import parse_profiles
from workbench.inputs import read_input_text
from workbench.runtime.chat import Tool, load_tools
from workbench.runtime.events import Event
from workbench.services import parse_options, resolve, spec_warning
from workbench.template.limits import DEFAULT_TIME_LIMIT

_PIECE_RX = re.compile(r"\w+|\s+|[^\w\s]+")
#: Shortest piece ``--stream`` feeds (shorter runs join the next): about a token's worth of text, so the
#: number of feeds (each one a parser step and a printed chunk) is at most a quarter of the characters
#: whatever the text is (1 MB of ``<a<a...`` used to be a million feeds).
MIN_PIECE = 4


def stream_pieces(text: str) -> list[str]:
    """``text`` cut as a model would stream it: words, spaces and punctuation runs, each piece at least
    :data:`MIN_PIECE` characters (the last may be shorter).  The pieces add up to ``text``."""
    pieces: list[str] = []
    pending: list[str] = []
    size = 0
    for match in _PIECE_RX.finditer(text):
        pending.append(match.group())
        size += match.end() - match.start()
        if size >= MIN_PIECE:
            pieces.append("".join(pending))
            pending, size = [], 0
    if pending:
        pieces.append("".join(pending))
    return pieces


#: The ``--engine`` choices, straight from the parser's profile list so the two cannot drift apart.
Engine = Enum("Engine", {name.replace(".", "_"): name for name in parse_profiles()}, type=str)  # type: ignore[misc]


def register(app: typer.Typer) -> None:
    app.command("parse")(parse_command)


def parse_command(
    input_path: Annotated[str, typer.Argument(metavar="INPUT", help="Model output file, or - for stdin.")],
    template: TemplateOption = None,
    spec_path: SpecFileOption = None,
    tools_path: ToolsFileOption = None,
    enable_thinking: EnableThinkingOption = True,
    keep_reasoning: Annotated[
        bool,
        typer.Option("--keep-reasoning-tags", help="Leave reasoning in the content (reasoning_format none)."),
    ] = False,
    engine: Annotated[
        Engine,
        typer.Option(
            "--engine",
            help="Parsing policies: the workbench's own, or those of llama.cpp, SGLang or vLLM "
            "(workbench.engines).",
        ),
    ] = Engine("workbench"),
    stream: Annotated[
        bool, typer.Option("--stream", help="Feed the input piece by piece, as a server would.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Machine-readable output (see the contract).")
    ] = False,
    kw: Annotated[
        list[str] | None,
        typer.Option(
            "--kw",
            help="Template switch key=value the prompt was rendered with (e.g. reasoning_effort=none): the "
            "output is read from where that prompt leaves it.",
        ),
    ] = None,
    prompt_path: Annotated[
        Path | None,
        typer.Option(
            "--prompt",
            help="The rendered prompt the output continues (a generation prompt or a continue_final_message "
            "render): the output is read from where it leaves it (reasoning, answer, content).",
        ),
    ] = None,
) -> None:
    """Parse a model output with a template's (or a spec's) FormatSpec."""
    if (template is None) == (spec_path is None):
        print("usage error: give exactly one of --template or --spec", file=sys.stderr)
        raise typer.Exit(code=2)
    from workbench.analysis.switches import start_stage_for
    from workbench.commands.render import parse_kw
    from workbench.runtime.parsing import DeltaTracker, StreamParser
    from workbench.runtime.parsing.deltas import chunk, finish_reason

    template_kwargs = parse_kw(kw)
    # The analysis, its self-check and the switch renders share one deadline and one output cap.
    with input_errors(), render_budget(DEFAULT_TIME_LIMIT, f"reading the template {template}"):
        resolved = resolve(template, spec_path)
        spec = resolved.spec
        warn_unread_kwargs(resolved.source, template_kwargs)
        if warning := spec_warning(resolved):
            print(f"warning: {warning}", file=sys.stderr)
        tools = _load_tools(tools_path)
        text = _read_input(input_path)
        stage, note = start_stage_for(spec, resolved.source, template_kwargs, enable_thinking=enable_thinking)
        if prompt_path is not None:
            prompt = read_input_text(str(prompt_path), "prompt")
            stage = spec.output_start_stage(generation_prompt=prompt, enable_thinking=enable_thinking)
            note = ""
    if note:
        print(f"warning: {note}", file=sys.stderr)
    options = parse_options(
        engine=engine.value,
        streaming=stream,
        enable_thinking=enable_thinking,
        keep_reasoning=keep_reasoning,
        start_stage=stage,
    )
    parser = StreamParser(spec, tools, options=options)
    pieces = stream_pieces(text) if stream else [text]

    if stream and as_json:
        tracker = DeltaTracker(parser)
        first = True
        for piece in pieces:
            parser.feed(piece)
            for delta in tracker.take():
                if first:
                    delta = {"role": "assistant", **delta}
                    first = False
                _print_line(chunk(delta))
        result = parser.finish()
        for delta in tracker.take():
            _print_line(chunk(delta))
        last = chunk({}, finish_reason=finish_reason(result))
        last["diagnostics"] = [d.to_dict() for d in result.diagnostics]
        _print_line(last)
        return

    events: list[Event] = []
    shown = _Shown()
    for piece in pieces:
        new = parser.feed(piece)
        events.extend(new)
        if stream and not as_json:
            shown.add(new)
    shown.flush()
    result = parser.finish()
    events.extend(parser.final_events)
    reason = finish_reason(result)
    result = result.without_cut_calls()  # as a server's one-shot answer: a cut call was not made
    if as_json:
        print_json({**result.to_contract(), "finish_reason": reason})
        return
    if stream:
        console.print(_coloured(parser.final_events))
    else:
        console.print(_coloured(events))
    _print_summary(result)


class _Shown:
    """The streamed events printed as they come, but at most every :data:`_SHOW_EVERY` seconds: one terminal
    write per piece cost ~0.2 ms (a 1 MB output took minutes to show); the text shown is the same."""

    def __init__(self) -> None:
        self.pending: list[Event] = []
        self.last = time.monotonic()

    def add(self, new: list[Event]) -> None:
        self.pending.extend(new)
        if time.monotonic() - self.last >= _SHOW_EVERY:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            console.print(_coloured(self.pending), end="")
            self.pending = []
        self.last = time.monotonic()


_SHOW_EVERY = 0.05


def _load_tools(path: Path | None) -> list[Tool] | None:
    if path is None:
        return None
    return load_tools(load_json_file(path, "tools"))


def _read_input(ref: str) -> str:
    """The model output to parse: a regular file or stdin, strict UTF-8, size-capped (workbench.inputs)."""
    return read_input_text(ref, "input")


def _coloured(events: list[Event]) -> Text:
    out = Text()
    for ev in events:
        out.append(ev.text, style=SPAN_STYLES.get(ev.kind, "default"))
    return out


def _print_summary(result: Any) -> None:
    msg = result.message
    console.print()
    legend = Text("legend: ")
    for kind, style in SPAN_STYLES.items():
        legend.append(kind, style=style)
        legend.append(" ")
    console.print(legend)
    if msg.reasoning_content:
        console.print(
            Text("reasoning: ", style="bold") + Text(msg.reasoning_content, style=SPAN_STYLES["reasoning"])
        )
    if msg.content:
        console.print(Text("content: ", style="bold") + Text(msg.content))
    for i, call in enumerate(msg.tool_calls):
        line = Text(f"tool call {i}: ", style="bold")
        line.append(call.name, style=SPAN_STYLES["tool_name"])
        if call.id:
            line.append(f" (id {call.id})", style=SPAN_STYLES["tool_id"])
        line.append(" ")
        line.append(call.arguments, style=SPAN_STYLES["tool_args"])
        console.print(line)
    for d in result.diagnostics:
        style = {"error": "red", "warning": "yellow"}.get(d.severity, "blue")
        console.print(Text(f"{d.severity} {d.code}: {d.message}", style=style))


def _print_line(data: dict[str, Any]) -> None:
    sys.stdout.write(strict_json(data, indent=None) + "\n")
