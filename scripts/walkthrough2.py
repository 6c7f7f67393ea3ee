"""Drive the docs/tui.md walkthrough (issue 20) in a real terminal: tmux at a given size, keys sent as a
person types them, a picture (scripts/tmux_shot.py) after each step.

    .venv/bin/python scripts/walkthrough2.py [--size 120x36] [--out screenshots/walkthrough2]

The template is docs/walkthrough2/counted-calls.jinja: numbered calls whose arguments are written by
type (a string between tildes, anything else as "= JSON").  The analysis reads it as tagged markers and
the verdict is NOT validated; the repair is four edits on the Analysis screen (the call pattern as a JSON
document, the format, the section start and the call end), after which the verdict is green.  The spec is
exported, loaded back with ctrl+o, and a constrained `required` generation gives a call.  Every wait
polls the pane for the text that says the step is done, so a loaded machine only makes it slower.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "docs" / "walkthrough2" / "counted-calls.jinja"
SESSION = "wb-walk"

PATTERN = {
    "call": ["$index", ". ", "$name", ":", "$args"],
    "index_base": 1,
    "args": "tagged",
    "arguments": [
        {"types": ["string"], "parts": ["\n  - ", "$key", " ~", "$value", "~"], "value": "raw"},
        {
            "types": ["integer", "number", "boolean", "null", "array", "object"],
            "parts": ["\n  - ", "$key", " = ", "$value"],
            "value": "json",
        },
    ],
}


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def pane() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def keys(*names: str) -> None:
    tmux("send-keys", "-t", SESSION, *names)
    time.sleep(0.3)


def text(literal: str) -> None:
    tmux("send-keys", "-t", SESSION, "-l", literal)
    time.sleep(0.3)


def wait_for(needle: str, timeout: float = 300.0, gone: str = "") -> None:
    """Until ``needle`` is on screen (and ``gone`` is not)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        shown = pane()
        if needle in shown and (not gone or gone not in shown):
            return
        time.sleep(0.5)
    print(pane(), file=sys.stderr)
    raise SystemExit(f"timed out waiting for {needle!r}")


def shot(out: Path, name: str, title: str) -> None:
    time.sleep(0.8)
    script = str(ROOT / "scripts" / "tmux_shot.py")
    subprocess.run([sys.executable, script, SESSION, str(out / f"{name}.svg"), "--title", title], check=True)
    print(f"wrote {out / name}.svg")


def edit_row(row: str, move: int, value: str, *, document: bool = False) -> None:
    """Move the spec table's cursor ``move`` rows (down; negative: up; an edit keeps the cursor on its
    row), open the editor on ``row``, type ``value`` and submit it."""
    for _ in range(abs(move)):
        keys("Down" if move > 0 else "Up")
    keys("e")
    wait_for(f"Edit {row}")
    time.sleep(1.0)  # the dialog takes keys once it is drawn
    if document:
        keys("F7")  # select all in the document editor, then type over it
        time.sleep(1.0)
        text(value)
        keys("C-s")
    else:
        keys("C-u")
        time.sleep(1.0)
        text(value)
        time.sleep(1.0)
        keys("Enter")
    wait_for("spec fields", gone=f"Edit {row}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="120x36")
    parser.add_argument("--out", default=str(ROOT / "screenshots" / "walkthrough2"))
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    prefix = "" if width >= 120 else f"{width}-"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="walkthrough2-"))
    exe = Path(sys.executable).with_name("workbench")
    command = f"cd {work} && WORKBENCH_DATA_DIR={work}/data {exe} tui {TEMPLATE}"
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    tmux("new-session", "-d", "-s", SESSION, "-x", str(width), "-y", str(height), command)
    try:
        wait_for("render preview")
        shot(out, f"{prefix}01-open", "workbench tui counted-calls.jinja")
        keys("2")
        wait_for("NOT validated")
        shot(out, f"{prefix}02-not-validated", "Analysis: NOT validated")
        # focus the spec fields table (tab from the probes), then the four edits
        keys("Tab")
        edit_row("tools.pattern", 38, json.dumps(PATTERN), document=True)
        shot(out, f"{prefix}03-pattern", "tools.pattern edited as a JSON document")
        edit_row("tools.format", 6 - 38, "call_pattern")
        edit_row("tools.section_start", 1, '"<<call "')
        edit_row("tools.call_end", 3, '"\\n>>"')
        wait_for("✓ validated")
        shot(out, f"{prefix}04-validated", "the repaired spec: validated")
        keys("5")
        wait_for("ready to export")
        keys("s")
        wait_for("wrote")
        shot(out, f"{prefix}05-exported", "Export: the spec written")
        keys("C-o")
        wait_for("Load spec")
        keys("C-u")
        text(str(work / "counted-calls.spec.json"))
        keys("Enter")
        wait_for("Spec loaded")
        keys("3")
        wait_for("model output")
        keys("Tab")  # the tool choice list
        keys("Enter")
        keys("Down")
        keys("Enter")  # required
        keys("i")
        text("What is the weather in Paris?")
        keys("Enter")
        wait_for("tool_calls", timeout=600)
        wait_for("finished", timeout=600)
        shot(out, f"{prefix}06-generate-call", "Generate: required gives a call (tiny random model)")
        keys("C-q")
        time.sleep(1.5)
        alive = subprocess.run(["tmux", "has-session", "-t", SESSION], capture_output=True).returncode == 0
        print("quit:", "the pane is still open" if alive else "closed within 1.5 s")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
