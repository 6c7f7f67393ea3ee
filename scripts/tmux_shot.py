"""Save what a tmux pane shows as an SVG, colours included.

The TUI's own screenshots (scripts/screenshots.py) come from a headless app; a walkthrough recorded in a
real terminal needs pictures of that terminal instead. `tmux capture-pane -e` gives the pane's text with
its ANSI colour codes, and rich turns that into the same kind of SVG Textual writes.

    python scripts/tmux_shot.py SESSION OUT.svg [--title TITLE]
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text


def pane_size(target: str) -> tuple[int, int]:
    """The pane's width and height, so the picture has the terminal's shape and not rich's default."""
    out = subprocess.run(
        ["tmux", "display-message", "-p", "-t", target, "#{pane_width} #{pane_height}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return int(out[0]), int(out[1])


def capture(target: str) -> str:
    """The pane as text with escape sequences (-e), every line (-J would join wrapped lines: not wanted)."""
    return subprocess.run(
        ["tmux", "capture-pane", "-e", "-p", "-t", target], check=True, capture_output=True, text=True
    ).stdout


def to_svg(ansi: str, width: int, height: int, title: str) -> str:
    # record=True keeps what is printed; the terminal output itself goes nowhere
    console = Console(record=True, width=width, file=io.StringIO(), color_system="truecolor")
    lines = ansi.rstrip("\n").split("\n")[:height]
    for line in lines:
        console.print(Text.from_ansi(line, no_wrap=True, end=""), overflow="crop", no_wrap=True)
    return console.export_svg(title=title)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", help="tmux target (session name or pane id)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    try:
        width, height = pane_size(args.target)
        svg = to_svg(capture(args.target), width, height, args.title or args.target)
    except (subprocess.CalledProcessError, FileNotFoundError) as err:
        print(f"tmux_shot: cannot capture {args.target!r}: {err}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg, encoding="utf-8")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
