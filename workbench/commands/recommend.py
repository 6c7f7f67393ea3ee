"""``workbench recommend TEMPLATE [--json]``: which built-in ``--tool-call-parser`` / ``--reasoning-parser``
of vLLM and SGLang reads this template's output.

The template's round-trip cases (``workbench validate``'s) go through every built-in parser of the installed
engines, one-shot and streamed as the real tokenizer's token deltas, in the engines' venv
(:file:`workbench/engines/harness/recommend.py`, one subprocess per engine, one after the other), through the
entry points each engine's serving calls.  A parser passes when every case gives back the message the
template rendered.  The reasoning parser and the tool parser are judged apart, as serving chains them: the
tool parser reads what follows the reasoning.  A miss whose cause is known to be in the engine's code
(``workbench/engines/<name>/issues.py``) carries that cause, so the answer says which side is wrong.

Output contract: per engine the passing values and, for the closest misses, the first failing case; with
``--json`` an object ``{"template", "cases", "engines": {ENGINE: {"version", "tokenizer_notes", "reasoning",
"tools"}}}`` where each of ``reasoning``/``tools`` is ``{"needed", "pass": [...], "near": [{"name",
"passed", "first", "engine_issue"?: {"where", "why"}}]}``.
Exit codes: 0 answered (also when nothing passes: the answer says so); 1 bad input or no engines venv.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.commands._common import TimeLimitOption, fail, input_errors, print_json
from workbench.engines import RECOMMEND
from workbench.engines.harness.schema import Case, RecommendAnswer, RecommendJob, RecommendRequest
from workbench.engines.issues import engine_issue
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
    template: Annotated[str, typer.Argument(help="Template: .jinja, tokenizer_config.json, folder, alias.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
    tokenizer: Annotated[
        Path | None, typer.Option("--tokenizer", help="Tokenizer folder to stream with (default: by family).")
    ] = None,
    time_limit: TimeLimitOption = 2.0,
) -> None:
    """Which --tool-call-parser / --reasoning-parser of vLLM and SGLang pass this template's round trips."""
    from workbench.engines.venv import engines_missing_reason, engines_python

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
    special_tokens: tuple[str, ...] = ()

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
        fam = family(self.spec.tools.format)
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


def prepare(template: str, *, tokenizer: Path | None = None, time_limit: float = 2.0) -> Prepared:
    """Analyse and validate ``template``: its applicable round-trip cases and the tokenizer to stream with."""
    from workbench.engines.tokenizers import tokenizer_for
    from workbench.formats import analyze
    from workbench.proofs import ExportError
    from workbench.template.source import load_template
    from workbench.validate import UNSUPPORTED, validate

    source = load_template(template)
    spec = analyze(source, time_limit=time_limit).spec
    report = validate(source, spec, time_limit=time_limit)
    cases = tuple(c for c in report.cases if c.status != UNSUPPORTED and c.parsed is not None)
    if not cases:
        raise ExportError(f"{source.name}: no round-trip case to run ({report.summary()})")
    return Prepared(
        source.name,
        spec,
        cases,
        tokenizer_for(source.name, tokenizer, spec=spec),
        report.summary(),
        special_tokens(source.text, spec),
    )


def recommend(
    templates: list[str],
    python: Path,
    *,
    tokenizer: Path | None = None,
    time_limit: float = 2.0,
    only: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    engines: tuple[str, ...] = RECOMMEND,
) -> list[dict[str, Any]]:
    """Every engine's parsers on each template's round-trip cases, one harness run per engine for all the
    templates; one JSON answer per template (see the module doc).  ``only`` limits the parsers run to those
    names, for every template or per template (a mapping keyed by the ``templates`` entry): tests, since a
    full run of ~100 parsers takes many minutes on a loaded machine."""
    prepared = [prepare(t, tokenizer=tokenizer, time_limit=time_limit) for t in templates]
    jobs = [p.job() for p in prepared]
    if isinstance(only, Mapping):
        for template, job in zip(templates, jobs, strict=True):
            job.only = list(only.get(template, ()))
    answers = _run_engines(python, jobs, None if isinstance(only, Mapping) else only, engines)
    out = []
    for n, item in enumerate(prepared):
        needs_reasoning = any((c.parsed or {}).get("reasoning_content") for c in item.cases)
        per_engine: dict[str, Any] = {}
        for engine, got in answers.items():
            if "failed" in got:
                per_engine[engine] = {"version": "?", "error": got["failed"]}
                continue
            job = got["jobs"][n]
            per_engine[engine] = {
                "version": got.get("version", "?"),
                "tokenizer_notes": job.get("tokenizer_notes", []),
                "reasoning": _judge(job.get("reasoning", {}), item, "reasoning", needs_reasoning, engine),
                "tools": _judge(
                    job.get("tools", {}), item, "tools", item.spec.tools.format != "none", engine
                ),
            }
        out.append(
            {
                "template": item.name,
                "tokenizer": item.tokenizer.name,
                "cases": len(item.cases),
                "validated": item.summary,
                "engines": per_engine,
            }
        )
    return out


def _run_engines(
    python: Path,
    jobs: list[RecommendJob],
    only: Sequence[str] | None = None,
    engines: tuple[str, ...] = RECOMMEND,
) -> dict[str, dict[str, Any]]:
    """One harness subprocess per engine, one after the other: each imports GBs of engine code and the
    machines this runs on (CI: 2 cores) cannot hold two at once without swapping."""
    from workbench.engines.harness.launch import run_harness_module

    out: dict[str, dict[str, Any]] = {}
    for engine in engines:
        request = RecommendRequest(engine, jobs, list(only) if only is not None else None)
        try:
            out[engine] = run_harness_module(
                "recommend",
                request,
                RecommendAnswer,
                python=python,
                timeout=1800,
                what="harness",
                env={"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")},
            )
        except WorkbenchError as exc:
            out[engine] = {"failed": str(exc)}
    return out


def _judge(
    parsers: dict[str, Any], item: Prepared, kind: str, needed: bool, engine: str = ""
) -> dict[str, Any]:
    """Pass / near-miss lists for one kind of parser; a miss with a known engine-side reason
    (``engines/<name>/issues.py``) is always listed, with that reason."""
    verdicts = [_verdict(name, got, item, kind) for name, got in sorted(parsers.items())]
    passing = [v.name for v in verdicts if v.ok]
    misses = sorted((v for v in verdicts if not v.ok), key=lambda v: (-v.passed, v.name))
    near = misses[:NEAR_MISSES] + [
        v
        for v in misses[NEAR_MISSES:]
        if engine_issue(engine, v.name, item.spec.tools.format, v.first) is not None
    ]
    listed = []
    for v in near:
        entry: dict[str, Any] = {"name": v.name, "passed": v.passed, "total": v.total, "first": v.first}
        issue = engine_issue(engine, v.name, item.spec.tools.format, v.first)
        if issue is not None:
            entry["engine_issue"] = {"where": issue.where, "why": issue.why}
        listed.append(entry)
    return {
        "needed": needed,
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
            if not part["tried"]:
                lines.append(f"  {flags[kind]}: none run")
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
