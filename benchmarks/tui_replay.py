"""Replay a recorded 2,000-step stream through the Generate and Inspector screens, headless.

    .venv/bin/python benchmarks/tui_replay.py [--session FILE] [--steps 2000] [--rate 200]

Two runs per screen:

* **flat out**: the engine worker hands steps over as fast as it can; the screen coalesces
  ``StepsAdvanced`` messages and draws whatever is new.  Prints steps/s absorbed and screen updates/s.
* **paced** at ``--rate`` tokens/s (the goal is 200): prints the screen's lag behind the producer (steps
  not yet drawn, sampled at every update) and how long the screen needed to show the last step after the
  producer finished.  "Keeps up" means the lag stays bounded and the catch-up is one frame or so.

The stream is a recorded session when given (``sessions/*.json``), else the synthetic stream of
``workbench.tui.demo`` (same Step shape: events, candidates, mask strip).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.generation.step import Step
from workbench.runtime.parsing import StreamParser
from workbench.template.source import TemplateSource
from workbench.tui.app import WorkbenchApp
from workbench.tui.demo import DEMO_TEMPLATE, demo_parser, demo_steps


def load_steps(session: str | None, n: int) -> tuple[list[Step], Callable[[], StreamParser], str]:
    """The steps to replay, a parser for their format, and a description."""
    if session:
        from workbench.session import load_session, new_parser

        loaded = load_session(Path(session))
        recorded = list(loaded.steps)
        steps = [recorded[i % len(recorded)] for i in range(n)]
        return steps, lambda: new_parser(loaded), f"session {session} ({len(recorded)} steps, cycled to {n})"
    return demo_steps(n), demo_parser, f"synthetic demo stream ({n} steps)"


async def replay(
    steps: list[Step], new_parser: Callable[[], StreamParser], mode: str, delay: float
) -> dict[str, Any]:
    source = TemplateSource(text=DEMO_TEMPLATE, name="bench", origin="benchmark")
    app = WorkbenchApp(source, load_model=False, analyze=False, start_mode=mode, replay_delay=delay)
    updates: list[tuple[float, int, int]] = []  # (time, produced, drawn)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        original = screen.sync

        def counting_sync(topics: set[str]) -> None:
            original(topics)
            if "steps" in topics:
                updates.append((time.perf_counter(), len(app.workspace.steps), _drawn(screen)))

        screen.sync = counting_sync  # type: ignore[method-assign]
        app.install_replay(steps, new_parser, label="bench")
        await pilot.pause()
        updates.clear()
        start = time.perf_counter()
        app.action_run()
        while len(app.workspace.steps) < len(steps):
            await asyncio.sleep(0.005)
        produced_at = time.perf_counter()
        while _drawn(screen) < len(steps):
            await asyncio.sleep(0.001)
        drawn_at = time.perf_counter()
        await app.workers.wait_for_complete()
    lags = [p - d for _, p, d in updates]
    return {
        "seconds": drawn_at - start,
        "steps_per_s": len(steps) / (drawn_at - start),
        "updates": len(updates),
        "updates_per_s": len(updates) / (drawn_at - start),
        "catch_up_ms": 1000 * (drawn_at - produced_at),
        "lag_median": statistics.median(lags) if lags else 0,
        "lag_max": max(lags) if lags else 0,
    }


def _drawn(screen: Any) -> int:
    """How many steps the screen has drawn (Generate: stream; Inspector: timeline)."""
    return int(getattr(screen, "_seen_steps", 0) or getattr(screen, "_timeline_len", 0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--session", default=None)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0, help="paced run, tokens per second")
    args = parser.parse_args(argv)
    steps, new_parser, what = load_steps(args.session, args.steps)
    print(f"stream: {what}; terminal 120x36, headless")
    print(
        f"{'screen':<10} {'run':<12} {'steps/s':>9} {'updates':>8} {'upd/s':>7} {'lag med':>8} "
        f"{'lag max':>8} {'catch-up':>9}"
    )
    for mode in ("generate", "inspector"):
        for label, delay in (("flat out", 0.0), (f"{args.rate:.0f} tok/s", 1.0 / args.rate)):
            r = asyncio.run(replay(steps, new_parser, mode, delay))
            print(
                f"{mode:<10} {label:<12} {r['steps_per_s']:9.0f} {r['updates']:8d} {r['updates_per_s']:7.1f} "
                f"{r['lag_median']:8.0f} {r['lag_max']:8.0f} {r['catch_up_ms']:7.0f}ms"
            )
    print(
        "steps/s: steps drawn per second of wall time; updates: screen redraws of new steps (coalesced); "
        "lag: steps produced but not yet drawn, at each redraw; catch-up: last step produced -> drawn."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
