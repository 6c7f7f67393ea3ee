"""``workbench recommend (TEMPLATE | --spec S) [--json]``: which built-in ``--tool-call-parser`` /
``--reasoning-parser`` of vLLM and SGLang reads this template's output.

The template's round-trip cases (``workbench validate``'s) go through every built-in parser of the installed
engines, one-shot and streamed as the real tokenizer's token deltas, in the engines' venv
(:file:`workbench/engines/harness/recommend.py`, one subprocess per engine, one after the other), through the
entry points each engine's serving calls.  A parser passes when every case gives back the message the
template rendered (the case's input message, never the workbench's own parse of it).  The reasoning parser
and the tool parser are judged apart, as serving chains them: the tool parser reads what follows the
reasoning.  A miss whose cause is known to be in the engine's code (``workbench/engines/<name>/issues.py``)
carries that cause, so the answer says which side is wrong.

It claims only what it tested:

- a parser is said to pass only for a kind of case it was run on: without a case holding tool calls, no tool
  parser passes ("not tested", with why: the template renders none, or every such case was skipped); the
  same for reasoning parsers and reasoning cases.  ``checked_on`` lists the case kinds that ran;
- whether a template needs a reasoning / tool parser is read off the spec (its reasoning mode, its tool
  format), not off which cases happened to run;
- when the workbench's own spec failed validation (a case failed, or the template renders differently each
  time), its cases are no ground truth: the answer says so and grades nothing.

``--spec`` takes an exported spec or ``analyze --json`` output: with a TEMPLATE it is validated against the
template's renders, alone its recorded round-trip cases are used.

Output contract: per engine the passing values and, for the closest misses, the first failing case; with
``--json`` an object ``{"template", "cases", "graded", "not_graded"?, "validated", "verdict", "engines":
{ENGINE: {"version", "tokenizer_notes", "reasoning", "tools"}}}`` where each of ``reasoning``/``tools`` is
``{"needed", "tested", "not_tested"?, "checked_on": [case kinds], "pass": [...], "near": [{"name", "passed",
"first", "engine_issue"?: {"where", "why"}}]}``.
Exit codes: 0 answered (also when nothing passes, or nothing was graded: the answer says so); 1 bad input or
no engines venv.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.commands._common import TimeLimitOption, fail, input_errors, print_json
from workbench.engines import RECOMMEND
from workbench.engines.harness.schema import Case, RecommendAnswer, RecommendJob, RecommendRequest
from workbench.engines.issues import engine_issue
from workbench.formats import protocol_family
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.formats import family
from workbench.runtime.spec import FormatSpec
from workbench.validate.report import CaseResult

NEAR_MISSES = 3
# Spellings of special tokens: ``<|name|>`` (Llama 3, Kimi, Harmony), ``<｜name｜>`` (DeepSeek), ``[NAME]``
# (Mistral), and, among the format's markers, a made-up tag (``<tool_call>``, ``<arg_key>``,
# ``<minimax:tool_call>``): plain-word tags (``</parameter>``, ``</function>``) are ordinary text in most
# vocabularies and stay so.
SPECIAL_IN_TEXT = re.compile(r"<\|[A-Za-z0-9_.]{1,48}\|>|<｜[^｜<>\s]{1,48}｜>")
SPECIAL_MARKER = re.compile(
    r"<\|[A-Za-z0-9_.]{1,48}\|>|<｜[^｜<>\s]{1,48}｜>|\[[A-Z_]{2,24}\]|</?[a-z]+[_:][a-z_:]+>"
)


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
    template: Annotated[
        str | None, typer.Argument(help="Template: .jinja, tokenizer_config.json, folder, alias.")
    ] = None,
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec", help="A spec (export or analyze --json) to grade with instead of the analysis."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
    tokenizer: Annotated[
        Path | None, typer.Option("--tokenizer", help="Tokenizer folder to stream with (default: by family).")
    ] = None,
    time_limit: TimeLimitOption = 2.0,
) -> None:
    """Which --tool-call-parser / --reasoning-parser of vLLM and SGLang pass this template's round trips."""
    from workbench.engines.venv import engines_missing_reason, engines_python

    if template is None and spec is None:
        fail("pass a TEMPLATE, or --spec FILE")
    python = engines_python()
    if python is None:
        fail(f"workbench recommend needs the engines: {engines_missing_reason()}")
    with input_errors():
        answer = recommend(
            [template or ""], python, tokenizer=tokenizer, time_limit=time_limit, spec=spec, progress=_say
        )[0]
    if as_json:
        print_json(answer)
    else:
        print(render(answer))


@dataclass(frozen=True)
class Prepared:
    """One template's cases, ready for the harness.  ``not_graded`` says why nothing is graded (the spec
    failed validation: its cases are no ground truth); ``untested`` the features no case could show."""

    name: str
    spec: FormatSpec
    cases: tuple[CaseResult, ...]
    tokenizer: Path
    summary: str
    special_tokens: tuple[str, ...] = ()
    not_graded: str = ""
    untested: dict[str, str] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)

    def job(self) -> RecommendJob:
        from workbench.validate import ROUND_TRIP_TOOLS

        tools = [t.to_openai() for t in ROUND_TRIP_TOOLS]
        end = self.spec.reasoning.end if self.spec.reasoning.mode != "none" else ""
        cases = [
            Case(
                c.id,
                c.output,
                c.generation_prefix,
                tools,
                # what serving hands the tool parser: the text after the reasoning
                content_input=c.output.split(end, 1)[1] if end and end in c.output else c.output,
            )
            for c in self.cases
        ]
        fam = protocol_family(self.spec) or family(self.spec.tools.format)
        return RecommendJob(
            self.name,
            str(self.tokenizer),
            cases,
            list(self.special_tokens),
            # vLLM serves a gpt_oss model through HarmonyParser whatever parser is named: the engines have a
            # serving path of their own for the formats whose parser reads the whole turn
            harmony=fam is not None and fam.reads_whole_turn,
        )


def special_tokens(template_text: str, spec: FormatSpec) -> tuple[str, ...]:
    """The special tokens the template writes: in the model's own tokenizer each is one token, and parsers
    key on it arriving whole.  The harness adds those a stand-in tokenizer lacks (Kimi-K2 streamed with
    Qwen3's; the shared Llama 3.1 folder names id 128010 ``<|reserved_special_token_5|>`` as Llama 3.0 did,
    not ``<|python_tag|>``)."""
    # not in comments: gpt-oss's mentions a <|final|> that its tokenizer does not have
    written = re.sub(r"\{#.*?#\}", "", template_text, flags=re.DOTALL)
    found = SPECIAL_IN_TEXT.findall(written)
    found += [m for m in spec.all_markers() if SPECIAL_MARKER.fullmatch(m.strip())]
    return tuple(dict.fromkeys(t.strip() for t in found))


def prepare(
    template: str, *, tokenizer: Path | None = None, time_limit: float = 2.0, spec: Path | None = None
) -> Prepared:
    """Validate the spec (analysed from ``template``, or the given one) against the template, or re-check
    the spec's recorded cases: the cases that passed, and the tokenizer to stream with.  A spec that failed
    validation is prepared with no case and ``not_graded`` saying why."""
    from workbench.engines.tokenizers import tokenizer_for
    from workbench.export import resolve_inputs
    from workbench.proofs import ExportError
    from workbench.services import load_inputs
    from workbench.template.budget import RenderBudget
    from workbench.validate import PASS

    source, given = load_inputs(template or None, spec)
    what = source.name if source is not None else str(spec)
    with RenderBudget(time_limit, what=f"analysing {what}"):  # analysis and validation together
        resolved, report = resolve_inputs(source, given, time_limit=time_limit)
    name = (
        source.name
        if source is not None
        else resolved.provenance.template_name or (spec.stem if spec else "")
    )
    verdict = report.verdict
    untested = {u.feature: u.line() for u in report.untested}
    base = Prepared(
        name,
        resolved,
        (),
        Path(),
        report.summary(),
        untested=untested,
        verdict=verdict.to_dict(),
    )
    if verdict.status in ("failed", "unstable", "nothing_tested"):
        why = (
            f"the workbench's spec is not validated ({verdict.headline}): its round-trip cases are no ground "
            "truth, so no engine parser is graded against them; fix the spec first (`workbench validate`)"
        )
        return replace(base, not_graded=why)
    cases = tuple(c for c in report.cases if c.status == PASS)
    if not cases:
        raise ExportError(f"{name}: no round-trip case to run ({report.summary()})")
    return replace(
        base,
        cases=cases,
        tokenizer=tokenizer_for(name, tokenizer, spec=resolved),
        special_tokens=special_tokens(source.text if source is not None else "", resolved),
    )


def _say(line: str) -> None:
    """Progress on stderr (stdout holds the answer): a run takes minutes and must not look hung."""
    print(f"recommend: {line}", file=sys.stderr, flush=True)


def recommend(
    templates: list[str],
    python: Path,
    *,
    tokenizer: Path | None = None,
    time_limit: float = 2.0,
    only: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    engines: tuple[str, ...] = RECOMMEND,
    spec: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Every engine's parsers on each template's round-trip cases, one harness run per engine for all the
    templates; one JSON answer per template (see the module doc).  ``only`` limits the parsers run to those
    names, for every template or per template (a mapping keyed by the ``templates`` entry): tests, since a
    full run of ~100 parsers takes many minutes on a loaded machine.  ``spec``: grade with this spec instead
    of the analysis (one template, or none: its recorded cases).  ``progress`` gets a line at each stage and
    every :data:`HEARTBEAT` seconds while an engine runs; each engine's run is bounded by
    :data:`HARNESS_TIMEOUT` seconds (past it, that engine's answer says so)."""
    say = progress or (lambda _line: None)
    prepared = []
    for t in templates:
        say(f"analysing and validating {t or spec}")
        prepared.append(prepare(t, tokenizer=tokenizer, time_limit=time_limit, spec=spec))
    graded = [(t, p) for t, p in zip(templates, prepared, strict=True) if not p.not_graded]
    jobs = [p.job() for _, p in graded]
    if isinstance(only, Mapping):
        for (template, _), job in zip(graded, jobs, strict=True):
            job.only = list(only.get(template, ()))
    answers = (
        _run_engines(python, jobs, None if isinstance(only, Mapping) else only, engines, say) if jobs else {}
    )
    out = []
    n = -1
    for item in prepared:
        answer: dict[str, Any] = {
            "template": item.name,
            "tokenizer": item.tokenizer.name,
            "cases": len(item.cases),
            "graded": not item.not_graded,
            "validated": item.summary,
            "verdict": item.verdict,
            "engines": {},
        }
        if item.not_graded:
            answer["not_graded"] = item.not_graded
            out.append(answer)
            continue
        n += 1
        for engine, got in answers.items():
            if "failed" in got:
                answer["engines"][engine] = {"version": "?", "error": got["failed"]}
                continue
            job = got["jobs"][n]
            answer["engines"][engine] = {
                "version": got.get("version", "?"),
                "tokenizer_notes": job.get("tokenizer_notes", []),
                "reasoning": _judge(
                    job.get("reasoning", {}), item, "reasoning", item.spec.reasoning.mode != "none", engine
                ),
                "tools": _judge(
                    job.get("tools", {}), item, "tools", item.spec.tools.format != "none", engine
                ),
            }
        out.append(answer)
    return out


#: Longest one engine's harness may run (a full run of ~100 parsers: minutes on a loaded machine).
HARNESS_TIMEOUT = 1800.0
#: Seconds between "still running" lines while an engine's harness runs.
HEARTBEAT = 30.0


def _run_engines(
    python: Path,
    jobs: list[RecommendJob],
    only: Sequence[str] | None = None,
    engines: tuple[str, ...] = RECOMMEND,
    say: Callable[[str], None] = lambda _line: None,
) -> dict[str, dict[str, Any]]:
    """One harness subprocess per engine, one after the other: each imports GBs of engine code and the
    machines this runs on (CI: 2 cores) cannot hold two at once without swapping."""
    from workbench.engines.harness.launch import harness_env, harness_invocation, read_answer
    from workbench.engines.harness.schema import to_json

    env = harness_env({"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")})
    out: dict[str, dict[str, Any]] = {}
    cases = sum(len(job.cases) for job in jobs)
    for engine in engines:
        request = RecommendRequest(engine, jobs, list(only) if only is not None else None)
        say(f"running {engine}'s built-in parsers on {cases} cases (importing {engine} alone takes ~15 s)")
        started = time.monotonic()
        try:
            with harness_invocation("recommend", python) as (command, cwd):
                code, stdout, stderr = _harness(
                    command, json.dumps(to_json(request)), env, engine, say, cwd=cwd
                )
        except subprocess.TimeoutExpired:
            out[engine] = {"failed": f"the harness took more than {HARNESS_TIMEOUT:g} s"}
            say(f"{engine}: stopped after {HARNESS_TIMEOUT:g} s")
            continue
        say(f"{engine}: done in {time.monotonic() - started:.0f} s")
        if code != 0:
            tail = (stderr.strip().splitlines() or ["no output"])[-1]
            out[engine] = {"failed": f"the harness failed: {tail}"}
            continue
        try:
            out[engine] = read_answer(stdout, RecommendAnswer, "harness")
        except WorkbenchError as exc:
            out[engine] = {"failed": str(exc)}
    return out


#: What each kind of parser is for: the cases that test it (a content-only case says nothing about a tool
#: parser, a case without reasoning nothing about a reasoning parser).
_RELEVANT = {"tools": "tool_calls", "reasoning": "reasoning_content"}
_WORDS = {"tools": "tool calls", "reasoning": "reasoning"}


def checked_on(cases: Sequence[CaseResult]) -> list[str]:
    """The kinds of case (their features) a parser was run on."""
    return sorted({f for c in cases for f in c.features})


def _harness(
    command: list[str],
    request: str,
    env: dict[str, str],
    engine: str,
    say: Callable[[str], None],
    cwd: str | None = None,
) -> tuple[int, str, str]:
    """Run one harness to its end or :data:`HARNESS_TIMEOUT` (then kill it and raise TimeoutExpired),
    saying every :data:`HEARTBEAT` seconds that it still runs."""
    started = time.monotonic()
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    ) as proc:
        pending: str | None = request
        while True:
            left = HARNESS_TIMEOUT - (time.monotonic() - started)
            try:
                stdout, stderr = proc.communicate(pending, timeout=max(min(HEARTBEAT, left), 0.01))
                return proc.returncode, stdout, stderr
            except subprocess.TimeoutExpired:
                pending = None  # the request was written in full before communicate waited
                if left <= HEARTBEAT:
                    proc.kill()
                    proc.communicate()
                    raise
                say(f"{engine}: still running ({time.monotonic() - started:.0f} s)")


def _judge(
    parsers: dict[str, Any], item: Prepared, kind: str, needed: bool, engine: str = ""
) -> dict[str, Any]:
    """Pass / near-miss lists for one kind of parser; a miss with a known engine-side reason
    (``engines/<name>/issues.py``) is always listed, with that reason.  Nothing passes without a case of
    the kind the parser is for: it is "not tested", with why."""
    relevant = [c for c in item.cases if (c.expected or c.parsed or {}).get(_RELEVANT[kind])]
    if not relevant:
        feature = "tool_calls" if kind == "tools" else "reasoning"
        why = item.untested.get(feature) or f"the template renders no {_WORDS[kind]} a case could check"
        return {
            "needed": needed,
            "tested": False,
            "not_tested": f"no case with {_WORDS[kind]} ran: {why}",
            "checked_on": checked_on(item.cases),
            "pass": [],
            "caveats": {},
            "near": [],
            "tried": len(parsers),
        }
    # the format the engines' parsers see: a learned layout in a family's own tokens is that family's
    speaks = protocol_family(item.spec)
    written_as = speaks.name if speaks is not None else item.spec.tools.format
    verdicts = [_verdict(name, got, item, kind) for name, got in sorted(parsers.items())]
    passing = [v.name for v in verdicts if v.ok]
    misses = sorted((v for v in verdicts if not v.ok), key=lambda v: (-v.passed, v.name))
    near = misses[:NEAR_MISSES] + [
        v for v in misses[NEAR_MISSES:] if engine_issue(engine, v.name, written_as, v.first) is not None
    ]
    listed = []
    for v in near:
        entry: dict[str, Any] = {"name": v.name, "passed": v.passed, "total": v.total, "first": v.first}
        issue = engine_issue(engine, v.name, written_as, v.first)
        if issue is not None:
            entry["engine_issue"] = {"where": issue.where, "why": issue.why}
        listed.append(entry)
    return {
        "needed": needed,
        "tested": True,
        "checked_on": checked_on(item.cases),
        "pass": passing,
        "caveats": {v.name: v.caveat for v in verdicts if v.ok and v.caveat},
        "near": listed,
        "tried": len(verdicts),
    }


def _verdict(name: str, got: dict[str, Any], item: Prepared, kind: str) -> Verdict:
    """One parser on every case.  A case whose arguments hold the format's own markers is set aside (a
    caveat, not a failure): parsers that find region ends by text search cannot read it, and no built-in
    one does better."""
    from workbench.engines.response_rules import set_aside_reason
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
            want = dict(case.expected or case.parsed or {})  # the rendered message, not our parse
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
    if not answer.get("graded", True):
        return f"{answer['template']}: nothing graded: {answer['not_graded']}"
    lines = [f"{answer['template']}: {answer['cases']} round-trip cases (tokenizer {answer['tokenizer']})"]
    verdict = answer.get("verdict") or {}
    if verdict and not verdict.get("validated", True):
        lines.append(f"  the workbench's spec: {verdict.get('headline', '')}")
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
            if not part.get("tested", True):
                lines.append(f"  {flags[kind]}: not tested ({part['not_tested']})")
                continue
            if not part["tried"]:
                lines.append(f"  {flags[kind]}: none run")
                continue
            if part["pass"]:
                kinds = ", ".join(part.get("checked_on", ()))
                lines.append(
                    f"  {flags[kind]}: {' | '.join(part['pass'])}"
                    + (f"  (checked on: {kinds})" if kinds else "")
                )
                for name, caveat in part["caveats"].items():
                    lines.append(f"    {name} misreads an argument holding the format's marker ({caveat})")
            else:
                lines.append(
                    f"  {flags[kind]}: none of the {part['tried']} built-in parsers passes; "
                    "export a plug-in: workbench export TEMPLATE --target vllm-plugin -o DIR"
                )
            shown = list(part["near"] if not part["pass"] else part["near"][:1])
            shown += [n for n in part["near"] if "engine_issue" in n and n not in shown]
            for near in shown:
                score = f"{near['passed']}/{near['total']}"
                lines.append(f"    near miss {near['name']} ({score}): {near['first']}")
                if "engine_issue" in near:
                    issue = near["engine_issue"]
                    lines.append(f"      engine side: {issue['why']} ({issue['where']})")
        for note in got.get("tokenizer_notes", []):
            lines.append(f"  tokenizer: {note}")
    return "\n".join(lines)
