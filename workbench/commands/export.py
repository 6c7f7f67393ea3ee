"""``workbench export (TEMPLATE | --spec S) --target T -o PATH [--force]``: write a validated parser config.

Targets: ``spec`` (default; FormatSpec JSON with provenance and the validation report),
``response-template`` (the ``response_template`` of transformers/vLLM/SGLang; ``--profile`` picks the
consumer), ``structural-tag`` (xgrammar, needs ``--tools``), ``tests`` (a
pytest file; ``--session`` adds recorded sessions), ``lark`` (llguidance Lark for ``--tokenizer``),
``vllm-plugin`` / ``sglang-plugin`` (a folder: the engine's parser plug-in, proven in the engine when
``make engines`` has run).  See docs/export.md.

The spec must be validated and, for ``response-template`` and ``structural-tag``, the consumer (transformers,
xgrammar) must agree with our parser on every round-trip case; otherwise nothing is written unless
``--force``.  The file is written atomically: on any error the previous file is left untouched.

Output contract: one line on stderr per warning; on stdout a one-line summary, or with ``--json`` an object
``{"target", "path", "validated", "validation", "proof", "warnings"}``.
Exit codes: 0 written; 1 bad input, not validated, or the consumer disagreed (nothing written); 2 usage.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.commands._common import (
    TemplateArgument,
    TimeLimitOption,
    fail,
    input_errors,
    load_json_file,
    print_json,
    render_budget,
    strict_json,
)
from workbench.services import load_inputs


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)


def export_command(
    template: TemplateArgument = None,
    output: Annotated[str, typer.Option("--output", "-o", help="Where to write (`-` for stdout).")] = "",
    target: Annotated[
        str,
        typer.Option(
            "--target",
            "-t",
            help="spec | response-template | structural-tag | tests | lark | vllm-plugin | sglang-plugin",
        ),
    ] = "spec",
    spec: Annotated[
        Path | None, typer.Option("--spec", help="Export this spec (e.g. an exported one).")
    ] = None,
    tools: Annotated[
        Path | None,
        typer.Option("--tools", help="Tools JSON (structural-tag; lark: else the round-trip tools)."),
    ] = None,
    sessions: Annotated[
        list[Path] | None, typer.Option("--session", help="Recorded session(s) to add to a tests export.")
    ] = None,
    tokenizer: Annotated[
        Path | None,
        typer.Option("--tokenizer", help="tokenizer.json or folder to check with (lark: written for it)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Export even if not validated / not proven.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary of the export.")] = False,
    time_limit: TimeLimitOption = 2.0,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="response-template consumer: transformers | vllm | sglang | portable "
            "(default: the strictest that can express the format).",
        ),
    ] = None,
) -> None:
    """Export a validated spec to a target its consumer loads, proven by that consumer."""
    from workbench.export import TARGETS, check_destination, export, write_export
    from workbench.runtime.chat import load_tools
    from workbench.session import load_session

    if not output:
        fail("pass -o PATH (or -o - for stdout)")
    if target not in TARGETS:
        fail(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    if template is None and spec is None:
        fail("pass a TEMPLATE, or --spec FILE")
    with input_errors():
        check_destination(target, output)  # before the validation and the engine proof, not after
    with input_errors(), render_budget(time_limit, "the export"):  # analysis and validation together
        source, loaded_spec = load_inputs(template, spec)
        tool_list = load_tools(load_json_file(tools, "tools")) if tools is not None else None
        recorded = [(path.stem, load_session(path)) for path in sessions or ()]
        result = export(
            target,
            template=source,
            spec=loaded_spec,
            tools=tool_list,
            sessions=recorded,
            force=force,
            tokenizer=tokenizer,
            time_limit=time_limit,
            profile=profile,
        )
        written = write_export(result, output)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if as_json and str(written) == "-":  # stdout holds the export itself
        print(strict_json({"path": "-", **result.to_dict()}, indent=None), file=sys.stderr)
    elif as_json:
        print_json({"path": str(written), **result.to_dict()})
    elif str(written) != "-":
        proof = f"; {result.proof.summary()}" if result.proof is not None else ""
        print(f"wrote {written} ({target}; {result.report.summary()}{proof})")
