"""Analysis screen: the probe table, variant A | B of the selected probe, the markers and modes, warnings.

Selecting a probe shows its two renders side by side, split into common prefix, the parts only in A and
only in B, and the common suffix, each in its own colour: this is where a marker comes from.  A marker (or a
mode) can be edited by hand; the edited spec is checked, marked as edited, and re-validated.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static

from workbench.analysis import Analysis, ProbeResult
from workbench.spec import FormatSpec
from workbench.tui.messages import RequestSpecEdit
from workbench.tui.palette import ERROR_STYLE, visible
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.modals import EditFieldScreen
from workbench.tui.widgets.diff_view import DiffPane, diff_legend
from workbench.tui.widgets.notice import Notice

# The spec parts shown in the markers table and the probe family (id prefix) that decides each.
PARTS: tuple[tuple[str, str], ...] = (("reasoning", "R"), ("content", "C"), ("tools", "T"), ("prompt", ""))
MODE_FIELDS = {"reasoning": "mode", "content": "mode", "tools": "format"}


def spec_rows(spec: FormatSpec, original: FormatSpec | None) -> list[tuple[str, str, bool]]:
    """(dotted path, shown value, changed by hand) for every mode and non-empty marker field (pure)."""
    rows: list[tuple[str, str, bool]] = []
    for part, _ in PARTS:
        obj = getattr(spec, part)
        orig = getattr(original, part) if original is not None else obj
        for f in fields(obj):
            value = getattr(obj, f.name)
            is_mode = MODE_FIELDS.get(part) == f.name
            if isinstance(value, (bool, tuple)):
                if not value:
                    continue
                shown = str(value)
            elif isinstance(value, str):
                if not value and not is_mode:
                    continue
                shown = visible(value)
            else:
                continue
            rows.append((f"{part}.{f.name}", shown, value != getattr(orig, f.name)))
    return rows


def establishing_probes(analysis: Analysis, family: str) -> list[str]:
    """Ids of the probes of one family whose two renders differed: the evidence a mode rests on."""
    return [
        p.id
        for p in analysis.probes
        if p.id.startswith(family)
        and p.diff is not None
        and not p.diff.identical
        and not p.outcome.startswith("not needed")
    ]


class AnalysisScreen(WorkbenchScreen):
    MODE = "analysis"
    TITLE_TEXT = "Analysis"
    CSS_PATH = str(Path(__file__).parent.parent / "analysis.tcss")
    TOPICS = ("analysis", "spec", "validation", "template")
    BINDINGS: ClassVar[list[BindingType]] = [
        *WorkbenchScreen.BINDINGS,
        Binding("a", "app.analyze", "Re-analyse"),
        Binding("e", "edit_marker", "Edit marker"),
        Binding("v", "app.validate", "Validate"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def compose_body(self) -> ComposeResult:
        yield Notice(id="analysis-notice", classes="-hidden")
        with Vertical(id="analysis-main"):
            with Horizontal(id="analysis-top"):
                table: DataTable[Any] = DataTable(id="probes", cursor_type="row", zebra_stripes=True)
                table.border_title = "probes"
                yield table
                with Vertical(id="analysis-right"):
                    markers: DataTable[Any] = DataTable(id="markers", cursor_type="row")
                    markers.border_title = "markers and modes (e: edit)"
                    yield markers
                    yield Static(id="warnings")
            yield Static(diff_legend(), id="diff-legend")
            yield DiffPane(id="diff")

    def on_mount(self) -> None:
        # Fixed widths keep the short, telling columns (outcome, source probe) in view; long cells are cut
        # with an ellipsis and shown whole in the diff titles or the edit dialog.
        probes = self.query_one("#probes", DataTable)
        for label, width in (("id", 4), ("outcome", 34), ("question", 60)):
            probes.add_column(label, width=width)
        markers = self.query_one("#markers", DataTable)
        for label, width in (("field", 22), ("value", 22), ("from", 12)):
            markers.add_column(label, width=width)
        super().on_mount()

    # ------------------------------------------------------------------ drawing
    def sync(self, topics: set[str]) -> None:
        ws = self.ws
        notice = self.query_one("#analysis-notice", Notice)
        main = self.query_one("#analysis-main")
        if ws.analysis is None:
            main.display = ws.spec is not None
            if ws.analysis_running:
                notice.show("Analysing the template… (probes render in a worker; the UI stays live)", "empty")
            elif ws.analysis_error:
                notice.show(f"Analysis: {ws.analysis_error}", "error")
            else:
                notice.show("No analysis yet: press a to analyse the template.", "empty")
        else:
            main.display = True
            if ws.analysis_error:
                notice.show(
                    f"Last re-analysis failed: {ws.analysis_error} (showing the previous one)", "error"
                )
            elif ws.template_dirty:
                notice.show("The template changed since this analysis: press a to re-analyse.", "empty")
            else:
                notice.hide()
        if "analysis" in topics:
            self._fill_probes()
        if topics & {"analysis", "spec"}:
            self._fill_markers()
        self._fill_warnings()
        self._status()

    def _status(self) -> None:
        ws = self.ws
        spec = "no spec" if ws.spec is None else ("spec edited" if ws.spec_edited else "spec from analysis")
        parts = [spec]
        if ws.validation_summary:
            parts.append(ws.validation_summary)
        if ws.analysis_running:
            parts.append("analysing…")
        self.set_status(" · ".join(parts))

    def _fill_probes(self) -> None:
        table = self.query_one("#probes", DataTable)
        table.clear()
        for p in self._probes():
            outcome = Text(p.outcome, overflow="ellipsis", no_wrap=True)
            if p.error:
                outcome = Text(f"error: {p.error}", style=ERROR_STYLE)
            question = Text(p.question, overflow="ellipsis", no_wrap=True)
            table.add_row(p.id, outcome, question)
        if table.row_count:
            table.move_cursor(row=0)
            self._show_probe(0)

    def _fill_markers(self) -> None:
        ws = self.ws
        table = self.query_one("#markers", DataTable)
        table.clear()
        if ws.spec is None:
            return
        original = ws.analysis.spec if ws.analysis is not None else None
        for path, shown, edited in spec_rows(ws.spec, original):
            part = path.split(".")[0]
            family = dict(PARTS)[part]
            if path.split(".")[1] in ("mode", "format") and ws.analysis is not None and family:
                source = ", ".join(establishing_probes(ws.analysis, family)) or "default"
            else:
                source = ""
            label = Text(path, style="bold #e0af68" if edited else "")
            value = Text(shown, style="reverse" if edited else "", overflow="ellipsis", no_wrap=True)
            origin = Text("✎ edited", style="#e0af68") if edited else Text(source, style="dim")
            table.add_row(label, value, origin, key=path)

    def _fill_warnings(self) -> None:
        warnings = self.ws.analysis.warnings if self.ws.analysis is not None else []
        box = self.query_one("#warnings", Static)
        if not warnings:
            box.update(Text("no warnings", style="#8a8f98"))
            return
        out = Text()
        for w in warnings:
            out.append("⚠ ", style="#e0af68")
            out.append(w + "\n")
        box.update(out)

    def _probes(self) -> list[ProbeResult]:
        return self.ws.analysis.probes if self.ws.analysis is not None else []

    def _show_probe(self, row: int) -> None:
        probes = self._probes()
        if not 0 <= row < len(probes):
            return
        p = probes[row]
        pane = self.query_one("#diff", DiffPane)
        diff = p.diff
        # The titles are the variants' descriptions from the probe table.
        a_title, b_title = p.variant_a.description, p.variant_b.description
        if diff is not None:
            pane.show(diff.prefix, diff.left, diff.right, diff.suffix, title_a=a_title, title_b=b_title)
        else:
            reason = p.error or "no diff for this probe"
            pane.show_text(p.render_a or f"(no render: {reason})", p.render_b or f"(no render: {reason})")

    @on(DataTable.RowHighlighted, "#probes")
    def _probe_selected(self, event: DataTable.RowHighlighted) -> None:
        self._show_probe(event.cursor_row)

    # ------------------------------------------------------------------ editing
    @on(DataTable.RowSelected, "#markers")
    def _marker_chosen(self, event: DataTable.RowSelected) -> None:
        self._edit(str(event.row_key.value))

    def action_edit_marker(self) -> None:
        table = self.query_one("#markers", DataTable)
        if not table.row_count:
            self.notify("no spec to edit yet", severity="warning")
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        self._edit(str(key.value))

    def _edit(self, path: str) -> None:
        spec = self.ws.spec
        if spec is None:
            return

        def done(edited: FormatSpec | None) -> None:
            if edited is not None and edited != spec:
                self.post_message(RequestSpecEdit(edited, note=f"{path} changed; re-validating"))

        self.app.push_screen(EditFieldScreen(spec, path), done)
