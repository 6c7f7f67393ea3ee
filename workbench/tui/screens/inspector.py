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

from workbench.generation.step import Step
from workbench.tui.inspect_views import (
    GRAMMAR_KEYS,
    Row,
    allowed_rows,
    allowed_title,
    candidate_rows,
    grammar_text,
)
from workbench.tui.palette import SPAN_STYLES, visible
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.status import engine_status
from workbench.tui.widgets.decode import HeatStrip, MaskGauge, Timeline
from workbench.tui.widgets.panes import text_pane


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
    TOPICS = ("steps", "engine", "model", "grammar")
    BINDINGS: ClassVar[list[BindingType]] = [
        *WorkbenchScreen.BINDINGS,
        Binding("space", "app.step", "Step"),
        Binding("r", "app.run", "Run"),
        Binding("p", "app.pause", "Pause"),
        Binding("backspace", "app.rewind", "Rewind"),
        Binding("f", "app.force", "Force"),
        Binding("c", "app.toggle_constraint", "Constraint"),
        Binding("j", "app.jump_forward", "Jump fwd"),
        Binding("w", "why", "Why"),
        Binding("t", "app.try_string", "Test"),
        Binding("g", "grammar", "Grammar"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.selected = -1  # -1: follow the newest step
        self._shown: tuple[int, int, int] | None = None
        self._timeline_len = 0
        self._epoch = -1
        self._asked: tuple[int, int] = (-1, -1)
        self.expanded = False  # the grammar pane fills the screen with the EBNF
        self.grammar_plain = ""  # what the grammar pane shows, as text (tests read it)

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.wb.ensure_model()  # the model loads when a screen that uses it first opens

    def compose_body(self) -> ComposeResult:
        yield Static(id="insp-status")
        yield MaskGauge(id="gauge")
        with Horizontal(id="insp-main"):
            with Vertical(id="insp-left"):
                with Vertical(id="facts-pane") as facts:
                    facts.border_title = "step"
                    yield Static(id="facts")
                yield text_pane("grammar-pane", "grammar", "grammar", subtitle=GRAMMAR_KEYS)
            with Vertical(id="insp-right"):
                table: DataTable[Any] = DataTable(id="candidates", cursor_type="row", zebra_stripes=False)
                table.border_title = "top candidates before masking"
                yield table
                allowed: DataTable[Any] = DataTable(id="allowed", cursor_type="row", zebra_stripes=False)
                allowed.border_title = "allowed tokens"
                yield allowed
        yield HeatStrip(id="heat")
        yield Timeline(id="timeline")

    def on_mount(self) -> None:
        table = self.query_one("#candidates", DataTable)
        # Fixed widths: auto widths would follow whichever steps happened to be drawn before.
        for label, width in (("#", 2), ("token", 14), ("mask", 7), ("id", 7), ("logit", 6), ("prob", 6)):
            table.add_column(label, width=width)
        allowed = self.query_one("#allowed", DataTable)
        for label, width in (("#", 2), ("token", 14), ("id", 7), ("p", 6)):
            allowed.add_column(label, width=width)
        super().on_mount()
        self.query_one("#timeline", Timeline).focus()

    def sync(self, topics: set[str]) -> None:
        ws = self.ws
        self.query_one("#insp-status", Static).update(engine_status(ws))
        self.set_status("no steps yet" if not len(ws.steps) else f"{len(ws.steps)} steps")
        if topics & {"steps", "engine"}:
            self._update_timeline()
            self._show_selected()
            self._ask_where()
        if topics & {"steps", "engine", "grammar"}:
            self._show_grammar()

    # ------------------------------------------------------------------ the grammar pane
    def _ask_where(self) -> None:
        """Ask the live grammar where it is once per position (not while running: it would wait)."""
        ws = self.ws
        n = len(ws.steps)
        key = (self.selected if 0 <= self.selected < n - 1 else n, ws.steps.epoch)  # the position asked about
        driver = ws.driver
        if driver is None or not driver.can_ask or ws.running or key == self._asked or key == ws.grammar_at:
            return
        self._asked = key
        self.wb.ask_where()

    def _show_grammar(self) -> None:
        ws = self.ws
        n = len(ws.steps)
        index = self.selected if self.selected >= 0 else n - 1
        step = ws.steps.get(index)
        newest = index == n - 1 or n == 0
        at = n if newest else index  # newest: the next token; scrubbed: that step's own choice
        live = ws.grammar_position if ws.grammar_at == (at, ws.steps.epoch) else None
        note = ""
        if live is None and ws.driver is not None and not ws.driver.can_ask:
            note = "a replay has no live grammar: load a model to ask why"
        elif not newest and live is not None:
            note = f"at step {index + 1}'s choice: the grammar replayed to it (w and t ask here too)"
        elif not newest:
            note = "replaying the grammar to this step…"
        text = grammar_text(
            step,
            live=live,
            answer=ws.grammar_answer,
            answer_ok=ws.grammar_answer_ok,
            expanded=self.expanded,
            note=note,
            label="next token" if newest else f"step {index + 1}",
        )
        self.grammar_plain = text.plain
        self.query_one("#grammar", Static).update(text)

    def action_grammar(self) -> None:
        """Show the grammar (EBNF) across the screen, or go back to the tables."""
        self.expanded = not self.expanded
        self.query_one("#insp-main").set_class(self.expanded, "-grammar")
        self.wb.changed("grammar")

    def action_why(self) -> None:
        """ "Why is this token masked?": for the token highlighted in a table, or one typed."""
        token = ""
        for table_id in ("#allowed", "#candidates"):
            table = self.query_one(table_id, DataTable)
            if table.has_focus and table.row_count:
                token = str(table.get_row_at(table.cursor_row)[2 if table_id == "#allowed" else 3])
        if not token:
            step = self.ws.steps.get(self.selected if self.selected >= 0 else len(self.ws.steps) - 1)
            masked = [c for c in (step.candidates if step else ()) if not c.allowed]
            token = str(masked[0].token_id) if masked else ""
        self.wb.action_why_masked(token)

    # ------------------------------------------------------------------ timeline and tables
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
        key = (index, ws.steps.epoch, n)
        if key == self._shown:
            return
        self._shown = key
        gauge = self.query_one("#gauge", MaskGauge)
        heat = self.query_one("#heat", HeatStrip)
        table = self.query_one("#candidates", DataTable)
        allowed = self.query_one("#allowed", DataTable)
        facts = self.query_one("#facts", Static)
        table.clear()
        allowed.clear()
        if step is None:
            gauge.allowed, gauge.vocab = 0, 0
            heat.strip = ()
            allowed.border_title = "allowed tokens"
            facts.update(
                Text(
                    "No steps yet.\n\nSend a message on Generate (3), or open a session;\n"
                    "then space steps, r runs, backspace rewinds.",
                    style="dim",
                )
            )
            return
        gauge.vocab, gauge.allowed = step.vocab_size, step.allowed_count
        heat.vocab, heat.chosen, heat.constrained = step.vocab_size, step.token_id, step.constrained
        heat.strip = step.mask_strip
        self.query_one("#facts-pane").border_title = f"step {index + 1} of {n}"
        facts.update(step_facts(step))
        self._fill(table, candidate_rows(step))
        allowed.border_title = allowed_title(step)
        self._fill(allowed, allowed_rows(step))

    @staticmethod
    def _fill(table: DataTable[Any], rows: list[Row]) -> None:
        """Fill a table and put its cursor on the chosen token (not on row 1, which may be masked)."""
        chosen = 0
        for i, row in enumerate(rows):
            table.add_row(*row.cells)
            if row.chosen:
                chosen = i
        if rows:
            table.move_cursor(row=chosen, animate=False)

    @on(Timeline.Selected)
    def _scrub(self, event: Timeline.Selected) -> None:
        n = len(self.ws.steps)
        self.selected = -1 if event.index >= n - 1 else event.index
        self.query_one("#timeline", Timeline).selected = self.selected
        self._show_selected()
        self._ask_where()  # the grammar at this step, replayed (no state change)
        self._show_grammar()
