"""Validate every project template and every ../shared template: the verdict per template and the count.

Prints one line per template (the verdict, the untested features, the first failing case) and the count that
validates.  ``--json FILE`` also writes the per-template verdicts (what docs/export.md's corpus table is
made from); ``--before FILE`` compares with an earlier ``--json`` run and lists every template whose verdict
changed.

Usage: ``python scripts/validate_corpus.py [TEMPLATE_OR_FOLDER...] [--json FILE] [--before FILE]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.formats import analyze  # noqa: E402
from workbench.paths import shared_dir  # noqa: E402
from workbench.template.source import load_template  # noqa: E402
from workbench.validate import validate  # noqa: E402

SHARED = shared_dir()  # ../shared, or $WORKBENCH_SHARED


def corpus(refs: list[str]) -> list[Path]:
    """The templates named, or the project's own and ../shared's."""
    if refs:
        out: list[Path] = []
        for ref in refs:
            p = Path(ref)
            out.extend(sorted(p.rglob("*.jinja")) if p.is_dir() else [p])
        return out
    found = sorted((REPO / "templates").rglob("*.jinja"))
    if (SHARED / "templates").is_dir():
        found += sorted((SHARED / "templates").glob("*.jinja"))
    return found


def one(path: Path) -> dict[str, Any]:
    """The verdict for one template (never raises: an error is a row)."""
    started = time.perf_counter()
    try:
        source = load_template(str(path))
        report = validate(source, analyze(source).spec)
    except Exception as exc:  # a corpus run reports every template, whatever happens
        return {"template": path.stem, "validated": False, "summary": f"error: {exc}", "seconds": 0.0}
    data = report.to_dict()
    failing = [c for c in (*report.cases, *report.continuation) if c.status in ("fail", "error")]
    return {
        "template": path.stem,
        "validated": report.validated,
        "summary": report.summary(),
        "verdict": data.get("verdict"),
        "first_failure": f"{failing[0].id}: {failing[0].reason}" if failing else "",
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("refs", nargs="*")
    ap.add_argument("--json", type=Path, help="write the rows as JSON")
    ap.add_argument("--before", type=Path, help="an earlier --json file to compare with")
    args = ap.parse_args()
    rows = []
    for path in corpus(args.refs):
        row = one(path)
        rows.append(row)
        mark = "ok  " if row["validated"] else "NOT "
        print(f"{mark}{row['template']:<52} {row['seconds']:6.1f}s  {row['summary']}", flush=True)
        if row.get("first_failure"):
            print(f"      first failure: {row['first_failure']}", flush=True)
    good = sum(r["validated"] for r in rows)
    print(f"\n{good}/{len(rows)} templates validate")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    if args.before:
        before = {r["template"]: r for r in json.loads(args.before.read_text())}
        changed = [
            r
            for r in rows
            if r["template"] in before and before[r["template"]]["validated"] != r["validated"]
        ]
        print(f"{len(changed)} verdicts changed since {args.before}:")
        for r in changed:
            was = "validated" if before[r["template"]]["validated"] else "not validated"
            print(f"  {r['template']}: was {was}; now {r['summary']}")
            if r.get("first_failure"):
                print(f"      {r['first_failure']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
