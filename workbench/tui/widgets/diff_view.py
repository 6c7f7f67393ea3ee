"""Two renders side by side, split into common prefix, the differing parts and common suffix."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from workbench.tui.palette import DIFF_LABELS, DIFF_STYLES, legend
from workbench.tui.widgets.panes import text_pane


def split_text(prefix: str, middle: str, suffix: str, side: str) -> Text:
    """One variant's render with its three parts coloured (``side`` is ``left`` or ``right``)."""
    out = Text()
    out.append(prefix, style=DIFF_STYLES["prefix"])
    out.append(middle if middle else "∅", style=DIFF_STYLES[side] if middle else "dim italic")
    out.append(suffix, style=DIFF_STYLES["suffix"])
    return out


class DiffPane(Horizontal):
    """Variant A | variant B, each scrollable, with a legend of the four parts above."""

    DEFAULT_CSS = """
    DiffPane { height: 1fr; }
    DiffPane > VerticalScroll { width: 1fr; border: round $panel-lighten-2; }
    DiffPane > VerticalScroll:focus { border: round $accent; }
    """

    def compose(self) -> ComposeResult:
        yield text_pane("variant-a", "variant A", "text-a")
        yield text_pane("variant-b", "variant B", "text-b")

    def show(
        self, prefix: str, left: str, right: str, suffix: str, *, title_a: str = "", title_b: str = ""
    ) -> None:
        self.query_one("#text-a", Static).update(split_text(prefix, left, suffix, "left"))
        self.query_one("#text-b", Static).update(split_text(prefix, right, suffix, "right"))
        self.query_one("#variant-a").border_title = f"A: {title_a}" if title_a else "variant A"
        self.query_one("#variant-b").border_title = f"B: {title_b}" if title_b else "variant B"
        # Start both where they differ: the prefix is usually a long shared system turn.
        self.call_after_refresh(self._scroll_to_difference, prefix)

    def show_text(self, a: str, b: str) -> None:
        self.query_one("#text-a", Static).update(a)
        self.query_one("#text-b", Static).update(b)

    def _scroll_to_difference(self, prefix: str) -> None:
        for pane in self.query(VerticalScroll):
            width = pane.scrollable_content_region.width
            if width <= 0:
                continue
            # Rows the prefix takes once wrapped at this width; its last row is where the parts differ.
            rows = len(Text(prefix).wrap(self.app.console, width)) if prefix else 1
            pane.scroll_to(y=max(0, rows - 3), animate=False)


def diff_legend() -> Text:
    return legend(DIFF_STYLES, DIFF_LABELS)
