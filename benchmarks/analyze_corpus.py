"""Analysis time per template over a corpus (default: ../shared/templates, else the project's templates/).

Prints, per template, the median and p95 of several warm analyses (the Jinja compile is cached by
``render.compile_template``, as in a long-running process), the first ("cold") analysis that includes the
compile, the number of renders, and the corpus totals.  Two reference points:

* a baseline measured in the same run: rendering the same number of variants of the template without any
  analysis (so "overhead" is what the diffs and phases cost on top of the unavoidable renders);
* llama.cpp's in-process ``analyze_template()`` time from summary.json, when present (another machine run,
  another language: a reference, not a same-run baseline).

Usage: ``python benchmarks/analyze_corpus.py [FOLDER_OR_TEMPLATE...] [--runs N]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.analysis import analyze  # noqa: E402
from workbench.analysis.probes import USER_TEXT  # noqa: E402
from workbench.template.render import render  # noqa: E402
from workbench.template.source import TemplateSource, load_template  # noqa: E402

SHARED = REPO.parent / "shared"
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
    args = parser.parse_args()
    llama = _llamacpp_ms()
    rows = []
    for path in _paths(args.refs):
        src = load_template(path)
        t0 = time.perf_counter()
        analysis = analyze(src)
        cold = (time.perf_counter() - t0) * 1000
        warm = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            analyze(src)
            warm.append((time.perf_counter() - t0) * 1000)
        base = _render_baseline(src, analysis.render_count)
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
        f"warm analysis per template: median {statistics.median(meds):.1f} ms, p95 {_p95(meds):.1f} ms "
        f"(goal: median <= 20 ms)"
    )
    print(f"cold analysis (includes the Jinja compile): median {statistics.median(colds):.1f} ms")
    print(f"corpus total: warm {sum(meds):.0f} ms, cold {sum(colds):.0f} ms")
    print(f"renders per template: median {statistics.median(r[4] for r in rows):.0f}")
    refs = [(r[1], r[6]) for r in rows if r[6]]
    if refs:
        ratio = statistics.median(ours / theirs for ours, theirs in refs)
        print(
            f"vs llama.cpp analyze_template() (summary.json, C++): median ratio {ratio:.1f}x "
            f"(llama.cpp median {statistics.median(t for _, t in refs):.1f} ms)"
        )


if __name__ == "__main__":
    main()
