"""The help screen: keys of the screen it was opened from, then every action (from the action table)."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from workbench.tui.actions import ACTIONS


def _screen_keys(screen: Screen[Any]) -> list[tuple[str, str]]:
    """(key, description) for the bindings the screen itself declares, in order."""
    names = {"question_mark": "?", "space": "space", "backspace": "backspace"}
    out: list[tuple[str, str]] = []
    for binding in getattr(type(screen), "BINDINGS", []):
        if isinstance(binding, Binding) and binding.description:
            key = binding.key_display or names.get(binding.key, binding.key)
            out.append((str(key), str(binding.description)))
        elif isinstance(binding, tuple) and len(binding) >= 3:
            out.append((str(names.get(binding[0], binding[0])), str(binding[2])))
    return out


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 100; height: 90%; border: thick $accent;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close help"),
    ]

    def __init__(self, under: Screen[Any]) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._content())

    def _content(self) -> Table:
        title = getattr(self.under, "TITLE_TEXT", type(self.under).__name__)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold #e0af68", no_wrap=True)
        grid.add_column()
        grid.add_row(Text("Keys", style="bold underline"), Text(f"on the {title} screen", style="dim"))
        for key, desc in _screen_keys(self.under):
            grid.add_row(key, desc)
        grid.add_row("", "")
        grid.add_row(
            Text("Actions", style="bold underline"),
            Text("all of them are also in the command palette (ctrl+p)", style="dim"),
        )
        for act in ACTIONS:
            grid.add_row(act.keys, Text.assemble((act.title, "bold"), " — ", act.help))
        grid.add_row("", "")
        grid.add_row("esc", "leave a text field, so that single keys (1-5, ?, space…) work again")
        return grid
