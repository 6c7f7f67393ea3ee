"""Loading a spec file: how many workbench modules it imports and how long it takes, in a fresh interpreter.

Every ``workbench parse --spec``, every plug-in start and every TUI session load begins with
``load_spec``; before the runtime redesign (issue 21) it imported the analyzer and every exporter (118
modules, 0.55-0.65 s here).  Each measurement runs ``from workbench.spec_io import load_spec;
load_spec("specs/qwen3_thinking.json")`` in a new ``python -I``-like interpreter (only the repository on
``sys.path``), and prints the median over ``--repeat`` runs of the wall time of that import + load, the CPU
time, and the number of ``workbench`` modules left in ``sys.modules``.

Same-run baselines: an interpreter that only starts (``pass``), and one that imports what loading a spec
used to pull in (``workbench.formats`` and ``workbench.export``: the analysis and every export target), with
the ratio of the spec load to it.  ``--repo PATH`` measures another checkout (e.g. the commit before the
redesign) with the same script.

Usage: ``python benchmarks/spec_load.py [--repeat 7] [--repo PATH]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = "specs/qwen3_thinking.json"

_PROBE = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
{body}
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
mods = sorted(m for m in sys.modules if m == "workbench" or m.startswith("workbench."))
print(json.dumps({{"wall": wall, "cpu": cpu, "modules": mods}}))
"""

CASES = {
    "interpreter only": "pass",
    "load_spec": f"from workbench.spec_io import load_spec\nload_spec({SPEC!r})",
    "old cone (formats + export)": "import workbench.formats, workbench.export",
}


def measure(body: str, repo: Path) -> dict[str, object]:
    """One fresh interpreter: the repository first on ``sys.path``, no user site, no PYTHONPATH."""
    code = f"import sys; sys.path.insert(0, {str(repo)!r})\n" + _PROBE.format(body=body)
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--repo", type=Path, default=REPO)
    args = parser.parse_args()
    medians: dict[str, tuple[float, float, int]] = {}
    print(f"{'case':<30} {'wall ms':>9} {'cpu ms':>9} {'workbench modules':>18}")
    for name, body in CASES.items():
        runs = [measure(body, args.repo) for _ in range(args.repeat)]
        wall = statistics.median(float(r["wall"]) for r in runs)  # type: ignore[arg-type]
        cpu = statistics.median(float(r["cpu"]) for r in runs)  # type: ignore[arg-type]
        count = len(runs[-1]["modules"])  # type: ignore[arg-type]
        medians[name] = (wall, cpu, count)
        print(f"{name:<30} {wall * 1000:>9.1f} {cpu * 1000:>9.1f} {count:>18}")
    load, old = medians["load_spec"], medians["old cone (formats + export)"]
    print(
        f"\nload_spec: {load[2]} workbench modules, {load[0]:.3f} s wall ({load[1]:.3f} s CPU); "
        f"{load[0] / old[0]:.2f}x the wall time of importing what it used to pull in"
    )
    print("goal: < 25 modules and < 0.25 s")


if __name__ == "__main__":
    main()
