"""Replay issue 13's template and GGUF bombs and measure what each one cost: outcome, time, peak memory.

Reproduces the "peak memory of every bomb" figures of docs/hostile.md.  The bombs are the ones
``tests/hostile/`` replays (imported from there, so the two cannot drift apart), run here under the
*documented* limits: the 1 GiB worker cap (``--cap-mb``) and a 2 s time limit (``--time-limit``), where
the tests use 256 MiB and 0.5-1 s to stay cheap.

Each bomb runs in a fresh child process of this script, so its figures are its own:

- a template bomb renders in that child's render worker; after the render the child shuts the pool down
  (every worker killed and reaped) and reads ``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the peak resident
  memory of the worker(s) that served it, including one killed at the memory cap or the deadline;
- a GGUF bomb is read in the child itself (metadata is read in the caller's process); its figure is the
  growth of the child's own peak (``RUSAGE_SELF``) over what it had after its imports.

Outcomes: ``clean error`` (a WorkbenchError naming the limit, no traceback), ``ok`` (rendered), ``hang``
(still running at time limit + 1 s + the kill grace), ``traceback`` (any other exception), ``limit bypass``
(a bomb that rendered, or a peak at or over the cap).

Usage: ``python scripts/hostile_bombs.py [--cap-mb 1024] [--time-limit 2] [--only NAME] [--json]``
(about 2-3 minutes: one interpreter and one worker start per bomb).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "hostile")]
MESSAGES = [{"role": "user", "content": "Hi"}]


def bombs() -> dict[str, tuple[str, str | bytes]]:
    """``name -> (category, template source or GGUF bytes)``, from the test suite's own tables."""
    import test_hostile_gguf
    import test_hostile_render
    from test_hostile_limits import _macros

    out: dict[str, tuple[str, str | bytes]] = {
        "baseline_ordinary_render": ("baseline", "{{ messages[0].content }}")
    }
    for name, source in test_hostile_render.GUARDED.items():
        out[name] = ("size guard", source)
    for name, source in test_hostile_render.MEMORY.items():
        out[name] = ("memory cap", source)
    for name, source in test_hostile_render.OUTPUT.items():
        out[name] = ("output cap", source)
    out["list_doubling"] = (
        "memory cap",
        "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}"
        "{% endfor %}{{ ns.l|length }}",
    )
    for name, source in test_hostile_render.SLOW_C.items():
        out[name] = ("one long C call", source)
    out["nested_empty_loops"] = (
        "loops",
        "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    )
    out["macro_recursion"] = ("loops", "{% macro f(n) %}{{ f(n) }}{{ f(n) }}{% endmacro %}{{ f(1) }}")
    out["compile_5000_macros"] = ("compile", _macros(5000))
    out["source_2_mib"] = ("compile", "x" * (2 << 20))
    for name, data in test_hostile_gguf.BOMBS.items():
        out[f"gguf_{name}"] = ("GGUF", data)
    return out


# ------------------------------------------------------------------------------------------- one bomb
def run_one(name: str, cap_mb: int, time_limit: float) -> dict[str, Any]:
    """Run one bomb in this process (the child side); returns the figures as a dict."""
    from workbench.runtime.errors import WorkbenchError
    from workbench.template import render as wb_render
    from workbench.template import worker

    category, payload = bombs()[name]
    outcome, error = "ok", ""
    started = time.monotonic()
    if isinstance(payload, bytes):
        from workbench.template.source import load_template

        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{name}.gguf"
            path.write_bytes(payload)
            try:
                load_template(path)
            except WorkbenchError as exc:
                outcome, error = "clean error", f"{type(exc).__name__}: {exc}"
            except Exception as exc:
                outcome, error = "traceback", f"{type(exc).__name__}: {exc}"
        seconds = time.monotonic() - started
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    else:
        wb_render.use_worker(True)
        pool = worker.configure(cap_mb << 20)
        wb_render.render("{{ 1 }}", MESSAGES)  # the worker's start-up is not counted in any time limit
        started = time.monotonic()
        try:
            wb_render.render(payload, MESSAGES, time_limit=time_limit)
        except WorkbenchError as exc:
            outcome, error = "clean error", f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        except Exception as exc:
            outcome, error = "traceback", f"{type(exc).__name__}: {exc}"
        seconds = time.monotonic() - started
        pool.shutdown()  # kill and reap every worker: RUSAGE_CHILDREN then covers them all
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "name": name,
        "category": category,
        "outcome": outcome,
        "error": error,
        "seconds": round(seconds, 2),
        "peak_mib": round(peak_kib / 1024, 1),
    }


def run_child(name: str, cap_mb: int, time_limit: float, grace: float) -> dict[str, Any]:
    """Run one bomb in a fresh interpreter; a child still running at the deadline is a hang."""
    deadline = time_limit + grace + 1.0 + 30.0  # + interpreter and worker start-up on a loaded machine
    command = [
        sys.executable,
        __file__,
        "--one",
        name,
        "--cap-mb",
        str(cap_mb),
        "--time-limit",
        str(time_limit),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=deadline, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {
            "name": name,
            "category": bombs()[name][0],
            "outcome": "hang",
            "error": "",
            "seconds": deadline,
        }
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"name": name, "category": bombs()[name][0], "outcome": "traceback", "error": tail}
    return dict(json.loads(done.stdout))


def judge(row: dict[str, Any], cap_mb: int, time_limit: float, grace: float) -> dict[str, Any]:
    """Apply the hang / limit-bypass rules to a finished row."""
    if row["outcome"] == "clean error" and row.get("seconds", 0) > time_limit + grace + 1.0:
        row["outcome"] = "hang"
    if row.get("peak_mib", 0) >= cap_mb:
        row["outcome"] = "limit bypass"
    if row["outcome"] == "ok" and row["category"] != "baseline":
        row["outcome"] = "limit bypass"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cap-mb", type=int, default=1024, help="Worker memory cap (the documented default).")
    ap.add_argument("--time-limit", type=float, default=2.0, help="Render time limit (the default).")
    ap.add_argument("--only", default=None, help="Only bombs whose name contains this.")
    ap.add_argument("--json", action="store_true", help="One JSON object per bomb.")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.cap_mb, args.time_limit)))
        return
    from workbench.template.limits import KILL_GRACE

    names = [n for n in bombs() if args.only is None or args.only in n]
    counts: dict[str, int] = {}
    if not args.json:
        print(f"cap {args.cap_mb} MiB, time limit {args.time_limit:g} s, kill grace {KILL_GRACE:g} s")
        print(f"{'category':<16} {'bomb':<36} {'outcome':<13} {'s':>6} {'peak MiB':>9}  error")
    for name in names:
        row = judge(
            run_child(name, args.cap_mb, args.time_limit, KILL_GRACE),
            args.cap_mb,
            args.time_limit,
            KILL_GRACE,
        )
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(
                f"{row['category']:<16} {name:<36} {row['outcome']:<13} {row.get('seconds', 0):>6.2f} "
                f"{row.get('peak_mib', 0):>9.1f}  {row['error'][:70]}",
                flush=True,
            )
    if not args.json:
        print("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
