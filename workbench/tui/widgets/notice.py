"""A panel that stands in for a view that cannot be shown: stage not available, an error, or nothing yet."""

from __future__ import annotations

from textual.widgets import Static


class Notice(Static):
    """A bordered message.  CSS classes say why: ``-unavailable``, ``-error``, ``-empty``."""

    DEFAULT_CSS = """
    Notice { border: round $panel-lighten-2; padding: 0 1; color: $text-muted; height: auto; }
    Notice.-unavailable { border: round $warning; color: $warning; }
    Notice.-error { border: round $error; color: $error; }
    Notice.-hidden { display: none; }
    """

    def show(self, text: str, kind: str = "empty") -> None:
        """Show ``text`` as a notice of ``kind`` (unavailable | error | empty)."""
        self.set_classes(f"-{kind}")
        self.update(text)

    def hide(self) -> None:
        self.set_classes("-hidden")
