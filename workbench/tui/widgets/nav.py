"""The screen switcher line at the top of every screen."""

from __future__ import annotations

from rich.text import Text
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

SCREENS: tuple[tuple[str, str, str], ...] = (
    ("1", "template", "Template"),
    ("2", "analysis", "Analysis"),
    ("3", "generate", "Generate"),
    ("4", "inspector", "Inspector"),
    ("5", "export", "Export"),
)


class NavBar(Widget):
    """Names the five screens with their keys, the current one highlighted; clicking one switches to it."""

    DEFAULT_CSS = """
    NavBar { height: 1; background: $panel; color: $text-muted; }
    """

    current: reactive[str] = reactive("template")
    status: reactive[str] = reactive("")

    def __init__(self, current: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(NavBar.current, current)
        self._spans: list[tuple[int, int, str]] = []

    def render(self) -> Text:
        out = Text(" workbench ", style="bold reverse")
        self._spans = []
        for key, mode, title in SCREENS:
            out.append(" ")
            start = out.cell_len
            label = Text(f" {key} {title} ", style="bold black on #e0af68" if mode == self.current else "")
            out.append_text(label)
            self._spans.append((start, out.cell_len, mode))
        if self.status:
            width = self.size.width
            gap = max(1, width - out.cell_len - len(self.status) - 1)
            out.append(" " * gap)
            out.append(self.status, style="italic")
        out.truncate(max(1, self.size.width), overflow="ellipsis")
        return out

    def on_click(self, event: Click) -> None:
        for start, end, mode in self._spans:
            if start <= event.x < end:
                self.app.switch_mode(mode)
                return
