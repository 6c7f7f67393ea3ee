"""Write a current SVG screenshot of every workbench screen to ``screenshots/`` (and PNGs on request).

    .venv/bin/python scripts/screenshots.py [--template T] [--size 120x36] [--png]

The app runs headless (Textual's test driver) with no model: the Generate and Inspector screens replay the
synthetic step stream of ``workbench.tui.demo`` (or ``--session FILE``), stepped to a fixed point so the
pictures are reproducible.  Then, unless ``--no-live``, a live generation with the tiny random model shows
what only a live grammar can: the inspector's grammar pane, a "why masked" answer and the EBNF view, and
held-back text drawn as pending on Generate.  ``--png DIR`` converts each SVG with ``rsvg-convert``
(Debian: librsvg2-bin) or cairosvg, whichever is installed, for looking at them with an image viewer
(PNGs are not committed).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from workbench.template.source import DEFAULT_TEMPLATE, load_template
from workbench.tui.app import WorkbenchApp
from workbench.tui.demo import demo_parser, demo_steps

ROOT = Path(__file__).resolve().parents[1]
SCREENS = ("template", "analysis", "generate", "inspector", "export")


async def wait_workers(app: WorkbenchApp) -> None:
    """Wait until no worker runs.  A worker cancelled by a newer one of its group (a re-render started by
    the analysis) or one that failed (the app reports it) makes ``wait_for_complete`` raise: go on waiting
    for the others instead of losing every picture."""
    from textual.worker import WorkerCancelled, WorkerFailed

    for _ in range(100):
        try:
            await app.workers.wait_for_complete()
            return
        except (WorkerCancelled, WorkerFailed):
            await asyncio.sleep(0)


async def settle(app: WorkbenchApp, pilot: object) -> None:
    """Wait until no worker runs, including the ones a finished worker started (the app analyses once its
    warm-up worker has loaded the heavy modules)."""
    for _ in range(20):
        await pilot.pause()  # type: ignore[attr-defined]
        await wait_workers(app)
        await pilot.pause()  # type: ignore[attr-defined]
        if not any(w.is_running for w in app.workers):
            return


async def capture(
    template: str, size: tuple[int, int], out: Path, steps: int, suffix: str = ""
) -> list[Path]:
    source = load_template(template)
    app = WorkbenchApp(source, load_model=False, analyze=True, replay_delay=0.0)
    written: list[Path] = []
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        demo = demo_steps()
        app.install_replay(demo, demo_parser, label="demo replay (no model)")
        for _ in range(min(steps, len(demo))):
            app.action_step()
            await wait_workers(app)
        await pilot.pause()
        for mode in SCREENS:
            app.switch_mode(mode)
            await pilot.pause()
            await wait_workers(app)
            if mode == "analysis":
                await pilot.press("down", "down")  # show a probe whose renders differ
            await pilot.pause(0.3)
            path = out / f"{mode}{suffix}.svg"
            app.save_screenshot(filename=path.name, path=str(out))
            written.append(path)
    return written


async def capture_live(template: str, size: tuple[int, int], out: Path, suffix: str = "") -> list[Path]:
    """The inspector answering "why" on a live generation with the tiny random model (its tokens are noise;
    the grammar's answers are real): the grammar pane, a "why masked" answer, the EBNF view, and the
    Generate screen with held-back text drawn as pending."""
    from textual.widgets import Checkbox, Input, Select

    app = WorkbenchApp(load_template(template), model="tiny", analyze=True, replay_delay=0.0)
    written: list[Path] = []

    async def settle() -> None:
        await pilot.pause()
        await wait_workers(app)
        await pilot.pause()

    async with app.run_test(size=size) as pilot:
        app.ensure_model()  # the model loads on demand
        for _ in range(600):
            if app.workspace.model_state in ("ready", "failed") and app.workspace.spec is not None:
                break
            await asyncio.sleep(0.1)
        if app.workspace.model_state != "ready":
            print(f"live screenshots skipped: {app.workspace.model_notice}", file=sys.stderr)
            return written
        app.switch_mode("generate")
        await settle()
        screen = app.screen
        screen.query_one("#tool-choice", Select).value = "required"
        screen.query_one("#start-paused", Checkbox).value = True
        chat = screen.query_one("#chat", Input)
        chat.value = "What is the weather in Paris?"
        chat.focus()
        await pilot.press("enter")
        await settle()
        app._control("force", "<tool_call>")
        await settle()
        app._control("step")
        await settle()
        await pilot.pause(0.3)
        path = out / f"generate-pending{suffix}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        written.append(path)
        app.switch_mode("inspector")
        await settle()
        await settle()
        app._control("why", "Hello")
        await settle()
        app.clear_notifications()
        await pilot.pause(0.3)
        path = out / f"inspector-why{suffix}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        written.append(path)
        await pilot.press("g")
        await settle()
        await pilot.pause(0.3)
        path = out / f"inspector-grammar{suffix}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        written.append(path)
    return written


async def capture_conversation(
    template: str, size: tuple[int, int], out: Path, suffix: str = ""
) -> list[Path]:
    """A live conversation with the tiny random model on Generate: a system prompt, a user turn, the
    model's call, a tool result typed with ``t`` and the next assistant turn.  The tools' arguments are
    enums, so a random model's call is short and complete."""
    import json

    from textual.widgets import Checkbox, Input, Select

    app = WorkbenchApp(load_template(template), model="tiny", analyze=True, replay_delay=0.0)
    written: list[Path] = []
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}},
                    "required": ["city"],
                },
            },
        }
    ]

    async def settle() -> None:
        await pilot.pause()
        await wait_workers(app)
        await pilot.pause()

    async with app.run_test(size=size) as pilot:
        app.ensure_model()  # the model loads on demand
        for _ in range(600):
            if app.workspace.model_state in ("ready", "failed") and app.workspace.spec is not None:
                break
            await asyncio.sleep(0.1)
        if app.workspace.model_state != "ready":
            print(f"conversation screenshot skipped: {app.workspace.model_notice}", file=sys.stderr)
            return written
        app.workspace.tools_json = json.dumps(tools)
        app.switch_mode("generate")
        await settle()
        screen = app.screen
        screen.query_one("#system", Input).value = "You are a weather assistant."
        screen.query_one("#tool-choice", Select).value = "tool:get_weather"
        screen.query_one("#parallel", Checkbox).value = False
        chat = screen.query_one("#chat", Input)
        chat.value = "What is the weather in Paris?"
        chat.focus()
        await pilot.press("enter")
        await settle()
        await pilot.press("t")
        await settle()
        app.screen.query_one("#tool-result", Input).value = '{"temp_c": 18, "sky": "cloudy"}'
        await pilot.press("enter")
        await settle()
        app.clear_notifications()
        await pilot.pause(0.3)
        path = out / f"generate-conversation{suffix}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        written.append(path)
    return written


async def capture_switches(size: tuple[int, int], out: Path, suffix: str = "") -> list[Path]:
    """The template switches of ``templates/new-formats/effort-switches.jinja``: the Analysis screen's list
    of what each value changes, and the Template screen's Kwargs tab with ``reasoning_effort="none"`` picked
    (the preview then ends in the empty reasoning block that value writes)."""
    from textual.widgets import Checkbox, Select, TabbedContent

    source = load_template(str(ROOT / "templates" / "new-formats" / "effort-switches.jinja"))
    app = WorkbenchApp(source, load_model=False, analyze=True, replay_delay=0.0, start_mode="analysis")
    written: list[Path] = []
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.pause(0.3)
        path = out / f"analysis-switches{suffix}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        written.append(path)
        app.switch_mode("template")
        await pilot.pause()
        app.screen.query_one("#inputs", TabbedContent).active = "tab-kwargs"
        app.screen.query_one("#kw-agp", Checkbox).value = True
        await pilot.pause()
        app.screen.query_one("#kw-sw-reasoning_effort", Select).value = '"none"'
        await pilot.pause()
        await wait_workers(app)
        await pilot.pause(0.3)
        path = out / f"template-switches{suffix}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        written.append(path)
    return written


def _plain_spaces(svg_text: str) -> str:
    """Textual writes spaces as ``&#160;``; rsvg-convert collapses those at the start of a text run, which
    shifts indentation in the PNG.  Real spaces with ``xml:space="preserve"`` render as in a browser."""
    return svg_text.replace("&#160;", " ").replace("<svg ", '<svg xml:space="preserve" ', 1)


def to_png(svg: Path, folder: Path) -> Path | None:
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / svg.with_suffix(".png").name
    fixed = folder / (svg.name + ".tmp.svg")
    fixed.write_text(_plain_spaces(svg.read_text(encoding="utf-8")), encoding="utf-8")
    try:
        if shutil.which("rsvg-convert"):
            subprocess.run(["rsvg-convert", "-o", str(png), str(fixed)], check=True)
            return png
        try:
            import cairosvg  # type: ignore[import-not-found]
        except ImportError:
            return None
        cairosvg.svg2png(url=str(fixed), write_to=str(png))
        return png
    finally:
        fixed.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", default=DEFAULT_TEMPLATE)
    parser.add_argument("--size", default="120x36", help="WIDTHxHEIGHT (also try 80x24)")
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument("--steps", type=int, default=72, help="demo steps to take before the pictures")
    parser.add_argument("--suffix", default="", help="appended to each file name, e.g. -80x24")
    parser.add_argument(
        "--no-live", action="store_true", help="skip the live inspector pictures (tiny random model)"
    )
    parser.add_argument(
        "--png",
        metavar="DIR",
        default=None,
        help="also write PNGs to DIR for looking at them (rsvg-convert or cairosvg)",
    )
    args = parser.parse_args(argv)
    width, height = (int(x) for x in args.size.lower().split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = asyncio.run(capture(args.template, (width, height), out, args.steps, args.suffix))
    written += asyncio.run(capture_switches((width, height), out, args.suffix))
    if not args.no_live:
        written += asyncio.run(capture_live(args.template, (width, height), out, args.suffix))
        written += asyncio.run(capture_conversation(args.template, (width, height), out, args.suffix))
    for svg in written:
        line = str(svg)
        if args.png:
            png = to_png(svg, Path(args.png))
            line += f"  ->  {png}" if png else "  (no rsvg-convert or cairosvg: PNG skipped)"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
