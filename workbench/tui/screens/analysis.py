"""Analysis screen: the probe table, variant A | B of the selected probe, the markers and modes, warnings.

Selecting a probe shows its two renders side by side, split into common prefix, the parts only in A and
only in B, and the common suffix, each in its own colour: this is where a marker comes from.  A marker (or a
mode) can be edited by hand; the edited spec is checked, marked as edited, and re-validated.

The template switches the analysis found (variables other than ``enable_thinking`` that change the format,
``PromptSpec.switches``) are listed with every value tried and what it changes, so a person sees that
``reasoning_effort="none"`` closes reasoning before picking it on the Template screen's Kwargs tab.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static

from workbench.analysis import Analysis, ProbeResult
from workbench.runtime.spec import FormatSpec
from workbench.selfcheck import verdicts_from_report, warning_line
from workbench.tui.messages import RequestSpecEdit
from workbench.tui.palette import ERROR_STYLE, visible
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.modals import EditFieldScreen
from workbench.tui.spec_fields import PARTS, FieldRow, spec_rows
from workbench.tui.switches import Switch, switches_of
from workbench.tui.verdict import verdict_of
from workbench.tui.widgets.diff_view import DiffPane, diff_legend
from workbench.tui.widgets.nav import VERDICT_STYLES
from workbench.tui.widgets.notice import Notice

#: Below this many rows the screen is "short" (80x24): see analysis.tcss.
SHORT_ROWS = 30


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


#: The spec table's field column: a longer field name keeps its part and its end (:func:`_middle_cut`).
FIELD_WIDTH = 20


def _middle_cut(name: str, width: int) -> str:
    """``name`` (``part.field``) in ``width`` characters: the part, then the end of a field name too long
    for the rest, so that fields sharing a long head stay told apart (``content.…calls_start`` and
    ``content.…_calls_end``, ``prompt.…not_thinking`` and ``prompt.…hen_thinking``)."""
    if len(name) <= width:
        return name
    part, dot, field = name.rpartition(".")
    head = part + dot + "…"
    if len(head) >= width - 4:  # no room for the part: the name's end alone
        return "…" + name[len(name) - width + 1 :]
    return head + field[len(field) - (width - len(head)) :]


class AnalysisScreen(WorkbenchScreen):
    MODE = "analysis"
    TITLE_TEXT = "Analysis"
    CSS_PATH = str(Path(__file__).parent.parent / "analysis.tcss")
    TOPICS = ("analysis", "spec", "validation", "template")
    BINDINGS: ClassVar[list[BindingType]] = [
        *WorkbenchScreen.BINDINGS,
        Binding("a", "app.analyze", "Re-analyze"),
        Binding("e", "edit_marker", "Edit marker"),
        Binding("v", "app.validate", "Validate"),
        Binding("c", "app.show_cases", "Validation cases"),
        Binding("x", "app.export_validated", "Export (validated spec)"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._rows: dict[str, FieldRow] = {}

    def compose_body(self) -> ComposeResult:
        yield Notice(id="analysis-notice", classes="-hidden")
        with Vertical(id="analysis-main"):
            with Horizontal(id="analysis-top"):
                with Vertical(id="analysis-left"):
                    table: DataTable[Any] = DataTable(id="probes", cursor_type="row", zebra_stripes=True)
                    table.border_title = "probes"
                    yield table
                    switches: DataTable[Any] = DataTable(id="switches", cursor_type="row")
                    switches.border_title = "template switches (Template › Kwargs F8 sets them)"
                    yield switches
                    yield Static(id="no-switches")
                with Vertical(id="analysis-right"):
                    markers: DataTable[Any] = DataTable(id="markers", cursor_type="row")
                    markers.border_title = "spec fields (e: edit)"
                    yield markers
                    yield Static(id="field-help")
                    yield Static(id="verdict-line")
                    yield Static(id="warnings")
            yield Static(diff_legend(), id="diff-legend")
            yield DiffPane(id="diff")

    def on_resize(self, event: events.Resize) -> None:
        """Under 30 rows the layout gives the spec table and the verdict more room (analysis.tcss)."""
        self.set_class(event.size.height < SHORT_ROWS, "-short")

    def on_mount(self) -> None:
        # Fixed widths keep the short, telling columns (outcome, source probe) in view; long cells are cut
        # with an ellipsis and shown whole in the diff titles or the edit dialog.
        probes = self.query_one("#probes", DataTable)
        for label, width in (("id", 4), ("outcome", 34), ("question", 60)):
            probes.add_column(label, width=width)
        markers = self.query_one("#markers", DataTable)
        for label, width in (("field", FIELD_WIDTH), ("value", 16), ("from / allowed", 18)):
            markers.add_column(label, width=width)
        switches = self.query_one("#switches", DataTable)
        for label, width in (("switch = value", 24), ("what it changes", 48), ("starts in", 9)):
            switches.add_column(label, width=width)
        super().on_mount()

    # ------------------------------------------------------------------ drawing
    def sync(self, topics: set[str]) -> None:
        ws = self.ws
        notice = self.query_one("#analysis-notice", Notice)
        main = self.query_one("#analysis-main")
        if ws.analysis is None:
            main.display = ws.spec is not None
            if ws.analysis_running:
                notice.show("Analyzing the template… (probes render in a worker; the UI stays live)", "empty")
            elif ws.analysis_error:
                notice.show(f"Analysis: {ws.analysis_error}", "error")
            else:
                notice.show("No analysis yet: press a to analyze the template.", "empty")
        else:
            main.display = True
            if ws.analysis_error:
                notice.show(
                    f"Last re-analysis failed: {ws.analysis_error} (showing the previous one)", "error"
                )
            elif ws.template_dirty:
                notice.show("The template changed since this analysis: press a to re-analyze.", "empty")
            else:
                notice.hide()
        if "analysis" in topics:
            self._fill_probes()
        if topics & {"analysis", "spec"}:
            self._fill_markers()
            self._fill_switches()
        self._fill_warnings()
        self._status()

    def _status(self) -> None:
        ws = self.ws
        origin = f"spec from {ws.spec_origin}" if ws.spec_origin else "spec from analysis"
        spec = "no spec" if ws.spec is None else ("spec edited" if ws.spec_edited else origin)
        parts = [spec]
        if ws.analysis_running:
            parts.append("analyzing…")
        self.set_status(" · ".join(parts))
        verdict = verdict_of(ws)
        line = Text.assemble(
            (f" {verdict.label.split(' ', 1)[0]} ", VERDICT_STYLES.get(verdict.state, "bold")),
            " ",
            (verdict.text, "bold" if verdict.state in ("validated", "limited", "not_validated") else "dim"),
        )
        self.query_one("#verdict-line", Static).update(line)

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
        """Every spec field, empty ones too; the cursor stays on the row it was on (an edit re-fills)."""
        ws = self.ws
        table = self.query_one("#markers", DataTable)
        keep = self._marker_key(table)
        table.clear()
        self._rows = {}
        if ws.spec is None:
            return
        original = ws.base_spec or (ws.analysis.spec if ws.analysis is not None else None)
        for row in spec_rows(ws.spec, original):
            self._rows[row.path] = row
            part, _, name = row.path.partition(".")
            family = dict(PARTS).get(part, "")
            source = ""
            if name in ("mode", "format") and ws.analysis is not None and family:
                source = ", ".join(establishing_probes(ws.analysis, family)) or "default"
            label = Text(_middle_cut(row.label, FIELD_WIDTH), style="bold #e0af68" if row.edited else "")
            label.no_wrap = True
            if row.shown:
                value = Text(
                    row.shown, style="reverse" if row.edited else "", overflow="ellipsis", no_wrap=True
                )
            else:
                value = Text("(empty)", style="dim italic")
            if row.edited:
                origin = Text("✎ edited", style="#e0af68")
            elif row.is_enum:
                origin = Text.assemble(
                    (source + " " if source else "", "dim"), ("|".join(row.allowed), "#7fa7d9")
                )
            else:
                origin = Text(source, style="dim")
            origin.no_wrap, origin.overflow = True, "ellipsis"
            table.add_row(label, value, origin, key=row.path)
        paths = list(self._rows)
        if keep in paths:
            table.move_cursor(row=paths.index(keep), scroll=True)
        self._show_field_help()

    @staticmethod
    def _marker_key(table: DataTable[Any]) -> str | None:
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def _show_field_help(self) -> None:
        """The highlighted field's description, and for an enum its allowed values (before any guess)."""
        row = self._rows.get(self._marker_key(self.query_one("#markers", DataTable)) or "")
        box = self.query_one("#field-help", Static)
        if row is None:
            box.update("")
            return
        out = Text.assemble((row.path, "bold"), ": ", (row.description or "prompt fact", "dim"))
        if row.is_enum:
            out.append("  one of: ", style="dim")
            out.append(", ".join(row.allowed), style="#7fa7d9")
        box.update(out)

    @on(DataTable.RowHighlighted, "#markers")
    def _marker_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_field_help()

    def _fill_switches(self) -> None:
        """The template switches of the spec, one row per value tried: what it changes against the default
        render and where the output starts with its prompt; one dim line when there are none."""
        table = self.query_one("#switches", DataTable)
        none = self.query_one("#no-switches", Static)
        table.clear()
        rows = switch_rows(switches_of(self.ws.spec))
        table.display = bool(rows)
        none.display = not rows
        none.update(Text("template switches: none found", style="#8a8f98"))
        for setting, start, effect in rows:
            table.add_row(
                Text(setting, style="#e0af68", no_wrap=True, overflow="ellipsis"),
                Text(effect, no_wrap=True, overflow="ellipsis"),
                Text(start, style="dim"),
            )

    def _fill_warnings(self) -> None:
        warnings = list(self.ws.analysis.warnings) if self.ws.analysis is not None else []
        if self.ws.validation is not None:  # the self-check: the same warning `workbench analyze` prints
            line = warning_line(verdicts_from_report(self.ws.validation))
            if line:
                warnings.insert(0, line)
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

        row = self._rows.get(path)
        self.app.push_screen(
            EditFieldScreen(
                spec, path, allowed=row.allowed if row else (), description=row.description if row else ""
            ),
            done,
        )


def switch_rows(switches: list[Switch]) -> list[tuple[str, str, str]]:
    """The switches table's rows (pure): ``name=value`` (the value as JSON, as ``--kw`` takes it), where
    the output starts with that value's prompt, and what it changes against the default render."""
    return [
        (f"{switch.name}={value.label}", value.start, visible(value.effect))
        for switch in switches
        for value in switch.values
    ]
