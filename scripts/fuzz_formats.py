"""Measure the analysis on random but plausible formats: pass rates overall and per axis value.

    python scripts/fuzz_formats.py --seeds 500 [--start 1000] [--jobs 2] [--json]
    python scripts/fuzz_formats.py --seed 1234 [--template-out fmt.jinja]   # one format, in detail
    python scripts/fuzz_formats.py --seeds 500 --grammar [--jobs 2]   # the structural tags instead
    python scripts/fuzz_formats.py --seeds 200 --grammar lark [--jobs 2]   # the Lark export (llguidance)

Each seed draws one format (``workbench.testing.format_fuzz``), writes it as a Jinja chat template,
analyses it, validates it and round-trips the standard messages one-shot and streamed
(``workbench.testing.fuzz_run``).  The summary lists, per axis value, cases passed / run and formats fully
passed / run, with the first failing seeds and a one-line reason; rerun one with ``--seed``.
Fresh seeds: pick a ``--start`` no test uses (the tests use seeds below 100000).
``--grammar`` measures the spec's other reader instead: the structural tag built from it must accept every
round-trip output validation passed (``workbench.testing.fuzz_grammar``); ``--grammar lark`` holds the Lark
export to the same outputs through its own proof (llguidance, token by token with the tokenizer the export
proves with: Qwen3's from ../shared, else the project's BPE).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.testing.format_fuzz import draw_format, write_template
from workbench.testing.fuzz_grammar import (
    FAIL,
    PASS,
    STOPS,
    GrammarOutcome,
    grammar_outcome,
    grammar_outcomes,
    grammar_summary,
    validated_format,
)
from workbench.testing.fuzz_run import (
    format_summary,
    run_format,
    run_seeds,
    summarize,
    xfail_reason,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=100, help="how many seeds to run")
    parser.add_argument("--start", type=int, default=100_000, help="the first seed")
    parser.add_argument("--jobs", type=int, default=1, help="processes to run them in")
    parser.add_argument("--seed", type=int, default=None, help="run this one seed and show it in detail")
    parser.add_argument("--template-out", type=Path, default=None, help="with --seed: write the template")
    parser.add_argument("--keep", type=int, default=3, help="failing seeds listed per axis value")
    parser.add_argument(
        "--time-limit", type=float, default=10.0, help="render time limit (seconds; generous: a busy machine)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--grammar",
        nargs="?",
        const="tag",
        choices=("tag", "lark"),
        help="measure a grammar on the round-trip outputs instead: the structural tag (byte by byte, the"
        " default) or the Lark export (llguidance, token by token with the proof's tokenizer)",
    )
    parser.add_argument(
        "--xfail",
        action="store_true",
        help="print the failing seeds as lines of tests/test_format_fuzz.py's XFAIL",
    )
    args = parser.parse_args(argv)

    if args.seed is not None:
        return _one(args)
    seeds = list(range(args.start, args.start + args.seeds))
    started = time.perf_counter()
    if args.grammar:
        lark = args.grammar == "lark"
        outcome = lark_outcome if lark else grammar_outcome
        found = grammar_outcomes(seeds, jobs=args.jobs, time_limit=args.time_limit, outcome=outcome)
        elapsed = time.perf_counter() - started
        print(f"seeds {args.start}..{args.start + args.seeds - 1} ({args.seeds} formats, {elapsed:.0f} s)")
        print(grammar_summary(found, keep=args.keep, what="Lark grammars" if lark else "structural tags"))
        return 0
    outcomes = run_seeds(seeds, jobs=args.jobs, time_limit=args.time_limit)
    elapsed = time.perf_counter() - started
    summary = summarize(outcomes, keep=args.keep)
    if args.xfail:
        for outcome in outcomes:
            if not outcome.passed:
                print(f"    {outcome.seed}: {json.dumps(xfail_reason(outcome), ensure_ascii=False)},")
        return 0
    if args.json:
        data = summary.to_dict()
        data["seeds"] = {"start": args.start, "count": args.seeds, "seconds": round(elapsed, 1)}
        data["outcomes"] = [o.to_dict() for o in outcomes]
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        title = f"seeds {args.start}..{args.start + args.seeds - 1} ({args.seeds} formats, {elapsed:.0f} s)"
        print(format_summary(summary, title=title))
    return 0


def lark_outcome(seed: int, *, time_limit: float = 10.0) -> GrammarOutcome:
    """The Lark export's proof on the round-trip outputs of the format of ``seed`` (the grammar for the
    round-trip tools, fed token by token to llguidance).  A format whose only refusals are outputs that go
    on after the tokenizer's end of sequence is :data:`STOPS`, not a failure of the grammar."""
    from workbench.export.grammar_proof import AFTER_END_OF_SEQUENCE
    from workbench.export.lark import load_lark_tokenizer, prove_lark
    from workbench.proofs import ExportError

    got = validated_format(seed, time_limit=time_limit)
    if isinstance(got, GrammarOutcome):
        return got
    try:
        proof = prove_lark(got.spec, got.report, load_lark_tokenizer())
    except ExportError as exc:  # Unsupported included: the writer cannot express the spec
        return GrammarOutcome(seed, got.axes, FAIL, f"no Lark grammar: {' '.join(str(exc).split())[:200]}")
    failed = [c for c in proof.cases if c.status == "fail"]
    cases = len(proof.cases)
    if not failed:
        return GrammarOutcome(seed, got.axes, PASS, "", cases)
    first = f"{failed[0].id}: {failed[0].detail}"
    if all(AFTER_END_OF_SEQUENCE in c.detail for c in failed):
        return GrammarOutcome(seed, got.axes, STOPS, first, cases)
    return GrammarOutcome(seed, got.axes, FAIL, first, cases)


def _one(args: argparse.Namespace) -> int:
    draw = draw_format(args.seed)
    template = write_template(draw)
    if args.template_out is not None:
        args.template_out.write_text(template, encoding="utf-8")
    outcome = run_format(args.seed, time_limit=args.time_limit)
    if args.json:
        print(
            json.dumps({"draw": draw.to_dict(), "outcome": outcome.to_dict()}, ensure_ascii=False, indent=1)
        )
        return 0
    print(f"seed {args.seed}: " + ", ".join(f"{k}={v}" for k, v in draw.axes.items()))
    if args.template_out is None:
        print(template)
    for case in outcome.cases:
        print(
            f"  {'PASS' if case.passed else 'FAIL'} {case.case}" + (f": {case.reason}" if case.reason else "")
        )
    if outcome.error:
        print(f"  error: {outcome.error}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
