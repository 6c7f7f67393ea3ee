"""Time to the first interactive screen: ``workbench tui TEMPLATE`` driven in a pseudo-terminal.

    .venv/bin/python benchmarks/tui_interactive.py [TEMPLATE] [--runs 3] [--busy] [--no-model]

Each run starts the real command in a pseudo-terminal of 120x36 (``pty``), reads what it draws into a
terminal emulator (``pyte``), and types ``2`` every 0.2 s from the start.  It records

* **first paint**: the first screen is drawn (the nav line and the Template screen's preview pane);
* **interactive**: a ``2`` has switched to the Analysis screen (its "spec fields" table is on screen):
  the app reads keys and acts on them;
* **quit**: after ``ctrl+q``, how long until the process has ended.

The model loads as ``workbench tui`` loads it (the cached default, else the tiny random one) unless
``--no-model``: loading it (torch, transformers) is what used to keep the keyboard dead.  ``--busy``
runs one competing busy process (a Python loop) on the other core for the whole measurement, the "under
load" case.  Goal: interactive under 3 s with nothing else running.  Prints each run, the medians, and the
ratio interactive / first paint (1.0: keys act as soon as the screen shows).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pty
import select
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pyte

COLS, ROWS = 120, 36
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    first_paint: float
    interactive: float
    quit: float


def workbench_command(exe: str = "") -> list[str]:
    """The ``workbench`` script beside this python (or ``exe``: another checkout's, for a before/after)."""
    script = Path(exe) if exe else Path(sys.executable).with_name("workbench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "workbench"]


def screen_text(screen: pyte.Screen) -> str:
    return "\n".join(screen.display)


def one_run(template: str, *, no_model: bool, timeout: float, exe: str = "") -> Run:
    """Start the TUI in a pty, type ``2`` until the Analysis screen shows, then quit."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI, in a terminal of COLS x ROWS
        os.environ.update({"TERM": "xterm-256color", "COLUMNS": str(COLS), "LINES": str(ROWS)})
        args = [*workbench_command(exe), "tui", template, *(["--no-model"] if no_model else [])]
        os.execvp(args[0], args)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    screen = pyte.Screen(COLS, ROWS)
    stream = pyte.ByteStream(screen)
    start = time.monotonic()
    first_paint = interactive = float("nan")
    next_key = start
    try:
        while time.monotonic() - start < timeout:
            now = time.monotonic()
            if now >= next_key and interactive != interactive:  # NaN: not interactive yet
                os.write(fd, b"2")
                next_key = now + 0.2
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break
                stream.feed(data)
                text = screen_text(screen)
                if first_paint != first_paint and "render preview" in text and "1 Template" in text:
                    first_paint = time.monotonic() - start
                if interactive != interactive and "spec fields" in text:
                    interactive = time.monotonic() - start
                    break
        os.write(fd, b"\x11")  # ctrl+q
        asked = time.monotonic()
        deadline = asked + 10
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            ready, _, _ = select.select([fd], [], [], 0.02)
            if ready:
                with contextlib.suppress(OSError):
                    os.read(fd, 65536)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return Run(first_paint, interactive, float("inf"))
        return Run(first_paint, interactive, time.monotonic() - asked)
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("template", nargs="?", default="chatml-think-tools")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", action="store_true", help="run one competing busy process meanwhile")
    parser.add_argument("--no-model", action="store_true", help="start without loading a model")
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("--workbench", default="", help="the workbench script to run (default: this venv's)")
    args = parser.parse_args(argv)
    print(f"running {' '.join(workbench_command(args.workbench))} tui {args.template}")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    runs: list[Run] = []
    try:
        one_run(args.template, no_model=args.no_model, timeout=args.timeout, exe=args.workbench)  # warm-up
        for i in range(args.runs):
            run = one_run(args.template, no_model=args.no_model, timeout=args.timeout, exe=args.workbench)
            runs.append(run)
            print(
                f"run {i + 1}: first paint {run.first_paint:5.2f} s · interactive {run.interactive:5.2f} s"
                f" · quit {run.quit:4.2f} s"
            )
    finally:
        if busy is not None:
            busy.terminate()
            busy.wait()
    paint = statistics.median(r.first_paint for r in runs)
    ready = statistics.median(r.interactive for r in runs)
    quit_ = statistics.median(r.quit for r in runs)
    load = os.getloadavg()[0]
    print(
        f"{args.template} · {'--busy' if args.busy else 'no extra load'} · "
        f"{'no model' if args.no_model else 'model loading'} · load average {load:.1f}"
    )
    print(f"median: first paint {paint:.2f} s · interactive {ready:.2f} s · quit {quit_:.2f} s")
    print(f"ratio interactive / first paint: {ready / paint:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
