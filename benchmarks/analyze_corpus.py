"""Analysis time per template over a corpus (default: ../shared/templates, else the project's templates/).

An analysis here is what ``workbench analyze`` does: the analysis *and its self-check* (the round-trip
validation of the spec it found, :func:`workbench.selfcheck.check_spec`, whose first renders start in a
second render worker while the analysis learns the turn: :class:`workbench.selfcheck.EarlyRenders`).
Prints, per template, the median and p95 of several warm analyses (the Jinja compile is cached by
``render.compile_template`` and renders shared between the analysis and its self-check within one run by
:mod:`workbench.template.render_cache`, as ``workbench analyze`` does; every run renders afresh), the
first ("cold") analysis that includes the compile, the number of renders, and the corpus totals; then the
same-run median with the self-check rendering its own cases (no shared renders) and without the
self-check, so the figures can be compared.
Two reference points:

* a baseline measured in the same run: rendering the same number of variants of the template without any
  analysis (so "overhead" is what the diffs and phases cost on top of the unavoidable renders);
* llama.cpp's in-process ``analyze_template()`` time from summary.json, when present (another machine run,
  another language: a reference, not a same-run baseline).

Renders go to the render worker process (the default: bounded in time and memory, one pipe round trip
per render) unless ``--inline`` is given (``WORKBENCH_RENDER_WORKER=0``); the summary prints the worker's
start-up time, the round-trip cost, and what one batched call (``render_many``) costs for the same renders.

Usage: ``python benchmarks/analyze_corpus.py [FOLDER_OR_TEMPLATE...] [--runs N] [--inline]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.analysis.probes import USER_TEXT  # noqa: E402
from workbench.formats import analyze  # noqa: E402
from workbench.paths import shared_dir  # noqa: E402
from workbench.runtime.parsing import schema_check  # noqa: E402
from workbench.selfcheck import EarlyRenders, check_spec  # noqa: E402
from workbench.template import render as render_module  # noqa: E402
from workbench.template import render_cache, worker  # noqa: E402
from workbench.template.render import render, render_many  # noqa: E402
from workbench.template.source import TemplateSource, load_template  # noqa: E402

SHARED = shared_dir()  # ../shared, or $WORKBENCH_SHARED
SUMMARY = SHARED / "conformance" / "llamacpp-analysis" / "summary.json"


def _paths(refs: list[str]) -> list[Path]:
    if not refs:
        folder = SHARED / "templates" if (SHARED / "templates").is_dir() else REPO / "templates"
        return sorted(folder.glob("*.jinja"))
    out: list[Path] = []
    for ref in refs:
        p = Path(ref)
        out.extend(sorted(p.glob("*.jinja")) if p.is_dir() else [p])
    return out


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _render_baseline(src: TemplateSource, renders: int) -> float:
    """Milliseconds to render a plain user turn ``renders`` times (the cost no analysis can avoid)."""
    msgs = [{"role": "user", "content": USER_TEXT}]
    start = time.perf_counter()
    for _ in range(renders):
        # A template that needs the analyzer's fallbacks fails here: the baseline is then a lower bound.
        with contextlib.suppress(Exception):
            render(src.text, msgs, add_generation_prompt=True, **src.render_kwargs())
    return (time.perf_counter() - start) * 1000


def _batch_baseline(src: TemplateSource, renders: int) -> float:
    """Milliseconds to render the same ``renders`` calls in one ``render_many`` batch."""
    call = {"messages": [{"role": "user", "content": USER_TEXT}], "add_generation_prompt": True}
    call.update(src.render_kwargs())
    start = time.perf_counter()
    with contextlib.suppress(Exception):
        render_many(src.text, [call] * renders)
    return (time.perf_counter() - start) * 1000


def _worker_costs() -> tuple[float, float, float]:
    """Worker start-up (ms), and microseconds per trivial render in the worker and in-process."""
    msgs = [{"role": "user", "content": "x"}]
    start = time.perf_counter()
    worker.get_pool().shutdown()
    render("{{ 1 }}", msgs)
    startup = (time.perf_counter() - start) * 1000
    per = []
    for mode in (True, False):
        render_module.use_worker(mode)
        render("{{ 2 }}", msgs)
        start = time.perf_counter()
        for _ in range(500):
            render("{{ 2 }}", msgs)
        per.append((time.perf_counter() - start) / 500 * 1e6)
    render_module.use_worker(True)
    return startup, per[0], per[1]


def _analyze_and_check(src: TemplateSource, *, shared: bool = True) -> Any:
    """``workbench analyze``'s work: the analysis and the self-check of the spec it found, sharing one
    command's renders (``shared=False``: each renders its own, as before the render cache).  Nothing an
    earlier run checked is reused: the schema verdicts parsing keeps are dropped first."""
    schema_check.forget_verdicts()
    if not shared:
        analysis = analyze(src)
        check_spec(analysis.source, analysis.spec)
        return analysis
    with render_cache.cached_renders():
        early = EarlyRenders()
        analysis = analyze(src, on_spec=early.start)
        early.join()
        check_spec(analysis.source, analysis.spec)
    return analysis


def _llamacpp_ms() -> dict[str, float]:
    if not SUMMARY.is_file():
        return {}
    data = json.loads(SUMMARY.read_text(encoding="utf-8"))["templates"]
    return {
        k: v["struct_dump"]["analyze_ms_median"]
        for k, v in data.items()
        if v.get("struct_dump", {}).get("analyze_ms_median")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("refs", nargs="*", help="templates or folders (default: the shared corpus)")
    parser.add_argument("--runs", type=int, default=7, help="warm analyses per template")
    parser.add_argument("--inline", action="store_true", help="render in-process (no worker process)")
    args = parser.parse_args()
    costs = _worker_costs()
    render_module.use_worker(not args.inline)
    batched: list[float] = []
    llama = _llamacpp_ms()
    rows = []
    uncached_all: list[float] = []
    no_check_all: list[float] = []
    for path in _paths(args.refs):
        src = load_template(path)
        t0 = time.perf_counter()
        analysis = _analyze_and_check(src)
        cold = (time.perf_counter() - t0) * 1000
        warm = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            _analyze_and_check(src)
            warm.append((time.perf_counter() - t0) * 1000)
        uncached = []
        for _ in range(max(1, args.runs // 3)):
            t0 = time.perf_counter()
            _analyze_and_check(src, shared=False)
            uncached.append((time.perf_counter() - t0) * 1000)
        uncached_all.append(statistics.median(uncached))
        t0 = time.perf_counter()
        analyze(src)
        no_check_all.append((time.perf_counter() - t0) * 1000)
        base = _render_baseline(src, analysis.render_count)
        batched.append(_batch_baseline(src, analysis.render_count))
        rows.append(
            (
                src.name,
                statistics.median(warm),
                _p95(warm),
                cold,
                analysis.render_count,
                base,
                llama.get(src.name),
            )
        )
    print(
        f"{'template':48s} {'median':>8s} {'p95':>8s} {'cold':>8s} {'renders':>7s} {'render-only':>11s}"
        f" {'overhead':>8s} {'llama.cpp':>9s}"
    )
    for name, med, p95, cold, n, base, ref in rows:
        ref_s = f"{ref:8.1f}" if ref is not None else "       -"
        print(
            f"{name[:48]:48s} {med:7.1f}ms {p95:7.1f}ms {cold:7.1f}ms {n:7d} {base:9.1f}ms"
            f" {med / base if base else float('nan'):7.2f}x {ref_s}ms"
        )
    meds = [r[1] for r in rows]
    colds = [r[3] for r in rows]
    print()
    print(f"templates: {len(rows)}")
    print(
        f"warm analysis + self-check per template: median {statistics.median(meds):.1f} ms, "
        f"p95 {_p95(meds):.1f} ms (goal: median <= 15 ms)"
    )
    print(
        "same run, the self-check rendering its own cases (no shared renders): "
        f"median {statistics.median(uncached_all):.1f} ms; "
        f"warm analysis without the self-check: median {statistics.median(no_check_all):.1f} ms"
    )
    print(f"cold analysis (includes the Jinja compile): median {statistics.median(colds):.1f} ms")
    print(f"corpus total: warm {sum(meds):.0f} ms, cold {sum(colds):.0f} ms")
    print(f"renders per template: median {statistics.median(r[4] for r in rows):.0f}")
    print(
        f"renders: {'in-process (--inline)' if args.inline else 'render worker process'}; worker start-up "
        f"{costs[0]:.0f} ms; trivial render {costs[1]:.0f} us in the worker vs {costs[2]:.0f} us in-process"
    )
    print(
        f"render-only per template: median {statistics.median(r[5] for r in rows):.1f} ms one by one, "
        f"{statistics.median(batched):.1f} ms as one render_many batch"
    )
    refs = [(r[1], r[6]) for r in rows if r[6]]
    if refs:
        ratio = statistics.median(ours / theirs for ours, theirs in refs)
        print(
            f"vs llama.cpp analyze_template() (summary.json, C++): median ratio {ratio:.1f}x "
            f"(llama.cpp median {statistics.median(t for _, t in refs):.1f} ms)"
        )


if __name__ == "__main__":
    main()
