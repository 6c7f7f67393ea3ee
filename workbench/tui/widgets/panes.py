"""The one pane every screen shows text in: a bordered, scrolling box with a title around one ``Static``."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static


def text_pane(pane_id: str, title: str, text_id: str, *, subtitle: str = "") -> VerticalScroll:
    """A scrolling pane ``#pane_id`` titled ``title`` (and ``subtitle``) holding the ``Static`` ``#text_id``
    the screen writes into: the same widget tree as composing the two by hand, written once."""
    pane = VerticalScroll(Static(id=text_id), id=pane_id)
    pane.border_title = title
    if subtitle:
        pane.border_subtitle = subtitle
    return pane
