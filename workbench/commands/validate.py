"""``workbench validate (TEMPLATE | --spec S) [--kw K=V ...] [--json]``: round-trip validation of a spec.

``--kw`` renders every case with template switches (``reasoning_effort=none``); it needs the template.

Output contract:
- default: one line per case (status, id, reason), one line per continuation case (status, id, the stage
  the prompt leaves the output in), one line per feature, one ``untested`` line per feature the template
  renders that no case tested (``untested    tool calls  the template raises on ...``), an ``unstable``
  line when the template renders differently each time, and the verdict (``ValidationReport.summary``);
- ``--json``: the validation report (``validated``, ``summary``, ``verdict`` (``status``, ``validated``,
  ``headline``, ``passed``, ``applicable``, ``failed``, ``untested``, ``unstable``), ``untested``,
  ``unstable``, ``source``, ``template_name``, ``template_sha256``, ``notes``, ``features``, ``cases``,
  ``continuation``), as stored in an exported spec's ``provenance.validation``.

Every case is parsed one-shot, one character at a time and at three seeded random chunkings, and rendered
twice.  A report is validated only when every case that ran passed and no feature the template renders
went untested (e.g. every tool-call case skipped because the template raises on the tool definitions).

Continuation (feature ``continuation``): a partial answer, partial reasoning, and a partial answer after
reasoning are rendered with ``continue_final_message``; what the template renders after that prompt is the
output, parsed from the stage the prompt leaves it in (``FormatSpec.output_start_stage``); the partial text
plus the parse must be the finished message.  Unsupported when the template cannot render the case.

``--spec`` takes an exported spec or ``workbench analyze --json`` output.  With ``--spec`` alone there is
no template to render: the round-trip outputs recorded in the spec's own report are parsed again (and the
output says so).  With both a template and ``--spec``, the given spec is
validated against that template.

Exit codes: 0 validated; 1 bad input, or the spec is not validated (the report is still printed); 2 usage.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from workbench.commands._common import (
    TemplateArgument,
    TimeLimitOption,
    console,
    fail,
    input_errors,
    print_json,
    render_budget,
    warn_unread_kwargs,
)
from workbench.services import load_inputs

if TYPE_CHECKING:
    from workbench.validate import ValidationReport

STATUS_STYLE = {
    "pass": "green",
    "fail": "bold red",
    "error": "bold red",
    "unsupported": "yellow",
    "untested": "bold yellow",
    "unstable": "bold red",
    "limited": "bold yellow",
}
#: The verdict line's colour: green only for a plain green verdict; amber when validated with limits.
VERDICT_STYLE = {"validated": "green", "limited": "bold yellow"}


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)


def validate_command(
    template: TemplateArgument = None,
    spec: Annotated[
        Path | None, typer.Option("--spec", help="An exported (or hand-written) spec JSON.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the validation report as JSON.")] = False,
    time_limit: TimeLimitOption = 2.0,
    kw: Annotated[
        list[str] | None,
        typer.Option(
            "--kw", help="Template switch key=value every case is rendered with (e.g. reasoning_effort=none)."
        ),
    ] = None,
) -> None:
    """Render known messages through the template, parse them back, and compare."""
    from workbench.commands.render import parse_kw
    from workbench.export import resolve_inputs

    if template is None and spec is None:
        fail("pass a TEMPLATE, or --spec FILE")
    template_kwargs = parse_kw(kw)
    with input_errors(), render_budget(time_limit, "validation"):  # the analysis, if any, and the cases
        source, loaded_spec = load_inputs(template, spec)
        if template_kwargs and source is None:
            fail("--kw needs a TEMPLATE to render the cases with")
        warn_unread_kwargs(source, template_kwargs)
        _, report = resolve_inputs(
            source, loaded_spec, time_limit=time_limit, template_kwargs=template_kwargs
        )
    if as_json:
        print_json(report.to_dict())
    else:
        _print_report(report)
    if not report.validated:
        fail(report.summary())


def _print_report(report: ValidationReport) -> None:
    name = report.template_name or "(unnamed)"
    console.print(f"[bold]{escape(name)}[/] [dim]{report.template_sha256[:16]}[/]")
    for note in report.notes:
        console.print(f"[dim]note: {escape(note)}[/]")
    for case in report.cases:
        style = STATUS_STYLE.get(case.status, "")
        reason = f"  [dim]{escape(case.reason)}[/]" if case.reason else ""
        console.print(f"  [{style}]{case.status:<11}[/] {escape(case.id)}{reason}")
    if report.continuation:
        console.print("[bold]continuation[/] [dim](a partial message continued, read from its stage)[/]")
        for case in report.continuation:
            style = STATUS_STYLE.get(case.status, "")
            stage = f" [dim]from {escape(case.start_stage)}[/]" if case.start_stage else ""
            reason = f"  [dim]{escape(case.reason)}[/]" if case.reason else ""
            console.print(f"  [{style}]{case.status:<11}[/] {escape(case.id)}{stage}{reason}")
    console.print("[bold]features[/]")
    for feature, info in report.features().items():
        style = STATUS_STYLE.get(info["status"], "")
        reason = f"  [dim]{escape(info['reason'])}[/]" if info["reason"] else ""
        console.print(f"  [{style}]{info['status']:<11}[/] {feature}{reason}")
    for untested in report.untested:
        style = STATUS_STYLE["untested"]
        console.print(f"  [{style}]{'untested':<11}[/] {untested.label}  [dim]{escape(untested.reason)}[/]")
    if report.unstable:
        style = STATUS_STYLE["unstable"]
        console.print(
            f"  [{style}]{'unstable':<11}[/] the template renders differently each time  "
            f"[dim]{escape(report.unstable)}[/]"
        )
    verdict = report.verdict
    for limit in verdict.limits:
        style = STATUS_STYLE["limited"]
        console.print(f"  [{style}]{'limited':<11}[/] the template raises on {escape(limit)}")
    style = VERDICT_STYLE.get(verdict.status, "bold red")
    mark = "! " if verdict.status == "limited" else ""  # the state without colour
    console.print(f"[{style}]{mark}{escape(report.summary())}[/]")
