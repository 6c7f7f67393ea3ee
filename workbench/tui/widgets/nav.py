"""The top line of every screen: the screen switcher, the screen's status, and the validation verdict.

The verdict is drawn last at the right edge and is never cut.  Below 110 columns the screen names shrink to
their keys (the current screen keeps its name); wider, they shrink too when the status would not fit whole
beside them.  Then the status gives way.  At 80 columns a person still reads
"✗ NOT validated 0/10" on every screen.
"""

from __future__ import annotations

from rich.text import Text
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

from workbench.tui.verdict import Verdict

SCREENS: tuple[tuple[str, str, str], ...] = (
    ("1", "template", "Template"),
    ("2", "analysis", "Analysis"),
    ("3", "generate", "Generate"),
    ("4", "inspector", "Inspector"),
    ("5", "export", "Export"),
)

VERDICT_STYLES: dict[str, str] = {
    "validated": "bold black on #9ece6a",
    "limited": "bold black on #e0af68",
    "not_validated": "bold white on #b03030",
    "failed": "bold white on #b03030",
    "running": "bold black on #7aa2f7",
    "none": "bold on #3b3f4a",
}
#: Below this width the screen names shrink to their keys (the current one keeps its name).
WIDE = 110


class NavBar(Widget):
    """Names the five screens with their keys, the current one highlighted; clicking one switches to it."""

    DEFAULT_CSS = """
    NavBar { height: 1; background: $panel; color: $text-muted; }
    """

    current: reactive[str] = reactive("template")
    status: reactive[str] = reactive("")
    verdict: reactive[Verdict | None] = reactive[Verdict | None](None)

    def __init__(self, current: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(NavBar.current, current)
        self._spans: list[tuple[int, int, str]] = []

    def render(self) -> Text:
        width = max(1, self.size.width)
        verdict = Text()
        if self.verdict is not None:
            verdict = Text(f" {self.verdict.label} ", style=VERDICT_STYLES.get(self.verdict.state, "bold"))
        wide = width >= WIDE
        names = self._names(wide=wide)
        if wide and self.status and names.cell_len + len(self.status) + verdict.cell_len + 3 > width:
            names = self._names(wide=False)  # the other screens' names give way before the status is cut
        out = names
        room = width - out.cell_len - verdict.cell_len - 1
        if self.status and room > 4:
            status = Text(self.status, style="italic")
            status.truncate(room - 2, overflow="ellipsis")
            out.append(" " * max(1, room - status.cell_len))
            out.append_text(status)
            out.append(" ")
        else:
            out.append(" " * max(1, room + 1))
        out.append_text(verdict)
        if out.cell_len > width:  # narrower than the names and the verdict: the verdict still comes first
            out = Text.assemble(verdict, " ")
            out.truncate(width, overflow="ellipsis")
        return out

    def _names(self, *, wide: bool) -> Text:
        """The screen switcher: every name when ``wide``, else the keys (the current screen keeps its name);
        records where each is for clicks."""
        out = Text(" workbench ", style="bold reverse") if wide else Text()
        self._spans = []
        for key, mode, title in SCREENS:
            out.append(" ")
            start = out.cell_len
            current = mode == self.current
            shown = f" {key} {title} " if wide or current else f" {key} "
            out.append_text(Text(shown, style="bold black on #e0af68" if current else ""))
            self._spans.append((start, out.cell_len, mode))
        return out

    def on_click(self, event: Click) -> None:
        for start, end, mode in self._spans:
            if start <= event.x < end:
                self.app.switch_mode(mode)
                return
