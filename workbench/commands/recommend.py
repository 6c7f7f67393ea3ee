"""``workbench recommend TEMPLATE [--json]``: which built-in ``--tool-call-parser`` / ``--reasoning-parser``
of vLLM and SGLang reads this template's output.

The template's round-trip cases (``workbench validate``'s) go through every built-in parser of the installed
engines, one-shot and streamed as the real tokenizer's token deltas, in the engines' venv
(:file:`workbench/data/recommend_harness.py`, one subprocess per engine, run side by side).  A parser passes
when every case gives back the message the template rendered.  The reasoning parser and the tool parser are
judged apart, as serving chains them: the tool parser reads what follows the reasoning.

Output contract: per engine the passing values and, for the closest misses, the first failing case; with
``--json`` an object ``{"template", "cases", "engines": {ENGINE: {"version", "reasoning", "tools"}}}`` where
each of ``reasoning``/``tools`` is ``{"needed", "pass": [...], "near": [{"name", "passed", "first"}]}``.
Exit codes: 0 answered (also when nothing passes: the answer says so); 1 bad input or no engines venv.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.commands._common import TimeLimitOption, fail, input_errors, print_json
from workbench.spec import FormatSpec
from workbench.validate.report import CaseResult

HARNESS = Path(__file__).resolve().parents[1] / "data" / "recommend_harness.py"
ENGINES = ("vllm", "sglang")
NEAR_MISSES = 3


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend_command)


@dataclass(frozen=True)
class Verdict:
    """One parser on every case: how many passed, and the first failure."""

    name: str
    passed: int
    total: int
    first: str = ""
    caveat: str = ""  # a set-aside case it got wrong

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.passed == self.total and not self.first


def recommend_command(
    template: Annotated[str, typer.Argument(help="Template: .jinja, tokenizer_config.json, folder, alias.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
    tokenizer: Annotated[
        Path | None, typer.Option("--tokenizer", help="Tokenizer folder to stream with (default: by family).")
    ] = None,
    time_limit: TimeLimitOption = 2.0,
) -> None:
    """Which --tool-call-parser / --reasoning-parser of vLLM and SGLang pass this template's round trips."""
    from workbench.export.engines import engines_missing_reason, engines_python

    python = engines_python()
    if python is None:
        fail(f"workbench recommend needs the engines: {engines_missing_reason()}")
    with input_errors():
        answer = recommend([template], python, tokenizer=tokenizer, time_limit=time_limit)[0]
    if as_json:
        print_json(answer)
    else:
        print(render(answer))


@dataclass(frozen=True)
class Prepared:
    """One template's cases, ready for the harness."""

    name: str
    spec: FormatSpec
    cases: tuple[CaseResult, ...]
    tokenizer: Path
    summary: str

    def job(self) -> dict[str, Any]:
        from workbench.validate import ROUND_TRIP_TOOLS

        tools = [t.to_openai() for t in ROUND_TRIP_TOOLS]
        end = self.spec.reasoning.end if self.spec.reasoning.mode != "none" else ""
        cases = [
            {
                "id": c.id,
                "output": c.output,
                "prefix": c.generation_prefix,
                "tools": tools,
                # what serving hands the tool parser: the text after the reasoning
                "content_input": c.output.split(end, 1)[1] if end and end in c.output else c.output,
            }
            for c in self.cases
        ]
        return {"key": self.name, "tokenizer": str(self.tokenizer), "cases": cases}


def prepare(template: str, *, tokenizer: Path | None = None, time_limit: float = 2.0) -> Prepared:
    """Analyse and validate ``template``: its applicable round-trip cases and the tokenizer to stream with."""
    from workbench.analysis import analyze
    from workbench.export.common import ExportError
    from workbench.export.engines import tokenizer_for
    from workbench.template.source import load_template
    from workbench.validate import UNSUPPORTED, validate

    source = load_template(template)
    spec = analyze(source, time_limit=time_limit).spec
    report = validate(source, spec, time_limit=time_limit)
    cases = tuple(c for c in report.cases if c.status != UNSUPPORTED and c.parsed is not None)
    if not cases:
        raise ExportError(f"{source.name}: no round-trip case to run ({report.summary()})")
    return Prepared(source.name, spec, cases, tokenizer_for(source.name, tokenizer), report.summary())


def recommend(
    templates: list[str],
    python: Path,
    *,
    tokenizer: Path | None = None,
    time_limit: float = 2.0,
    only: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Every engine's parsers on each template's round-trip cases, one harness run per engine for all the
    templates; one JSON answer per template (see the module doc).  ``only`` limits the parsers run to those
    names (tests: a full run of ~100 parsers takes minutes on a loaded machine)."""
    prepared = [prepare(t, tokenizer=tokenizer, time_limit=time_limit) for t in templates]
    answers = _run_engines(python, [p.job() for p in prepared], only)
    out = []
    for n, item in enumerate(prepared):
        needs_reasoning = any((c.parsed or {}).get("reasoning_content") for c in item.cases)
        engines: dict[str, Any] = {}
        for engine, got in answers.items():
            if "failed" in got:
                engines[engine] = {"version": "?", "error": got["failed"]}
                continue
            job = got["jobs"][n]
            engines[engine] = {
                "version": got.get("version", "?"),
                "reasoning": _judge(job.get("reasoning", {}), item, "reasoning", needs_reasoning),
                "tools": _judge(job.get("tools", {}), item, "tools", item.spec.tools.format != "none"),
            }
        out.append(
            {
                "template": item.name,
                "tokenizer": item.tokenizer.name,
                "cases": len(item.cases),
                "validated": item.summary,
                "engines": engines,
            }
        )
    return out


def _run_engines(
    python: Path, jobs: list[dict[str, Any]], only: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """One harness subprocess per engine, started together (each spends most of its time importing)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("OMP_NUM_THREADS", "1")
    procs = {}
    for engine in ENGINES:
        request = json.dumps({"engine": engine, "jobs": jobs, "only": only})
        proc = subprocess.Popen(
            [str(python), str(HARNESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        procs[engine] = (proc, request)
    out: dict[str, dict[str, Any]] = {}
    for engine, (proc, request) in procs.items():
        try:
            stdout, stderr = proc.communicate(request, timeout=1800)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            out[engine] = {"failed": "the harness took more than 1800 s"}
            continue
        if proc.returncode != 0:
            tail = (stderr.strip().splitlines() or ["no output"])[-1]
            out[engine] = {"failed": f"the harness failed: {tail}"}
            continue
        out[engine] = json.loads(stdout)
    return out


def _judge(parsers: dict[str, Any], item: Prepared, kind: str, needed: bool) -> dict[str, Any]:
    """Pass / near-miss lists for one kind of parser."""
    verdicts = [_verdict(name, got, item, kind) for name, got in sorted(parsers.items())]
    passing = [v.name for v in verdicts if v.ok]
    near = sorted((v for v in verdicts if not v.ok), key=lambda v: (-v.passed, v.name))[:NEAR_MISSES]
    return {
        "needed": needed,
        "pass": passing,
        "caveats": {v.name: v.caveat for v in verdicts if v.ok and v.caveat},
        "near": [{"name": v.name, "passed": v.passed, "total": v.total, "first": v.first} for v in near],
        "tried": len(verdicts),
    }


def _verdict(name: str, got: dict[str, Any], item: Prepared, kind: str) -> Verdict:
    """One parser on every case.  A case whose arguments hold the format's own markers is set aside (a
    caveat, not a failure): parsers that find region ends by text search cannot read it, and no built-in
    one does better."""
    from workbench.export.response_template import set_aside_reason
    from workbench.validate import compare_messages

    cases = item.cases
    if "error" in got:
        return Verdict(name, 0, len(cases), f"cannot start: {got['error']}")
    by_id = {c["id"]: c for c in got.get("cases", [])}
    passed, first, caveat = 0, "", ""
    for case in cases:
        problems = []
        for mode in ("one_shot", "streamed"):
            message = (by_id.get(case.id) or {}).get(mode) or {"error": "no result"}
            if "error" in message:
                problems.append(f"{mode}: raised {message['error']}")
                continue
            want = dict(case.parsed or {})
            if kind == "reasoning":  # only the reasoning is this parser's job
                diff = compare_messages(
                    {"reasoning_content": want.get("reasoning_content")},
                    {"reasoning_content": message.get("reasoning_content")},
                    compare_ids=False,
                )
            else:
                want["reasoning_content"] = ""
                diff = compare_messages(want, {**message, "reasoning_content": ""}, compare_ids=False)
            if diff:
                problems.append(f"{mode}: {diff[0]}")
        if problems and set_aside_reason(item.spec, case):
            caveat = caveat or f"{case.id}: {problems[0]}"
            passed += 1
        elif problems:
            first = first or f"{case.id}: {problems[0]}"
        else:
            passed += 1
    return Verdict(name, passed, len(cases), first, caveat)


def render(answer: dict[str, Any]) -> str:
    """The answer for people: per engine the flags to pass, or why none fits."""
    lines = [f"{answer['template']}: {answer['cases']} round-trip cases (tokenizer {answer['tokenizer']})"]
    flags = {"tools": "--tool-call-parser", "reasoning": "--reasoning-parser"}
    for engine, got in answer["engines"].items():
        lines.append(f"{engine} {got['version']}:")
        if "error" in got:
            lines.append(f"  could not run: {got['error']}")
            continue
        for kind in ("reasoning", "tools"):
            part = got[kind]
            if not part["needed"]:
                what = "reasoning" if kind == "reasoning" else "tool calls"
                lines.append(f"  {flags[kind]}: not needed (no {what})")
                continue
            if part["pass"]:
                lines.append(f"  {flags[kind]}: {' | '.join(part['pass'])}")
                for name, caveat in part["caveats"].items():
                    lines.append(f"    {name} misreads an argument holding the format's marker ({caveat})")
            else:
                lines.append(
                    f"  {flags[kind]}: none of the {part['tried']} built-in parsers passes; "
                    "export a plug-in: workbench export TEMPLATE --target vllm-plugin -o DIR"
                )
            for near in part["near"] if not part["pass"] else part["near"][:1]:
                score = f"{near['passed']}/{near['total']}"
                lines.append(f"    near miss {near['name']} ({score}): {near['first']}")
    return "\n".join(lines)
