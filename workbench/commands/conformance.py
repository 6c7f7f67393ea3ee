"""``workbench conformance DIR... [--templates DIR] [--json]``: run llama.cpp's and the peers' parse vectors.

Every case is parsed under the parsing profile of the engine its upstream test targeted; ``--profile
ENGINE`` parses every case under one profile instead (``--profile workbench``: the workbench's own
defaults alone, which is how far a single policy set gets on vectors written for different engines).

Output contract:
- default: a table of pass rates per template / family, the failing cases with their first difference,
  and the pass rate per suite;
- ``--json``: JSON Lines on stdout, exactly one object per case (``id``, ``suite``, ``group``, ``name``,
  ``target``, ``profile``, ``passed``, ``first_difference``, ``failed_runs``, and ``observed`` for a
  failing case; ``--verbose`` adds every run).

Exit codes: 0 the cases ran (failures included); 1 bad input (no case files, unreadable folder); 2 usage
(an unknown ``--profile``);
3 a suite's pass rate is below ``--fail-under``.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from workbench.commands._common import console, fail, strict_json
from workbench.engines import parse_profiles

EXIT_BELOW_THRESHOLD = 3
#: The ``--profile`` choices: the parser's engine profiles, so the two lists cannot drift apart.
Profile = Enum("Profile", {name.replace(".", "_"): name for name in parse_profiles()}, type=str)  # type: ignore[misc]


def register(app: typer.Typer) -> None:
    app.command("conformance")(conformance)


def conformance(
    dirs: Annotated[
        list[Path], typer.Argument(metavar="DIR", help="Case folders or files (llama.cpp or peer shape).")
    ],
    templates: Annotated[
        Path | None, typer.Option("--templates", help="Templates folder for llama.cpp cases and families.")
    ] = None,
    specs: Annotated[
        Path | None, typer.Option("--specs", help="Folder of hand-written FormatSpec JSON files.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per case (JSON Lines).")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every run's result.")] = False,
    match: Annotated[
        str | None,
        typer.Option("--match", "-k", help="Only cases whose id (suite/group/name) contains this."),
    ] = None,
    fail_under: Annotated[
        float | None, typer.Option("--fail-under", help="Exit 3 when a suite's pass rate (%) is below this.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random chunkings.")] = 20260315,
    stream: Annotated[
        bool, typer.Option("--stream/--no-stream", help="Also run every case streamed.")
    ] = True,
    profile: Annotated[
        Profile | None,
        typer.Option(
            "--profile",
            help="Parse every case under this engine's profile (workbench, llama.cpp, sglang, vllm) "
            "instead of the profile of the engine its test targeted.",
        ),
    ] = None,
) -> None:
    """Run conformance case files one-shot and streamed; print pass rates per template / family."""
    from workbench.conformance import CaseFileError, Runner, SpecProvider, load_case_paths

    if templates is not None and not templates.is_dir():
        fail(f"templates folder not found: {templates}")
    if specs is not None and not specs.is_dir():
        fail(f"specs folder not found: {specs}")
    try:
        cases = load_case_paths(dirs)
    except CaseFileError as exc:
        fail(str(exc))
    if match:
        cases = [c for c in cases if match in c.case_id]
    if not cases:
        fail("no conformance cases found in " + ", ".join(str(d) for d in dirs))

    profile_name = profile.value if profile is not None else None
    runner = Runner(SpecProvider(templates, specs), seed=seed, streamed=stream, profile=profile_name)
    if as_json:
        results = []
        for case in cases:
            result = runner.run_case(case)
            results.append(result)
            sys.stdout.write(strict_json(result.to_dict(verbose=verbose), indent=None) + "\n")
            sys.stdout.flush()
    else:
        err = Console(stderr=True)
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err, transient=True
        ) as progress:
            task = progress.add_task("conformance", total=len(cases))
            results = runner.run_all(cases, progress=lambda _r: progress.advance(task))
        _print_report(results, verbose=verbose)
        if profile_name is not None:
            console.print(f"every case parsed under the {profile_name!r} profile")

    if fail_under is not None:
        from workbench.conformance import suite_tallies

        low = [t for t in suite_tallies(results) if t.rate < fail_under]
        if low:
            names = ", ".join(f"{t.suite} {t.rate:.1f}%" for t in low)
            print(f"pass rate below {fail_under:g}%: {names}", file=sys.stderr)
            raise typer.Exit(code=EXIT_BELOW_THRESHOLD)


def _print_report(results: list, *, verbose: bool) -> None:
    from workbench.conformance import failures, group_tallies, suite_tallies

    table = Table(title="Conformance: pass rate per template / family", show_lines=False)
    table.add_column("suite")
    table.add_column("template / family", overflow="fold")
    table.add_column("runs against", overflow="fold")
    table.add_column("passed", justify="right", no_wrap=True)
    table.add_column("rate", justify="right", no_wrap=True)
    for t in group_tallies(results):
        style = "green" if t.passed == t.total else ("yellow" if t.rate >= 50 else "red")
        # A llama.cpp group *is* its template: repeating it would only crowd the table.
        target = "" if t.target == f"{t.group}.jinja" else t.target
        table.add_row(t.suite, t.group, target, f"{t.passed}/{t.total}", f"[{style}]{t.rate:.0f}%[/]")
    console.print(table)

    failed = failures(results)
    if failed:
        console.print(f"\n[bold]Failing cases ({len(failed)})[/]")
        for r in failed:
            console.print(f"[red]✗[/] {escape(r.case.case_id)}: {escape(r.first_difference or '')}")
            if verbose:
                for run in r.runs:
                    if not run.ok:
                        console.print(f"    [{run.run}] {run.first_problem}", markup=False)
    console.print()
    for t in suite_tallies(results):
        console.print(f"[bold]{t.suite}[/]: {t.passed}/{t.total} passed ({t.rate:.1f}%)")
