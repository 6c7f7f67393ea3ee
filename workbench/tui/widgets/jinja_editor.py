"""A TextArea that highlights Jinja without tree-sitter, and can mark one line as the error line.

Textual's own highlighting needs tree-sitter, which has no Jinja grammar; Pygments (already a dependency of
Rich) has a Jinja lexer.  The TextArea asks ``_build_highlight_map`` for per-line byte ranges and theme
names on every edit, so this subclass fills the same map from Pygments tokens.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Token
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.widgets import TextArea
from textual.widgets.text_area import TextAreaTheme

# Pygments token type -> TextArea theme highlight name (first match wins, most specific first).
_TOKEN_NAMES: tuple[tuple[object, str], ...] = (
    (Comment.Preproc, "tag"),
    (Comment, "comment"),
    (Keyword, "keyword"),
    (String, "string"),
    (Number, "number"),
    (Name.Function, "function.call"),
    (Name.Builtin, "variable.builtin"),
    (Name, "variable"),
    (Operator, "operator"),
    (Punctuation, "punctuation.bracket"),
)


def _highlight_name(token_type: object) -> str | None:
    for parent, name in _TOKEN_NAMES:
        if token_type in parent:  # type: ignore[operator]
            return name
    return None


def jinja_highlights(text: str) -> dict[int, list[tuple[int, int | None, str]]]:
    """Per line, ``(start_byte, end_byte, highlight_name)`` ranges for Jinja syntax (pure)."""
    lexer = get_lexer_by_name("jinja", stripnl=False, ensurenl=False)
    out: dict[int, list[tuple[int, int | None, str]]] = {}
    row, col_bytes = 0, 0
    for token_type, value in lexer.get_tokens(text):
        name = None if token_type in Token.Other or token_type in Token.Text else _highlight_name(token_type)
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                row += 1
                col_bytes = 0
            width = len(part.encode("utf-8"))
            if name and width:
                out.setdefault(row, []).append((col_bytes, col_bytes + width, name))
            col_bytes += width
    return out


class JinjaEditor(TextArea):
    """Template source editor with Jinja highlighting; ``error_line`` (1-based) is drawn in red.

    ``tab`` leaves the editor like any other field (a tab that silently indented a template was a trap:
    whitespace changes what a template renders); ``ctrl+]`` indents on purpose.
    """

    DEFAULT_CSS = """
    JinjaEditor { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+right_square_bracket", "indent", "Indent", key_display="ctrl+]"),
    ]

    def __init__(self, text: str = "", **kwargs: object) -> None:
        self.error_line: int | None = None  # read by _build_highlight_map, which TextArea.__init__ calls
        super().__init__(text, show_line_numbers=True, soft_wrap=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]

    def action_indent(self) -> None:
        """Insert indentation up to the next tab stop at the cursor (the key tab no longer does this)."""
        self.insert(" " * self._find_columns_to_next_tab_stop())

    def on_mount(self) -> None:
        base = self.theme or "css"
        theme = self.get_theme(base) if hasattr(self, "get_theme") else None
        if isinstance(theme, TextAreaTheme):
            styles = dict(theme.syntax_styles)
            styles["tag"] = Style(color="#e0af68", bold=True)
            styles["error_line"] = Style(bgcolor="#5a1f1f")
            # the base theme's styles (a dataclass), with the template's own syntax styles
            self.register_theme(dataclasses.replace(theme, name="workbench-jinja", syntax_styles=styles))
            self.theme = "workbench-jinja"
        self._build_highlight_map()
        self.refresh()

    def set_error_line(self, line: int | None) -> None:
        """Mark a 1-based template line as the error line (``None`` clears it)."""
        if line != self.error_line:
            self.error_line = line
            self._build_highlight_map()
            self.refresh()

    def _build_highlight_map(self) -> None:
        # Overrides TextArea's tree-sitter version (see module docstring).
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        for row, ranges in jinja_highlights(self.text).items():
            highlights[row].extend(ranges)
        if self.error_line is not None and self.error_line >= 1:
            highlights[self.error_line - 1].insert(0, (0, None, "error_line"))
