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
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "docs" / "walkthrough2" / "counted-calls.jinja"
UNTYPED = ROOT / "docs" / "walkthrough2" / "typed-tools-only.jinja"
SESSION = f"wb-walk-{os.getpid()}"  # its own tmux session: never another run's

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


def paste(literal: str) -> None:
    """Paste as a terminal does (bracketed paste: one event, not one key per character)."""
    tmux("set-buffer", "-b", SESSION, literal)
    tmux("paste-buffer", "-p", "-d", "-b", SESSION, "-t", SESSION)


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
        keys("F7")  # select all in the document editor, then paste over it
        time.sleep(1.0)
        paste(value)
        keys("C-s")  # at once: ctrl+s waits for the paste to be taken (workbench/tui/key_order.py)
    else:
        keys("C-u")
        time.sleep(1.0)
        text(value)
        time.sleep(1.0)
        keys("Enter")
    wait_for("spec fields", gone=f"Edit {row}")


def choose_required() -> None:
    """Tool choice ``required`` and parallel calls off. The fields before the chat field are, in order,
    the tool choice list and the constrain, parallel and paused checkboxes: from the chat field (``i``),
    ``shift+tab`` four times reaches the list, ``enter`` opens it."""
    wait_for("tiny random", timeout=600)  # the model loads on demand; keys wait until it is there
    keys("Escape")
    keys("i")
    for _ in range(4):
        keys("BTab")
        time.sleep(0.5)
    keys("Enter")
    wait_for("→ get_weather", timeout=30)  # the drop-down is open
    keys("Down")
    keys("Enter")
    wait_for("required", gone="→ get_weather")
    # one call: with parallel calls off the grammar ends the turn after the first call
    keys("Tab", "Tab")
    time.sleep(0.5)
    keys("Enter")
    wait_for("▐ ▌ parallel")


def repair(out: Path, prefix: str, work: Path, exe: Path, width: int, height: int) -> None:
    """Part 1: counted-calls.jinja, NOT validated, repaired in the TUI, exported, loaded back, generated."""
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
        choose_required()
        keys("i")
        text("What is the weather in Paris?")
        keys("Enter")
        # The grammar writes the call's frame; the tiny random model fills the string argument with noise
        # and never closes it by itself, so once it has started, force the closing "~" (one token): from
        # there the grammar allows only the enum argument or the call's end.
        wait_for("city ~", timeout=600)
        time.sleep(3.0)
        shot(out, f"{prefix}06-generate-required", "Generate: required, the call written under the grammar")
        keys("Escape")
        keys("f")
        wait_for("Force")
        time.sleep(1.0)
        text("~")
        keys("Enter")
        time.sleep(1.0)
        keys("r")
        wait_for('"name": "get_weather"', timeout=600)
        wait_for("finished", timeout=600)
        shot(out, f"{prefix}07-generate-call", "Generate: the call, parsed as tool_calls")
        keys("C-q")
        time.sleep(1.5)
        alive = subprocess.run(["tmux", "has-session", "-t", SESSION], capture_output=True).returncode == 0
        print("quit:", "the pane is still open" if alive else "closed within 1.5 s")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)


def limited(out: Path, prefix: str, work: Path, exe: Path, width: int, height: int) -> None:
    """Part 2: typed-tools-only.jinja, whose tool macro raises on a parameter without ``type``: the verdict
    is amber (``!``, "plain tools only") and names the refusal, never green; Export allows it and says so."""
    command = f"cd {work} && WORKBENCH_DATA_DIR={work}/data {exe} tui --no-model {UNTYPED}"
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    tmux("new-session", "-d", "-s", SESSION, "-x", str(width), "-y", str(height), command)
    try:
        wait_for("render preview")
        keys("2")
        wait_for("plain tools only")
        shot(out, f"{prefix}08-limited", "typed-tools-only.jinja: amber, the refusal named")
        keys("5")
        wait_for("ready to exp")  # at 80 columns the status beside the verdict is cut
        shot(out, f"{prefix}09-limited-export", "Export: allowed, the limitation stated")
        keys("C-q")
        time.sleep(1.5)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="120x36")
    parser.add_argument("--out", default=str(ROOT / "screenshots" / "walkthrough2"))
    parser.add_argument("--part", choices=["all", "repair", "limited"], default="all")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    prefix = "" if width >= 120 else f"{width}-"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="walkthrough2-"))
    exe = Path(sys.executable).with_name("workbench")
    if args.part in ("all", "repair"):
        repair(out, prefix, work, exe, width, height)
    if args.part in ("all", "limited"):
        limited(out, prefix, work, exe, width, height)
    return 0


if __name__ == "__main__":
    sys.exit(main())
