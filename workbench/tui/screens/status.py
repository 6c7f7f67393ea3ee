"""The one-line engine status shared by the Generate and Inspector screens."""

from __future__ import annotations

from rich.text import Text

from workbench.generation.step import Step
from workbench.tui.steps import ReplayDriver
from workbench.tui.workspace import Workspace


def recorded_rate(steps: tuple[Step, ...]) -> float:
    """Tokens per second from the steps' own timings (forward, mask, sample, parse...).

    Wall-clock time between steps would count the user's pauses and, in a replay, says nothing about the
    model; the timings measure what the engine spent per step.
    """
    total_ms = sum(sum(s.timings_ms.values()) for s in steps)
    return 1000.0 * len(steps) / total_ms if total_ms > 0 else 0.0


def engine_status(ws: Workspace) -> Text:
    """Run state, steps, constraint, speed and model, most important first (narrow terminals cut the end)."""
    out = Text()
    driver = ws.driver
    if ws.running:
        out.append("● running", style="bold #e0af68")
    elif driver is not None and driver.finished:
        out.append("■ finished", style="bold")
    elif driver is not None:
        out.append("‖ paused", style="bold")
    else:
        out.append("idle", style="dim")
    out.append(" · ", style="dim")
    out.append(f"{len(ws.steps)} steps")
    out.append(" · ", style="dim")
    if ws.constrained:
        out.append("constrained", style="bold #b8f2b0")
    else:
        out.append("unconstrained", style="bold #ffb4a2")
    out.append(" · ", style="dim")
    recent = ws.steps.all()[-32:]
    rate = recorded_rate(recent) or ws.steps.tokens_per_second()
    out.append(f"{rate:.1f} tok/s" + (" rec" if isinstance(driver, ReplayDriver) else ""))
    out.append(" · ", style="dim")
    model = ws.model_name or {"loading": "loading…", "failed": "not loaded", "skipped": "none"}.get(
        ws.model_state, "none"
    )
    if driver is not None and driver.label and driver.label != ws.model_name:
        model = driver.label
    out.append("model ", style="dim")
    out.append(model, style="bold")
    return out
