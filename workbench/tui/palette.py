"""The colours that carry meaning, in one place: span kinds, diff parts, mask states.

Every view that colours text by kind uses these, so a legend drawn from this table is always truthful.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

SPAN_STYLES: dict[str, Style] = {
    "reasoning": Style(color="#a99bd6", italic=True),
    "content": Style(color="#e4e4e4"),
    "tool_name": Style(color="#f0c674", bold=True),
    "tool_args": Style(color="#7fd1c7"),
    "tool_id": Style(color="#b5d36a"),
    "marker": Style(color="#ff7b72", bgcolor="#3b1e1e", bold=True),
}
SPAN_LABELS: dict[str, str] = {
    "reasoning": "reasoning",
    "content": "content",
    "tool_name": "tool name",
    "tool_args": "tool args",
    "tool_id": "tool id",
    "marker": "marker",
}

DIFF_STYLES: dict[str, Style] = {
    "prefix": Style(color="#8a8f98"),
    "left": Style(color="#ffb4a2", bgcolor="#4a2020", bold=True),
    "right": Style(color="#b8f2b0", bgcolor="#1f4020", bold=True),
    "suffix": Style(color="#7fa7d9"),
}
DIFF_LABELS: dict[str, str] = {
    "prefix": "common prefix",
    "left": "only in A",
    "right": "only in B",
    "suffix": "common suffix",
}

MARKER_STYLE = SPAN_STYLES["marker"]
SPECIAL_STYLE = Style(color="#ffd866", bgcolor="#3a3320", bold=True)
ERROR_STYLE = Style(color="#ff6b6b", bold=True)
MASKED_STYLE = Style(color="#8a6a6a", strike=True)
ALLOWED_STYLE = Style(color="#b8f2b0")


def legend(styles: dict[str, Style], labels: dict[str, str]) -> Text:
    """A one-line legend: each label written in its own style."""
    out = Text()
    for key, style in styles.items():
        if out:
            out.append("  ")
        out.append(f" {labels[key]} ", style=style)
    return out


def visible(text: str) -> str:
    """Text with line breaks and tabs made visible, for one-line cells (markers often end in a newline)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
