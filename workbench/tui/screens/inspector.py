"""Decode inspector: for one step, what the grammar allowed, what the model wanted, and what was chosen.

The selected step follows the newest one until the user scrubs the timeline (left/right); ``end`` follows
again.  All numbers come from the ``Step`` records: the inspector never sees a raw vocabulary mask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static

from workbench.engine.step import Step
from workbench.tui.palette import ALLOWED_STYLE, MASKED_STYLE, SPAN_STYLES, visible
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.status import engine_status
from workbench.tui.widgets.decode import HeatStrip, MaskGauge, Timeline


def step_facts(step: Step) -> Table:
    """The selected step's facts as a two-column grid (pure)."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    token = Text.assemble(
        (visible(step.token_text) or "∅", "bold black on #e4e4e4"), (f"  id {step.token_id}", "dim")
    )
    grid.add_row("token", token)
    grid.add_row("forced", Text("yes — chosen by you", style="bold #e0af68") if step.forced else Text("no"))
    region = Text.assemble(
        (f" {step.region} ", "black on #7fd1c7" if step.region == "free" else "black on #e0af68"),
        (" no mask while free" if step.region == "free" else " grammar engaged", "dim"),
    )
    grid.add_row("region", region)
    grid.add_row(
        "mask", Text("applied", style="#b8f2b0") if step.constrained else Text("lifted", style="#ffb4a2")
    )
    grid.add_row(
        "jump-fwd",
        Text(visible(step.jump_forward), style="bold") if step.jump_forward else Text("—", style="dim"),
    )
    kinds = Text()
    for ev in step.events:
        kinds.append(visible(ev.text), style=SPAN_STYLES.get(ev.kind, ""))
        kinds.append(f" {ev.kind}  ", style="dim")
    grid.add_row("events", kinds if kinds else Text("— (held back)", style="dim"))
    if step.timings_ms:
        grid.add_row("ms", " ".join(f"{k} {v:.1f}" for k, v in step.timings_ms.items()))
    if step.note:
        grid.add_row("note", step.note)
    return grid


class InspectorScreen(WorkbenchScreen):
    MODE = "inspector"
    TITLE_TEXT = "Decode inspector"
    CSS_PATH = str(Path(__file__).parent.parent / "inspector.tcss")
    TOPICS = ("steps", "engine", "model")
    BINDINGS: ClassVar[list[BindingType]] = [
        *WorkbenchScreen.BINDINGS,
        Binding("space", "app.step", "Step"),
        Binding("r", "app.run", "Run"),
        Binding("p", "app.pause", "Pause"),
        Binding("backspace", "app.rewind", "Rewind"),
        Binding("f", "app.force", "Force"),
        Binding("c", "app.toggle_constraint", "Constraint"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.selected = -1  # -1: follow the newest step
        self._shown: tuple[int, int] | None = None
        self._timeline_len = 0
        self._epoch = -1

    def compose_body(self) -> ComposeResult:
        yield Static(id="insp-status")
        yield MaskGauge(id="gauge")
        with Horizontal(id="insp-main"):
            with Vertical(id="facts-pane") as facts:
                facts.border_title = "step"
                yield Static(id="facts")
            table: DataTable[Any] = DataTable(id="candidates", cursor_type="row", zebra_stripes=False)
            table.border_title = "top candidates before masking"
            yield table
        yield HeatStrip(id="heat")
        yield Timeline(id="timeline")

    def on_mount(self) -> None:
        table = self.query_one("#candidates", DataTable)
        # Fixed widths: auto widths would follow whichever steps happened to be drawn before.
        for label, width in (("#", 2), ("token", 14), ("mask", 7), ("id", 7), ("logit", 6), ("prob", 6)):
            table.add_column(label, width=width)
        super().on_mount()
        self.query_one("#timeline", Timeline).focus()

    def sync(self, topics: set[str]) -> None:
        ws = self.ws
        self.query_one("#insp-status", Static).update(engine_status(ws))
        self.set_status("no steps yet" if not len(ws.steps) else f"{len(ws.steps)} steps")
        if topics & {"steps", "engine"}:
            self._update_timeline()
            self._show_selected()

    def _update_timeline(self) -> None:
        """Timeline data grows by appending; a rewind (new epoch) rebuilds it."""
        ws = self.ws
        timeline = self.query_one("#timeline", Timeline)
        view = ws.steps.view_since(self._timeline_len, self._epoch)
        fr = [] if view.rebuilt else list(timeline.fractions)
        free = [] if view.rebuilt else list(timeline.free)
        for s in view.new:
            fr.append(s.allowed_count / s.vocab_size if s.vocab_size else 1.0)
            free.append(s.region == "free" or not s.constrained)
        self._timeline_len, self._epoch = view.total, view.epoch
        if self.selected >= view.total:
            self.selected = -1
        timeline.free = tuple(free)
        timeline.fractions = tuple(fr)
        timeline.selected = self.selected

    def _show_selected(self) -> None:
        ws = self.ws
        n = len(ws.steps)
        index = self.selected if self.selected >= 0 else n - 1
        step = ws.steps.get(index)
        key = (index, ws.steps.epoch)
        if key == self._shown:
            return
        self._shown = key
        gauge = self.query_one("#gauge", MaskGauge)
        heat = self.query_one("#heat", HeatStrip)
        table = self.query_one("#candidates", DataTable)
        facts = self.query_one("#facts", Static)
        table.clear()
        if step is None:
            gauge.allowed, gauge.vocab = 0, 0
            heat.strip = ()
            facts.update(
                Text(
                    "No steps yet.\n\nSend a message on Generate (3), or open a session;\n"
                    "then space steps, r runs, backspace rewinds.",
                    style="dim",
                )
            )
            return
        gauge.vocab, gauge.allowed = step.vocab_size, step.allowed_count
        heat.vocab, heat.strip = step.vocab_size, step.mask_strip
        self.query_one("#facts-pane").border_title = f"step {index + 1} of {n}"
        facts.update(step_facts(step))
        for rank, c in enumerate(step.candidates, 1):
            style = MASKED_STYLE if not c.allowed else ("bold reverse" if c.token_id == step.token_id else "")
            mark = Text("allowed", style=ALLOWED_STYLE) if c.allowed else Text("masked", style=MASKED_STYLE)
            table.add_row(
                Text(str(rank), style=style),
                Text(repr(c.text), style=style),
                mark,
                Text(str(c.token_id), style=style),
                Text(f"{c.logit:.2f}", style=style),
                Text(f"{c.prob:.3f}", style=style),
            )

    @on(Timeline.Selected)
    def _scrub(self, event: Timeline.Selected) -> None:
        n = len(self.ws.steps)
        self.selected = -1 if event.index >= n - 1 else event.index
        self.query_one("#timeline", Timeline).selected = self.selected
        self._show_selected()
