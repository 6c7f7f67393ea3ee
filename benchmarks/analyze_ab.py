"""Same-run comparison of two checkouts: warm analysis + self-check per template, alternating the trees.

The machine is shared and noisy, so absolute figures move by 2x between runs; this runs each tree's
analysis (and its self-check, as ``workbench analyze`` does) in a fresh interpreter, alternating A, B, B, A,
and prints each tree's median over the corpus, the analysis alone, and the per-template ratio B/A.

Usage: ``python benchmarks/analyze_ab.py TREE_A TREE_B [--runs N] [--per-template]`` where each tree is a
checkout of this repository (e.g. a ``git worktree`` of the commit to compare against).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

# Run inside each tree: warm (after one cold run) median of RUNS analyses + self-checks per template, and the
# fastest of two analyses alone.
_CHILD = r"""
import glob, json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from workbench.formats import analyze
from workbench.paths import shared_dir
from workbench.runtime.parsing import schema_check
from workbench import selfcheck
from workbench.selfcheck import check_spec
from workbench.template import render_cache
from workbench.template.source import load_template

out = {}
for path in sorted(glob.glob(str(shared_dir() / "templates" / "*.jinja"))):
    src = load_template(path)

    def run():
        # what an earlier run checked is not reused (a tree older than the kept verdicts has none)
        getattr(schema_check, "forget_verdicts", lambda: None)()
        with render_cache.cached_renders():
            # as `workbench analyze` runs them (a tree older than EarlyRenders: one after the other)
            early = getattr(selfcheck, "EarlyRenders", None)
            early = early() if early is not None else None
            analysis = analyze(src, on_spec=early.start) if early is not None else analyze(src)
            if early is not None:
                early.join()
            check_spec(analysis.source, analysis.spec)

    run()
    warm = []
    for _ in range(int(sys.argv[2])):
        t = time.perf_counter(); run(); warm.append((time.perf_counter() - t) * 1000)
    alone = []
    for _ in range(2):
        t = time.perf_counter(); analyze(src); alone.append((time.perf_counter() - t) * 1000)
    out[src.name] = [statistics.median(warm), min(alone)]
print(json.dumps(out))
"""


def _measure(tree: str, runs: int) -> dict[str, list[float]]:
    done = subprocess.run(
        # run from the tree: its render worker (``python -m``) must import that tree, not this one
        [sys.executable, "-c", _CHILD, tree, str(runs)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tree,
    )
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr.strip().splitlines()[-1] if done.stderr else 'failed'}")
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree_a")
    parser.add_argument("tree_b")
    parser.add_argument("--runs", type=int, default=3, help="warm analyses per template and round")
    parser.add_argument("--per-template", action="store_true", help="print every template's ratio")
    args = parser.parse_args()
    trees = (args.tree_a, args.tree_b)
    best: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    for order in (trees, trees[::-1]):  # A, B, B, A: a drift in load weighs on both alike
        for tree in order:
            for name, (warm, alone) in _measure(tree, args.runs).items():
                kept = best[tree].setdefault(name, [warm, alone])
                best[tree][name] = [min(kept[0], warm), min(kept[1], alone)]
    a, b = (best[t] for t in trees)
    for tree in trees:
        warm = statistics.median(v[0] for v in best[tree].values())
        alone = statistics.median(v[1] for v in best[tree].values())
        print(
            f"{tree}: warm analysis + self-check median {warm:.1f} ms; analysis alone median {alone:.1f} ms"
        )
    ratios = {name: b[name][0] / a[name][0] for name in a if name in b}
    print(f"B/A per template: median {statistics.median(ratios.values()):.2f}x")
    if args.per_template:
        for name, ratio in sorted(ratios.items(), key=lambda kv: kv[1]):
            print(f"  {name:50s} {a[name][0]:7.1f} {b[name][0]:7.1f} ms  {ratio:5.2f}x")


if __name__ == "__main__":
    main()
