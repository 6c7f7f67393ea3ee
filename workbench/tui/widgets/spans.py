"""Text coloured by span kind: the live model output, and any render with markers picked out."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from workbench.runtime.events import Event
from workbench.tui.palette import MARKER_STYLE, SPAN_LABELS, SPAN_STYLES, SPECIAL_STYLE, legend


def append_events(text: Text, events: Iterable[Event]) -> None:
    """Append each event's text to ``text`` in its kind's style (mutates ``text``)."""
    for ev in events:
        if ev.text:
            text.append(ev.text, style=SPAN_STYLES.get(ev.kind, SPAN_STYLES["content"]))


def highlight_markers(text: str, markers: Sequence[str], specials: Sequence[str] = ()) -> Text:
    """``text`` with every occurrence of ``markers`` (and, in another colour, ``specials``) styled.

    Longer strings win where two overlap, so ``<|im_start|>`` is not split by a shorter marker.
    """
    out = Text(text)
    taken = [False] * len(text)
    wanted: list[tuple[str, Style]] = [(m, SPECIAL_STYLE) for m in specials if m]
    wanted += [(m, MARKER_STYLE) for m in markers if m and m not in specials]
    wanted.sort(key=lambda p: -len(p[0]))
    for needle, style in wanted:
        start = text.find(needle)
        while start >= 0:
            end = start + len(needle)
            if not any(taken[start:end]):
                out.stylize(style, start, end)
                for i in range(start, end):
                    taken[i] = True
            start = text.find(needle, end)
    return out


class SpanLegend(Static):
    """One line naming each span kind in its colour."""

    DEFAULT_CSS = """
    SpanLegend { height: auto; color: $text-muted; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(legend(SPAN_STYLES, SPAN_LABELS), **kwargs)  # type: ignore[arg-type]


class SpanStream(ScrollView, can_focus=True):
    """Model output that grows a step at a time, every character in its span kind's colour.

    Output is kept as logical lines (split at newlines), each wrapped to the widget width once and cached;
    appending only re-wraps the last logical line, so a 2,000-step stream costs the same per step at the
    end as at the start.  The view follows the end unless the user scrolled up.
    """

    DEFAULT_CSS = """
    SpanStream { height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._lines: list[Text] = [Text()]
        self._wrapped: list[list[Strip] | None] = [None]
        self._starts: list[int] = [0]  # first wrapped row of each logical line
        self._width = 0

    @property
    def plain(self) -> str:
        return "\n".join(line.plain for line in self._lines)

    def clear(self) -> None:
        self._lines, self._wrapped, self._starts = [Text()], [None], [0]
        self.virtual_size = Size(self._width, 0)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def extend(self, events: Iterable[Event]) -> None:
        """Append events and redraw once (mutates only the tail)."""
        following = self.scroll_y >= self.max_scroll_y - 1
        first_dirty = len(self._lines) - 1
        for ev in events:
            if not ev.text:
                continue
            style = SPAN_STYLES.get(ev.kind, SPAN_STYLES["content"])
            parts = ev.text.split("\n")
            self._lines[-1].append(parts[0], style=style)
            for part in parts[1:]:
                line = Text(end="")
                line.append(part, style=style)
                self._lines.append(line)
                self._wrapped.append(None)
                self._starts.append(0)
        for i in range(first_dirty, len(self._lines)):
            self._wrapped[i] = None
        self._relayout(first_dirty)
        if following:
            self.scroll_end(animate=False, immediate=True)

    def on_resize(self) -> None:
        if self.scrollable_content_region.width != self._width:
            self._wrapped = [None] * len(self._lines)
            self._relayout(0)

    def _wrap(self, i: int) -> list[Strip]:
        cached = self._wrapped[i]
        if cached is None:
            console = self.app.console
            width = max(1, self._width)
            lines = self._lines[i].wrap(console, width) if self._lines[i] else [Text()]
            cached = [Strip(line.render(console)) for line in lines]
            self._wrapped[i] = cached
        return cached

    def _relayout(self, first: int) -> None:
        self._width = max(1, self.scrollable_content_region.width or self.size.width or 80)
        row = self._starts[first] if first < len(self._starts) else 0
        for i in range(first, len(self._lines)):
            self._starts[i] = row
            row += len(self._wrap(i))
        self.virtual_size = Size(self._width, row)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        total = self.virtual_size.height
        if row >= total or not self._lines:
            return Strip.blank(width, self.rich_style)
        i = bisect_right(self._starts, row) - 1
        strips = self._wrap(i)
        strip = strips[min(row - self._starts[i], len(strips) - 1)]
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)
