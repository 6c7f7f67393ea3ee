"""One drawn format, measured: analysed, validated, and its known messages round-tripped.

For each seed (:func:`run_format`): the format is drawn and written as a template
(:mod:`workbench.testing.format_fuzz`), rendered with the project's renderer, analysed
(:func:`workbench.analysis.analyze`) and validated (:func:`workbench.validate.validate`, the project's own
round trip).  Independently of validation, each known message the format renders is rendered after a user
turn, cut out of the render at the generation prompt and at the turn's end (both known from the draw, not
from the analysis), and parsed back with the analysed spec one-shot, one character at a time and in random
chunks.  A case passes only when validation passed it and every parse equals the known message.

:func:`summarize` turns outcomes into pass rates overall and per axis value, with the first failing seeds
of each value and a one-line reason, so a failure can be reproduced with ``scripts/fuzz_formats.py --seed``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.testing.format_fuzz import FormatDraw, draw_format, write_template

RANDOM_CHUNKINGS = 3


class GeneratorError(Exception):
    """The drawn template does not render what the draw says (a bug of the generator, not a finding)."""


@dataclass(frozen=True)
class CaseOutcome:
    case: str
    passed: bool
    reason: str = ""


@dataclass
class FormatOutcome:
    """The measure of one seed: every case run, or the error that stopped the analysis."""

    seed: int
    axes: dict[str, str]
    cases: list[CaseOutcome] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.error and all(c.passed for c in self.cases)

    @property
    def first_failure(self) -> str:
        if self.error:
            return self.error
        failed = next((c for c in self.cases if not c.passed), None)
        return f"{failed.case}: {failed.reason}" if failed else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "axes": self.axes,
            "passed": self.passed,
            "error": self.error,
            "seconds": round(self.seconds, 3),
            "cases": [{"case": c.case, "passed": c.passed, "reason": c.reason} for c in self.cases],
        }


def case_ids() -> tuple[str, ...]:
    """The ids of the standard round trip's cases (:mod:`workbench.validate.cases`), in its order: the
    summary lists the cases this way.  Each runs only where the drawn format renders its features."""
    from workbench.runtime.spec import FormatSpec
    from workbench.validate.cases import build_cases

    return tuple(c.id for c in build_cases(FormatSpec()))


def known_cases(draw: FormatDraw) -> list[Any]:
    """The round-trip cases the drawn template renders (a neutral spec: no analysed marker in them)."""
    from workbench.runtime.spec import FormatSpec
    from workbench.validate.cases import build_cases

    return [c for c in build_cases(FormatSpec()) if set(c.features) <= draw.renders]


def run_format(seed: int, *, time_limit: float = 10.0) -> FormatOutcome:
    """Draw, write, analyse, validate and round-trip the format of ``seed``; never raises for a finding."""
    import time

    from workbench.formats import analyze
    from workbench.template.render import TemplateError
    from workbench.template.source import TemplateSource
    from workbench.validate import validate

    started = time.perf_counter()
    draw = draw_format(seed)
    source = TemplateSource(text=write_template(draw), name=f"fuzz-{seed}", origin="<format fuzz>")
    outcome = FormatOutcome(seed=seed, axes=dict(draw.axes))
    cases = known_cases(draw)
    try:
        analysis = analyze(source, time_limit=time_limit)
    except TemplateError as exc:
        outcome.error = f"analysis failed: {_line(str(exc))}"
        outcome.cases = [CaseOutcome(c.id, False, outcome.error) for c in cases]
        outcome.seconds = time.perf_counter() - started
        return outcome
    spec = analysis.spec
    try:
        report = validate(source, spec, time_limit=time_limit, continuation=False)
        validated = {c.id: c for c in report.cases}
    except Exception as exc:  # validation crashing is a finding about the project, recorded per case
        validated = {}
        outcome.error = f"validation raised {type(exc).__name__}: {_line(str(exc))}"
    for case in cases:
        own = round_trip(draw, source.text, spec, case)
        checked = validated.get(case.id)
        if checked is None:
            verdict = "validation: no result"
        elif checked.status != "pass" and not _ambiguous(checked.reason):
            verdict = f"validation {checked.status}: {_line(checked.reason)}"
        else:
            verdict = ""
        # One reason a case: the round trip's when it failed (validation then says the same in its words).
        reason = own if own and not verdict else f"{own} (validation agrees)" if own else verdict
        outcome.cases.append(CaseOutcome(case.id, not (own or verdict), reason))
    outcome.seconds = time.perf_counter() - started
    return outcome


def _ambiguous(reason: str) -> bool:
    """Validation leaves a case out when a raw value holds the format's own marker: no parser can tell."""
    return "cannot be told apart" in reason


def render_output(draw: FormatDraw, template: str, case: Any) -> tuple[str, str]:
    """(prompt, output) of ``case``: the generation prompt, and what the model writes after it up to its
    stop (the turn's end marker, which serving stacks do not pass to the parser).  Cut by what the draw
    knows, never by the analysis; raises :class:`GeneratorError` when the template disagrees with it."""
    from workbench.template.render import fixed_clock, render
    from workbench.validate.cases import USER_TURN

    tools = case.tools.to_openai()  # the tool definitions validation renders the case with
    # A format whose reasoning needs the thinking switch on is rendered with it on, as a caller asking
    # for reasoning does (the others do not read it).
    switch: dict[str, Any] = {"enable_thinking": True} if draw.switched else {}
    # A format that reads text only from typed parts gets it so, as servers pass it to such a template.
    if draw.parts_only:
        switch["content_as_parts"] = True
    with fixed_clock():  # both renders at one instant: a template may print the time
        prompt = render(template, [USER_TURN], tools=tools, add_generation_prompt=True, **switch)
        full = render(template, [USER_TURN, case.message(string_arguments=False)], tools=tools, **switch)
    if not full.startswith(prompt):
        raise GeneratorError(f"seed {draw.seed}: the history render does not start with the prompt")
    output = full[len(prompt) :]
    for end in sorted(draw.turn_ends, key=len, reverse=True):
        if output.endswith(end):
            return prompt, output[: len(output) - len(end)]
    raise GeneratorError(f"seed {draw.seed}: the history render does not end with the turn's end")


def round_trip(draw: FormatDraw, template: str, spec: Any, case: Any) -> str:
    """The first difference between ``case`` and its render parsed back with ``spec`` one-shot, one
    character at a time and in random chunks ("" when every parse gives the known message)."""
    from workbench.runtime.parsing import ParseOptions, StreamParser
    from workbench.validate.compare import compare_messages

    prompt, output = render_output(draw, template, case)
    try:
        options = ParseOptions(start_stage=spec.output_start_stage(generation_prompt=prompt))
    except Exception as exc:
        return f"start stage: {type(exc).__name__}: {_line(str(exc))}"
    rng = random.Random(f"{draw.seed}:{case.id}")
    chunkings: list[tuple[str, list[int]]] = [("one-shot", [])]
    chunkings.append(("one character at a time", list(range(1, len(output)))))
    for i in range(RANDOM_CHUNKINGS):
        k = rng.randint(1, max(1, len(output) // 4))
        cuts = sorted(rng.sample(range(1, len(output)), min(k, max(0, len(output) - 1))))
        chunkings.append((f"random chunks #{i + 1}", cuts))
    expected = case.expected()
    for label, cuts in chunkings:
        try:
            parser = StreamParser(spec, list(case.tools.tools), options=options)
            last = 0
            for cut in [*cuts, len(output)]:
                parser.feed(output[last:cut])
                last = cut
            got = parser.finish().message.to_contract()
        except Exception as exc:
            return f"{label}: the parser raised {type(exc).__name__}: {_line(str(exc))}"
        diff = compare_messages(expected, got, compare_ids=draw.ids != "none")
        if diff:
            return f"{label}: {_line(diff[0])}"
    return ""


def xfail_reason(outcome: FormatOutcome, limit: int = 160) -> str:
    """A failing seed's one-line reason for a strict xfail: its layout and spelling, its first failure."""
    head = f"{outcome.axes.get('layout', '?')}/{outcome.axes.get('spelling', '?')}: "
    return _line(head + outcome.first_failure, limit)


def _line(text: str, limit: int = 200) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


# ----------------------------------------------------------------------------------------------- summary
@dataclass
class Tally:
    cases_passed: int = 0
    cases_run: int = 0
    formats_passed: int = 0
    formats_run: int = 0
    failing: list[tuple[int, str]] = field(default_factory=list)

    def add(self, outcome: FormatOutcome, keep: int) -> None:
        self.cases_run += len(outcome.cases)
        self.cases_passed += sum(c.passed for c in outcome.cases)
        self.formats_run += 1
        self.formats_passed += outcome.passed
        if not outcome.passed and len(self.failing) < keep:
            self.failing.append((outcome.seed, outcome.first_failure))

    @property
    def rate(self) -> float:
        return self.cases_passed / self.cases_run if self.cases_run else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "failing": [{"seed": s, "reason": r} for s, r in self.failing]}


@dataclass
class Summary:
    overall: Tally
    by_axis: dict[str, dict[str, Tally]]
    by_case: dict[str, Tally]

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_dict(),
            "by_axis": {a: {v: t.to_dict() for v, t in vals.items()} for a, vals in self.by_axis.items()},
            "by_case": {c: t.to_dict() for c, t in self.by_case.items()},
        }


def summarize(outcomes: Iterable[FormatOutcome], *, keep: int = 3) -> Summary:
    """Pass rates overall, per axis value and per case, with the first ``keep`` failing seeds of each."""
    overall = Tally()
    by_axis: dict[str, dict[str, Tally]] = {}
    by_case: dict[str, Tally] = {}
    for outcome in sorted(outcomes, key=lambda o: o.seed):
        overall.add(outcome, keep)
        for axis, value in outcome.axes.items():
            by_axis.setdefault(axis, {}).setdefault(value, Tally()).add(outcome, keep)
        for case in outcome.cases:
            tally = by_case.setdefault(case.case, Tally())
            tally.cases_run += 1
            tally.cases_passed += case.passed
            if not case.passed and len(tally.failing) < keep:
                tally.failing.append((outcome.seed, case.reason))
    ordered = {a: dict(sorted(v.items())) for a, v in sorted(by_axis.items())}
    return Summary(overall, ordered, by_case)


def format_summary(summary: Summary, *, title: str = "") -> str:
    """The summary as plain text (the script's output, and docs/fuzz.md)."""
    o = summary.overall
    lines = []
    if title:
        lines.append(title)
    lines.append(
        f"round-trip cases passed: {o.cases_passed}/{o.cases_run} ({100 * o.rate:.1f}%); "
        f"formats fully passed: {o.formats_passed}/{o.formats_run}"
    )
    lines.append("")
    lines.append("by case:")
    for case in case_ids():
        t = summary.by_case.get(case)
        if t is not None:
            lines.append(f"  {case:<22} {t.cases_passed:>5}/{t.cases_run:<5} {100 * t.rate:5.1f}%")
    lines.append("")
    lines.append("by axis value (cases passed/run, formats passed/run; first failing seeds):")
    for axis, values in summary.by_axis.items():
        lines.append(f"  {axis}:")
        for value, t in values.items():
            lines.append(
                f"    {value:<20} {t.cases_passed:>5}/{t.cases_run:<5} {100 * t.rate:5.1f}%   "
                f"formats {t.formats_passed}/{t.formats_run}"
            )
            for seed, reason in t.failing:
                lines.append(f"        seed {seed}: {reason}")
    return "\n".join(lines)


def run_seeds(seeds: Sequence[int], *, jobs: int = 1, time_limit: float = 10.0) -> list[FormatOutcome]:
    """Run every seed, in ``jobs`` processes (spawned: the render worker pool is not fork-safe)."""
    if jobs <= 1:
        return [run_format(s, time_limit=time_limit) for s in seeds]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_run_one, [(s, time_limit) for s in seeds], chunksize=4))


def _run_one(args: tuple[int, float]) -> FormatOutcome:
    seed, time_limit = args
    return run_format(seed, time_limit=time_limit)
