"""``workbench analyze TEMPLATE... [--json]``: differential analysis of chat templates.

Output contract:
- default: per template, every probe (its question, then the common prefix / A-only / B-only / common suffix
  of its two renders side by side, and what was read from it), then the markers table, the modes and the
  warnings;
- ``--json``: ``{"spec": FormatSpec, "probes": [...], "warnings": [...]}`` (plus ``template``, ``notes`` and
  ``verdicts``) for one template, a JSON list of those for several. ``verdicts`` is the self-check
  (:mod:`workbench.selfcheck`): per feature ``works`` / ``not_rendered`` / ``cannot_express`` with the first
  failing case and its difference, ``untested`` (the template renders it, no case could run) with why, and
  ``unstable`` when the template renders differently each time; a ``cannot_express``, ``untested`` or
  ``unstable`` verdict is also a warning. ``--no-check`` skips it.
  A template that cannot be analysed is an entry ``{"template": ..., "error": ...}`` in the list.

TEMPLATE is anything ``load_template`` accepts (file, model folder, tokenizer_config.json, .gguf, alias of a
project template); a folder that is not a model folder stands for the templates (``*.jinja``) inside it.

Exit codes: 0 every template analysed; 1 bad input (one line on stderr per template that failed); 2 usage.
"""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from workbench.commands._common import (
    INPUT_ERRORS,
    TimeLimitOption,
    console,
    fail,
    print_json,
    render_budget,
)
from workbench.selfcheck import Verdict

PREFIX_CHARS = 160
SUFFIX_CHARS = 160
PART_CHARS = 900
_MODEL_FOLDER_FILES = ("chat_template.jinja", "tokenizer_config.json", "chat_templates")


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze_command)


def expand_refs(refs: list[str]) -> list[str]:
    """A folder that is not a model folder stands for the ``*.jinja`` files inside it (sorted)."""
    out: list[str] = []
    for ref in refs:
        path = Path(ref)
        if path.is_dir() and not any((path / n).exists() for n in _MODEL_FOLDER_FILES):
            inner = sorted(str(p) for p in path.glob("*.jinja"))
            if inner:
                out.extend(inner)
                continue
        out.append(ref)
    return out


def analyze_command(
    templates: Annotated[
        list[str],
        typer.Argument(
            help="Templates: .jinja, tokenizer_config.json, model folder, .gguf, alias, or a folder."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the analysis as JSON.")] = False,
    time_limit: TimeLimitOption = 2.0,
    check: Annotated[
        bool,
        typer.Option("--check/--no-check", help="Parse the template's round-trip renders back (self-check)."),
    ] = True,
) -> None:
    """Work out how a template marks reasoning, content and tool calls, by differential rendering."""
    from workbench.formats import analyze
    from workbench.selfcheck import EarlyRenders, check_spec, warning_line
    from workbench.template.render_cache import cached_renders
    from workbench.template.source import load_template

    refs = expand_refs(templates)
    results: list[dict[str, Any]] = []
    errors: list[str] = []
    for ref in refs:
        with cached_renders():  # one command: the self-check reuses the analysis's renders
            # the analysis and its self-check, together
            budget = render_budget(time_limit, f"analysing {ref}")
            early = EarlyRenders(time_limit)  # the self-check's first renders, alongside the analysis
            try:
                with budget:
                    analysis = analyze(
                        load_template(ref), time_limit=time_limit, on_spec=early.start if check else None
                    )
            except INPUT_ERRORS as exc:
                early.join()
                if len(refs) == 1:
                    fail(_named(ref, exc))
                errors.append(_named(ref, exc))
                results.append({"template": ref, "error": _one_line(str(exc))})
                continue
            early.join()
            verdicts: tuple[Verdict, ...] = ()
            if check:
                try:
                    with budget:
                        verdicts = check_spec(analysis.source, analysis.spec, time_limit=time_limit)
                except INPUT_ERRORS as exc:  # the self-check renders more messages than the probes did
                    analysis.warnings.append(f"self-check could not run: {_one_line(str(exc))}")
            if warning := warning_line(verdicts):
                analysis.warnings.append(warning)
            if as_json:
                results.append({**analysis.to_dict(), "verdicts": [v.to_dict() for v in verdicts]})
            else:
                print_analysis(analysis, verdicts)
    if as_json:
        print_json(results[0] if len(refs) == 1 else results)
    for err in errors:
        print(f"error: {_one_line(err)}", file=sys.stderr)
    if errors:
        raise typer.Exit(code=1)


def _named(ref: str, exc: BaseException) -> str:
    """The error, after the template it is about unless it already starts with that (a source error does)."""
    text = str(exc)
    return text if text.startswith(ref) else f"{ref}: {text}"


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")[0].split())


# ----------------------------------------------------------------------------------------- human output
def _show(text: str) -> str:
    """Rich markup for a fragment of rendered text, with line breaks and edge spaces made visible."""
    shown = escape(text).replace("\n", "[dim]⏎[/]\n")
    if text[:1] == " ":
        shown = "[dim]·[/]" + shown[1:]
    if text[-1:] == " ":
        shown = shown[:-1] + "[dim]·[/]"
    return shown


def _clip_tail(text: str, n: int) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def _clip_head(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "…"


def print_analysis(analysis: Any, verdicts: tuple[Verdict, ...] = ()) -> None:
    """The human report of one analysis (probes side by side, markers, modes, self-check, warnings)."""
    spec = analysis.spec
    console.rule(f"[bold]{escape(analysis.source.name)}[/] [dim]{spec.provenance.template_sha256[:16]}[/]")
    for p in analysis.probes:
        head = f"[bold cyan]{p.id}[/] {escape(p.question)}"
        console.print(head)
        console.print(
            f"  [dim]A: {escape(p.variant_a.description)}   B: {escape(p.variant_b.description)}[/]"
        )
        if p.error:
            console.print(f"  [bold red]render failed:[/] {escape(p.error)}")
        if p.diff is not None and not p.diff.identical:
            table = Table(show_header=True, header_style="bold", expand=True, padding=(0, 1))
            table.add_column("prefix (common)", style="dim", ratio=2, overflow="fold")
            table.add_column("left (A only)", style="red", ratio=3, overflow="fold")
            table.add_column("right (B only)", style="green", ratio=3, overflow="fold")
            table.add_column("suffix (common)", style="blue", ratio=2, overflow="fold")
            d = p.diff
            table.add_row(
                _show(_clip_tail(d.prefix, PREFIX_CHARS)),
                _show(_clip_head(d.left, PART_CHARS)),
                _show(_clip_head(d.right, PART_CHARS)),
                _show(_clip_head(d.suffix, SUFFIX_CHARS)),
            )
            console.print(table)
        elif p.diff is not None:
            console.print("  [dim](the two renders are identical)[/]")
        if p.outcome:
            console.print(f"  [yellow]→[/] {escape(p.outcome)}")
    _print_markers(spec)
    _print_switches(spec)
    if verdicts:
        _print_verdicts(verdicts)
    for note in analysis.notes:
        console.print(f"[dim]note: {escape(note)}[/]")
    for warning in analysis.warnings:
        console.print(f"[bold yellow]warning:[/] {escape(warning)}")


def _print_markers(spec: Any) -> None:
    modes = Table(title="modes", show_header=False, title_justify="left")
    modes.add_column("part", style="bold")
    modes.add_column("value")
    modes.add_row("reasoning", spec.reasoning.mode)
    modes.add_row("content", spec.content.mode)
    modes.add_row("tools", spec.tools.format + (" (parallel)" if spec.tools.parallel else ""))
    if spec.envelope.defined:
        members = ", ".join(f"{m.key} ({m.holds})" for m in spec.envelope.members)
        modes.add_row("reply", f"one JSON object: {members}")
    p = spec.prompt
    modes.add_row("prompt opens reasoning", str(p.thinking_opened))
    modes.add_row("thinking switch", str(p.supports_thinking_toggle))
    console.print(modes)
    table = Table(title="markers", title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value", style="green")
    rows: list[tuple[str, str]] = [
        ("reasoning.start", spec.reasoning.start),
        ("reasoning.end", spec.reasoning.end),
        ("content.start", spec.content.start),
        ("content.end", spec.content.end),
        *(
            (f"content.{name}", value)
            for name in ("with_calls_start", "with_calls_end")
            if (value := getattr(spec.content, name))
        ),
        ("prompt.generation_prompt", p.generation_prompt),
        ("prompt.suffix_when_thinking", p.suffix_when_thinking),
        ("prompt.suffix_when_not_thinking", p.suffix_when_not_thinking),
    ]
    for fl in fields(spec.tools):
        value = getattr(spec.tools, fl.name)
        if fl.name == "format" or value in ("", False, (), "none"):
            continue
        if fl.name == "pattern":
            if value.defined:
                rows.append(("tools.pattern", value.describe()))
            continue
        rows.append((f"tools.{fl.name}", ", ".join(value) if isinstance(value, tuple) else str(value)))
    rows.append(("end_markers", ", ".join(spec.end_markers)))
    for name, value in rows:
        if value:
            table.add_row(name, _show(value) if isinstance(value, str) else str(value))
    console.print(table)


_VERDICT_STYLES = {
    "works": "green",
    "not_rendered": "dim",
    "cannot_express": "bold red",
    "untested": "bold yellow",
    "unstable": "bold red",
}
_VERDICT_WORDS = {
    "works": "works",
    "not_rendered": "the template does not render it",
    "cannot_express": "THE SPEC CANNOT EXPRESS IT",
    "untested": "UNTESTED",
    "unstable": "THE TEMPLATE RENDERS DIFFERENTLY EACH TIME",
}


def _print_verdicts(verdicts: tuple[Verdict, ...]) -> None:
    table = Table(title="self-check: the template's renders parsed back with this spec", title_justify="left")
    table.add_column("feature", style="bold")
    table.add_column("verdict")
    table.add_column("why / first difference", overflow="fold")
    for v in verdicts:
        style = _VERDICT_STYLES[v.status]
        detail = v.reason if v.status != "cannot_express" else f"{v.case}: {v.difference}" if v.case else ""
        table.add_row(v.feature, f"[{style}]{_VERDICT_WORDS[v.status]}[/]", escape(detail))
    console.print(table)


def _print_switches(spec: Any) -> None:
    """The template switches found (``prompt.switches``): per value, what it changes and where the output
    starts; pass one with ``--kw NAME=VALUE`` to render, parse, validate or generate."""
    switches = spec.prompt.switches
    if not switches:
        return
    table = Table(title="template switches (pass with --kw NAME=VALUE)", title_justify="left")
    table.add_column("switch", style="bold")
    table.add_column("value")
    table.add_column("output starts")
    table.add_column("changes", overflow="fold")
    for name, info in switches.items():
        for effect in info["effects"]:
            value = json.dumps(effect["value"], ensure_ascii=False)
            changes = ", ".join(effect["changes"]) or "(as the default)"
            table.add_row(escape(name), escape(value), effect.get("start", "?"), escape(changes))
    console.print(table)
