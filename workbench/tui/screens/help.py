"""The help screen: keys of the screen it was opened from, then every action (from the action table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from workbench.tui.actions import ACTIONS
from workbench.tui.guard import Guarded


@dataclass(frozen=True)
class HelpKey:
    """One key the help screen promises works on the screen it was opened from."""

    key: str  # the key name to press (``question_mark``, ``ctrl+s``)
    shown: str  # as the user reads it
    description: str
    everywhere: bool  # an app key, not one of the screen's own


_NAMES = {"question_mark": "?", "right_square_bracket": "]", "ctrl+right_square_bracket": "ctrl+]"}


def _binding_rows(bindings: list[BindingType]) -> list[tuple[str, str, str, str]]:
    """(key, shown, description, action) rows of the bindings that have a description."""
    rows: list[tuple[str, str, str, str]] = []
    for binding in bindings:
        if isinstance(binding, Binding):
            key, shown, desc, action = binding.key, binding.key_display, binding.description, binding.action
        elif isinstance(binding, tuple) and len(binding) >= 3:
            key, shown, desc, action = binding[0], None, binding[2], binding[1]
        else:
            continue
        key = key.split(",")[0]
        if desc:
            rows.append((key, str(shown or _NAMES.get(key, key)), str(desc), str(action)))
    return rows


def help_keys(screen: Screen[Any]) -> list[HelpKey]:
    """The keys that work on ``screen``: its own bindings, then the app's (no state change).

    The help walk test presses every one of these on every screen, so the help never lists a key that does
    nothing where it is shown.  Switching to the screen already shown is left out.
    """
    out: list[HelpKey] = []
    seen: set[str] = set()
    mode = getattr(screen, "MODE", "")
    for key, shown, desc, _action in _binding_rows(list(getattr(type(screen), "BINDINGS", []))):
        if key not in seen:
            seen.add(key)
            out.append(HelpKey(key, shown, desc, everywhere=False))
    app_bindings = list(getattr(type(screen.app), "BINDINGS", [])) if screen.is_attached else []
    for key, shown, desc, action in _binding_rows(app_bindings):
        if key in seen or action == f"switch_mode('{mode}')":
            continue
        seen.add(key)
        if action.startswith("switch_mode"):
            desc = f"show {desc}"
        out.append(HelpKey(key, shown, desc, everywhere=True))
    if "ctrl+p" not in seen:
        out.append(HelpKey("ctrl+p", "ctrl+p", "command palette: every action by name", everywhere=True))
    return out


class HelpScreen(Guarded, ModalScreen[None]):
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
        keys = help_keys(self.under)
        grid.add_row(Text("Keys", style="bold underline"), Text(f"on the {title} screen", style="dim"))
        for k in keys:
            if not k.everywhere:
                grid.add_row(k.shown, k.description)
        grid.add_row("", "")
        grid.add_row(
            Text("Everywhere", style="bold underline"),
            Text("F-keys and ctrl keys work while typing", style="dim"),
        )
        merged: dict[str, list[str]] = {}
        for k in keys:
            if k.everywhere:
                merged.setdefault(k.description, []).append(k.shown)
        for desc, shown in merged.items():
            grid.add_row(" / ".join(shown), desc)
        grid.add_row("esc", "leave a text field, so that single keys (1-5, ?, space…) work again")
        grid.add_row("", "")
        grid.add_row(
            Text("Actions", style="bold underline"),
            Text("by name in the command palette (ctrl+p)", style="dim"),
        )
        for act in ACTIONS:
            grid.add_row(
                "",
                Text.assemble((act.title, "bold"), (f" [{act.keys}]", "#e0af68"), " — ", (act.help, "dim")),
            )
        return grid
