"""The validation cases of a report, and one case opened: what the template rendered beside what the
parser made of it.

A failing case is where a spec gets repaired: the rendered output (after the generation prompt) is the
text the parser read, and the expected message against the parsed one shows what it misread.  The first
place where the two JSON texts differ is marked in both, so the eye lands on the cause.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from workbench.tui.guard import Guarded
from workbench.tui.palette import DIFF_STYLES
from workbench.tui.widgets.panes import text_pane
from workbench.validate import ValidationReport
from workbench.validate.report import CaseResult

STATUS_STYLES = {"pass": "#b8f2b0", "fail": "#ff6b6b", "error": "#ff6b6b", "unsupported": "#8a8f98"}
FAILING = ("fail", "error")


def ordered_cases(report: ValidationReport) -> list[CaseResult]:
    """Failing cases first (they are what the user came for), then the rest in report order (pure)."""
    return [c for c in report.cases if c.status in FAILING] + [
        c for c in report.cases if c.status not in FAILING
    ]


def first_difference(a: str, b: str) -> int | None:
    """Index of the first character where ``a`` and ``b`` differ (``None`` when equal; pure)."""
    if a == b:
        return None
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def marked(text: str, at: int | None, style: str) -> Text:
    """``text`` with everything from ``at`` to the end of that line in ``style``, and a ▶ at ``at``."""
    out = Text(text)
    if at is None:
        return out
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    out.stylize(style, at, max(end, at + 1))
    out = out[:at] + Text("▶", style="bold #e0af68") + out[at:]
    return out


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) if data is not None else "(nothing)"


def case_panels(case: CaseResult) -> tuple[Text, Text]:
    """(rendered text, parsed vs expected) for one case (pure)."""
    rendered = Text()
    if case.generation_prefix:
        rendered.append(case.generation_prefix, style="#8a8f98")
    rendered.append(case.output or "(no output rendered)", style="" if case.output else "dim")
    expected, parsed = _json(case.expected), _json(case.parsed)
    at = first_difference(expected, parsed)
    right = Text()
    right.append(f"{case.status}", style=f"bold {STATUS_STYLES.get(case.status, '')}")
    right.append(f"  {case.description}\n", style="dim")
    if case.reason:
        right.append(f"{case.reason}\n", style="italic")
    for m in case.mismatches:
        right.append(f"≠ {m}\n", style="#ffb4a2")
    right.append("\nexpected\n", style="bold underline")
    right.append_text(marked(expected, at, str(DIFF_STYLES["left"])))
    right.append("\n\nparsed\n", style="bold underline")
    right.append_text(marked(parsed, at, str(DIFF_STYLES["right"])))
    return rendered, right


class CasesScreen(Guarded, ModalScreen[None]):
    """Every case of a validation report; the highlighted one is opened below the list."""

    DEFAULT_CSS = """
    CasesScreen { align: center middle; }
    CasesScreen > Vertical { width: 96%; height: 94%; border: thick $accent; background: $surface; }
    CasesScreen #cases { height: 8; }
    CasesScreen #case-detail { height: 1fr; }
    CasesScreen VerticalScroll { width: 1fr; border: round $panel-lighten-2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "app.pop_screen", "Close")]

    def __init__(self, report: ValidationReport) -> None:
        super().__init__()
        self.cases = ordered_cases(report)
        self.summary = report.summary()

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"validation cases · {self.summary} · escape closes"
            table: DataTable[Any] = DataTable(id="cases", cursor_type="row")
            yield table
            with Horizontal(id="case-detail"):
                yield text_pane("case-rendered-pane", "rendered (grey: generation prompt)", "case-rendered")
                yield text_pane(
                    "case-parsed-pane", "what the parser made of it (▶ first difference)", "case-parsed"
                )

    def on_mount(self) -> None:
        table = self.query_one("#cases", DataTable)
        for label, width in (("case", 24), ("status", 11), ("features", 24), ("reason", 40)):
            table.add_column(label, width=width)
        for c in self.cases:
            table.add_row(
                c.id,
                Text(c.status, style=STATUS_STYLES.get(c.status, "")),
                ", ".join(c.features),
                Text(c.reason or "; ".join(c.mismatches), overflow="ellipsis", no_wrap=True),
                key=c.id,
            )
        table.focus()
        self._open(0)

    def _open(self, row: int) -> None:
        if not 0 <= row < len(self.cases):
            return
        rendered, parsed = case_panels(self.cases[row])
        self.query_one("#case-rendered", Static).update(rendered)
        self.query_one("#case-parsed", Static).update(parsed)

    @on(DataTable.RowHighlighted, "#cases")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._open(event.cursor_row)
