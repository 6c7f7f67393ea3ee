"""Write ``tests/timings.json`` from a JUnit report of a full run: seconds per test function.

``make check`` is the fast loop: it leaves out the tests marked ``slow``, and ``tests/conftest.py`` also
marks slow every test function whose measured time (all its parametrizations together) passes
``FAST_BUDGET`` there.  The times come from a real run, not from a hand-kept list:

    .venv/bin/python -m pytest -n 2 --dist loadgroup --junitxml=/tmp/junit.xml
    .venv/bin/python scripts/time_tests.py /tmp/junit.xml

Every test still runs in ``make test``; a function not in the file (a new test) counts as fast until the
next measure.  Functions under half a second are left out of the file (they are fast either way).

Usage: ``python scripts/time_tests.py JUNIT_XML [--out tests/timings.json]``
"""

from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEPT_FROM = 0.5  # seconds: a function faster than this is fast under any budget worth setting


def function_times(junit: Path) -> Counter[str]:
    """``tests/x.py::test_name`` -> seconds, summed over the function's parametrizations."""
    times: Counter[str] = Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        name = re.sub(r"@\w+$", "", case.get("name", ""))  # pytest-xdist's group suffix
        name = name.split("[", 1)[0]
        times[f"{path}::{name}"] += float(case.get("time") or 0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "timings.json")
    args = parser.parse_args()
    times = function_times(args.junit)
    kept = {name: round(seconds, 1) for name, seconds in sorted(times.items()) if seconds >= KEPT_FROM}
    args.out.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n")
    print(f"{len(kept)} of {len(times)} test functions took {KEPT_FROM} s or more: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
