"""The drawn formats' grammars: does the structural tag built from the analysed spec accept what the
template writes?

The format fuzzer (:mod:`workbench.testing.fuzz_run`) holds the parser to the template; the spec has a
second reader, the structural tag every export and serving plug-in builds from it
(:func:`workbench.runtime.grammar.assembler.assemble`, reading mode).  A tag that rejects a round-trip output
makes a server mask the very text the model was trained to write (a headed call's separator, a blank before
the section's end, a Python string in single quotes): the parser reads the output, the grammar forbids it.
For each seed the format is drawn, analysed and validated as the fuzzer does; each round-trip output the
validation passed is then fed to the tag for the round-trip tools, byte by byte (xgrammar without a
tokenizer: what a tokenizer splits differently is the export proof's business), and must be accepted whole,
the grammar able to end there or after one of the spec's end markers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.testing.format_fuzz import draw_format, write_template

if TYPE_CHECKING:
    from workbench.runtime.spec import FormatSpec
    from workbench.validate import ValidationReport

PASS, FAIL, SKIP = "pass", "fail", "skip"
#: A format whose round-trip outputs the grammar accepts up to the proof tokenizer's end of sequence, and
#: which goes on after it (a headed message ended by ``<|im_end|>``, Qwen3's end of sequence).
STOPS = "stops"


@dataclass(frozen=True)
class GrammarOutcome:
    """One seed's grammar measure: ``status`` pass, fail (``reason`` names the case and where), or skip
    (no tool calls, not validated: nothing the grammar must accept)."""

    seed: int
    axes: dict[str, str]
    status: str
    reason: str = ""
    cases: int = 0


def validated_format(seed: int, *, time_limit: float = 10.0) -> Validated | GrammarOutcome:
    """Draw, analyse and validate the format of ``seed``: its axes, spec and report, or the skip outcome
    (the analysis failed, no tool calls, not validated: nothing a grammar must accept)."""
    from workbench.formats import analyze
    from workbench.template.render import TemplateError
    from workbench.template.source import TemplateSource
    from workbench.validate import validate

    draw = draw_format(seed)
    axes = dict(draw.axes)
    source = TemplateSource(text=write_template(draw), name=f"fuzz-{seed}", origin="<format fuzz>")
    try:
        spec = analyze(source, time_limit=time_limit).spec
    except TemplateError as exc:
        return GrammarOutcome(seed, axes, SKIP, f"analysis failed: {_line(str(exc))}")
    if spec.tools.format == "none":
        return GrammarOutcome(seed, axes, SKIP, "no tool calls")
    report = validate(source, spec, time_limit=time_limit, continuation=False)
    if not report.validated:
        return GrammarOutcome(seed, axes, SKIP, "not validated")
    return Validated(seed, axes, spec, report)


@dataclass(frozen=True)
class Validated:
    """A drawn format the analysis read and validation passed."""

    seed: int
    axes: dict[str, str]
    spec: FormatSpec
    report: ValidationReport


def grammar_outcome(seed: int, *, time_limit: float = 10.0) -> GrammarOutcome:
    """Draw, analyse and validate the format of ``seed``, then feed its round-trip outputs to its tag."""
    from workbench.runtime.grammar.elements import GrammarError
    from workbench.validate import ROUND_TRIP_TOOLS

    got = validated_format(seed, time_limit=time_limit)
    if isinstance(got, GrammarOutcome):
        return got
    axes, spec, report = got.axes, got.spec, got.report
    try:
        from workbench.runtime.grammar.assembler import assemble

        compiled = compile_tag(assemble(spec, ROUND_TRIP_TOOLS, "auto"))
    except GrammarError as exc:
        return GrammarOutcome(seed, axes, FAIL, f"no structural tag: {_line(str(exc))}")
    outputs = [(c.id, c.output) for c in report.cases if c.status == "pass" and c.output]
    ends = [m for m in spec.end_markers if m]
    for case_id, output in outputs:
        why = rejection(compiled, output, ends)
        if why:
            return GrammarOutcome(seed, axes, FAIL, f"{case_id}: {why}", len(outputs))
    return GrammarOutcome(seed, axes, PASS, "", len(outputs))


def compile_tag(tag: dict[str, Any]) -> Any:
    """The structural tag compiled without a tokenizer (byte-level matching)."""
    import xgrammar as xgr

    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo([]))
    return compiler.compile_structural_tag(json.dumps(tag, ensure_ascii=False))


def rejection(compiled: Any, text: str, end_markers: Sequence[str]) -> str:
    """ "" when ``text`` is accepted whole and the grammar can end there (or after one of
    ``end_markers``), else where it stops: the text accepted so far and the character refused."""
    import xgrammar as xgr

    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    for i, ch in enumerate(text):
        if not matcher.accept_string(ch):
            return f"{ch!r} refused after {text[max(0, i - 50) : i]!r}"
    if matcher.is_completed():
        return ""
    for marker in end_markers:
        trial = matcher.fork()
        if trial.accept_string(marker) and trial.is_completed():
            return ""
    return "the whole output is accepted, but the grammar cannot end there"


OutcomeFn = Callable[..., GrammarOutcome]


def grammar_outcomes(
    seeds: Sequence[int], *, jobs: int = 1, time_limit: float = 10.0, outcome: OutcomeFn = grammar_outcome
) -> list[GrammarOutcome]:
    """``outcome`` (:func:`grammar_outcome`, or another target's: a module-level function taking the seed
    and ``time_limit``) of each seed, in ``jobs`` processes."""
    if jobs <= 1:
        return [outcome(s, time_limit=time_limit) for s in seeds]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_one, [(outcome, s, time_limit) for s in seeds]))


def _one(args: tuple[OutcomeFn, int, float]) -> GrammarOutcome:
    return args[0](args[1], time_limit=args[2])


def grammar_summary(
    outcomes: Sequence[GrammarOutcome], *, keep: int = 10, what: str = "structural tags"
) -> str:
    """The pass rate over the formats with something to accept, the first failing seeds (why, and their
    layout and spelling), and the pass rate of each axis value that has a failing format.  Formats whose
    outputs go on after the proof tokenizer's end of sequence (:data:`STOPS`) are counted apart."""
    run = [o for o in outcomes if o.status not in (SKIP, STOPS)]
    passed = sum(o.status == PASS for o in run)
    lines = [
        f"{what} accepting every round-trip output: {passed}/{len(run)} formats"
        + (f" ({100 * passed / len(run):.1f}%)" if run else "")
        + f"; {sum(o.status == SKIP for o in outcomes)} skipped (no tool calls, or not validated)"
    ]
    stops = [o for o in outcomes if o.status == STOPS]
    if stops:
        lines.append(
            f"{len(stops)} more go on after the proof tokenizer's end of sequence (a model with that"
            f" tokenizer stops there; not a grammar fault): {', '.join(str(o.seed) for o in stops[:keep])}"
        )
    bad = [o for o in run if o.status == FAIL]
    if bad:
        lines.append("failing seeds:")
        lines.extend(
            f"  {o.seed} ({o.axes.get('layout', '?')}/{o.axes.get('spelling', '?')}): {o.reason}"
            for o in bad[:keep]
        )
        by_value: dict[tuple[str, str], list[GrammarOutcome]] = {}
        for o in run:
            for axis, value in o.axes.items():
                by_value.setdefault((axis, value), []).append(o)
        lines.append("axis values with a failing format (passed/run):")
        lines.extend(
            f"  {axis}={value}: {sum(o.status == PASS for o in group)}/{len(group)}"
            for (axis, value), group in sorted(by_value.items())
            if any(o.status == FAIL for o in group)
        )
    return "\n".join(lines)


def _line(text: str, limit: int = 200) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
