"""Small drawings of one decode step: the allowed/vocab gauge, the vocabulary heat strip, the timeline."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.color import Color
from rich.style import Style
from rich.text import Text
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

_BLOCKS = " ▁▂▃▄▅▆▇█"


def _heat(frac: float) -> Style:
    """Colour for an allowed fraction: dark red (all masked) through amber to green (all allowed)."""
    f = min(1.0, max(0.0, frac))
    if f == 0.0:
        return Style(color="#3a1c1c")
    if f < 0.5:
        r, g, b = 0xC0, int(0x40 + 0x60 * f * 2), 0x30
    else:
        r, g, b = int(0xC0 - 0x90 * (f - 0.5) * 2), 0xB0, 0x50
    return Style(color=Color.from_rgb(r, g, b))


def resample(values: Sequence[float], width: int) -> list[float]:
    """``values`` squeezed or stretched to ``width`` cells, averaging within each cell (pure)."""
    n = len(values)
    if n == 0 or width <= 0:
        return []
    out = []
    for i in range(width):
        lo = i * n // width
        hi = max(lo + 1, (i + 1) * n // width)
        chunk = values[lo:hi]
        out.append(sum(chunk) / len(chunk))
    return out


class MaskGauge(Widget):
    """``allowed / vocab`` as a bar with the numbers; shows "no mask" in the free region."""

    DEFAULT_CSS = """
    MaskGauge { height: 1; }
    """

    allowed: reactive[int] = reactive(0)
    vocab: reactive[int] = reactive(0)

    def render(self) -> Text:
        if self.vocab <= 0:
            return Text("allowed  —", style="dim")
        frac = self.allowed / self.vocab
        label = f" {self.allowed:,} / {self.vocab:,} allowed ({frac:.1%})"
        width = max(4, self.size.width - len(label) - 1)
        filled = round(frac * width)
        if self.allowed > 0 and filled == 0:
            filled = 1  # a handful of allowed tokens must still be visible
        out = Text()
        out.append("█" * filled, style=_heat(frac))
        out.append("░" * (width - filled), style="#444444")
        out.append(label)
        return out


def bucket_widths(buckets: int, vocab: int) -> list[int]:
    """How many ids each strip bucket covers: ``vocab // buckets``, the last one taking the remainder (the
    layout of ``workbench.generation.bitmask.summarize``)."""
    if buckets <= 0 or vocab <= 0:
        return []
    width = max(1, vocab // buckets)
    return [width] * (buckets - 1) + [max(1, vocab - width * (buckets - 1))]


def bucket_of(token_id: int, buckets: int, vocab: int) -> int:
    """The strip bucket a token id falls in (-1 when it is outside the vocabulary)."""
    if buckets <= 0 or vocab <= 0 or not 0 <= token_id < vocab:
        return -1
    return min(token_id // max(1, vocab // buckets), buckets - 1)


def bucket_counts(strip: Sequence[float], vocab: int) -> list[int]:
    """Allowed tokens per bucket, back from the recorded fractions."""
    return [round(f * w) for f, w in zip(strip, bucket_widths(len(strip), vocab), strict=True)]


def log_levels(counts: Sequence[int]) -> list[float]:
    """0..1 per bucket, log-scaled against the fullest bucket of the step: a constrained step typically
    allows a handful of tokens in a 150k vocabulary (fractions around 1e-4, which a linear scale draws as
    one flat colour), so the log of the count is what makes "where" visible.  A bucket with nothing
    allowed is 0, one with one token allowed is above 0."""
    top = max(counts, default=0)
    if top <= 0:
        return [0.0 for _ in counts]
    scale = math.log1p(top)
    return [math.log1p(c) / scale if c > 0 else 0.0 for c in counts]


def _cell_of(bucket: int, buckets: int, width: int) -> int:
    """The cell of :func:`resample` (``buckets`` values onto ``width`` cells) that covers ``bucket``."""
    for i in range(width):
        lo = i * buckets // width
        hi = max(lo + 1, (i + 1) * buckets // width)
        if lo <= bucket < hi:
            return i
    return width - 1


def draw_strip(
    strip: Sequence[float], vocab: int, width: int, *, chosen: int = -1, constrained: bool = True
) -> Text:
    """The heat strip (pure): one row of cells over the vocabulary, then an axis line.

    A constrained step draws each bucket's allowed count on a log scale (height and colour; ``·`` where
    nothing is allowed) with the min/max count per bucket.  A free step (no mask) is one muted bar that
    says so.  ``▲`` marks the chosen token's bucket.
    """
    out = Text()
    width = max(1, width)
    if not strip or vocab <= 0:
        out.append("no mask summary for this step", style="dim")
        return out
    n = len(strip)
    cell = _cell_of(bucket_of(chosen, n, vocab), n, width) if bucket_of(chosen, n, vocab) >= 0 else -1
    if not constrained:
        out.append("▔" * width, style="#5c6370")
        label = f"free step: no mask, all {vocab:,} ids allowed"
    else:
        counts = bucket_counts(strip, vocab)
        for level, count in zip(resample(log_levels(counts), width), resample(counts, width), strict=True):
            if count <= 0:
                out.append("·", style="#3a3f4b")
            else:
                out.append(_BLOCKS[max(1, round(level * 8))], style=_heat(0.15 + 0.85 * level))
        per = bucket_widths(n, vocab)[0]
        label = f"allowed per {per:,} ids: {min(counts):,}–{max(counts):,} (log scale) · ids 0–{vocab - 1:,}"
    out.append("\n")
    axis = [" "] * width
    if cell >= 0:
        axis[cell] = "▲"
    tag = f"chosen id {chosen:,}" if cell >= 0 else ""
    text = f"{tag} · {label}" if tag else label
    line = "".join(axis)
    if cell < 0:
        line = _fit(text, width)
    elif width - cell - 2 >= cell - 1:  # more room right of the marker than left of it
        line = line[: cell + 1] + " " + _fit(text, width - cell - 2)
    else:
        line = _fit(text, cell - 1).rjust(cell - 1) + " " + line[cell:]
    out.append(line[:width], style="dim")
    if cell >= 0:  # the marker itself stands out
        start = len(out.plain) - len(line[:width])
        out.stylize("bold #e0af68", start + cell, start + cell + 1)
    return out


def _fit(text: str, width: int) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


class HeatStrip(Widget):
    """The vocabulary bitmask summary (``Step.mask_strip``) as a row of cells (see :func:`draw_strip`)."""

    DEFAULT_CSS = """
    HeatStrip { height: 2; }
    """

    strip: reactive[tuple[float, ...]] = reactive(())
    vocab: reactive[int] = reactive(0)
    chosen: reactive[int] = reactive(-1)
    constrained: reactive[bool] = reactive(True)

    def render(self) -> Text:
        return draw_strip(
            self.strip, self.vocab, self.size.width, chosen=self.chosen, constrained=self.constrained
        )


class Timeline(Widget, can_focus=True):
    """Every step's allowed fraction as a sparkline; the selected step is marked and can be scrubbed.

    Free-region steps (no mask) draw as full bars in a muted colour, constrained ones in the heat colours.
    """

    DEFAULT_CSS = """
    Timeline { height: 3; border-top: solid $panel-lighten-2; }
    Timeline:focus { border-top: solid $accent; }
    """

    BINDINGS = [  # noqa: RUF012 - Textual API
        ("left", "move(-1)", "◀ step"),
        ("right", "move(1)", "step ▶"),
        ("home", "move_to(0)", "first"),
        ("end", "move_to(-1)", "last"),
    ]

    fractions: reactive[tuple[float, ...]] = reactive((), always_update=True)
    free: reactive[tuple[bool, ...]] = reactive((), always_update=True)
    selected: reactive[int] = reactive(-1)

    class Selected(Message):
        """The user picked a step (``index``) on the timeline."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def _cells(self) -> tuple[int, int]:
        """(steps per cell, number of cells) for the current width."""
        n, width = len(self.fractions), max(1, self.size.width)
        per = max(1, -(-n // width))
        return per, -(-n // per) if n else 0

    def render(self) -> Text:
        n = len(self.fractions)
        out = Text()
        if n == 0:
            out.append("no steps yet — press space to step, r to run", style="dim")
            return out
        per, cells = self._cells()
        sel_cell = (self.selected if self.selected >= 0 else n - 1) // per
        for c in range(cells):
            chunk = self.fractions[c * per : (c + 1) * per]
            free = all(self.free[c * per : (c + 1) * per]) if self.free else False
            frac = min(chunk)
            level = 8 if free else max(1, round(frac * 8))
            style = Style(color="#5c6370") if free else _heat(frac)
            if c == sel_cell:
                style = style + Style(bgcolor="#e0af68", color="black")
            out.append(_BLOCKS[level], style=style)
        out.append("\n")
        marker = " " * sel_cell + "▲"
        sel = self.selected if self.selected >= 0 else n - 1
        label = f" step {sel + 1}/{n}" + (f" ({per} steps per cell)" if per > 1 else "")
        if sel_cell + len(label) + 1 < self.size.width:
            out.append(marker + label, style="#e0af68")
        else:
            out.append((label.strip() + " ").rjust(sel_cell) + "▲", style="#e0af68")
        return out

    def action_move(self, delta: int) -> None:
        n = len(self.fractions)
        if n:
            current = self.selected if self.selected >= 0 else n - 1
            self.post_message(self.Selected(min(n - 1, max(0, current + delta))))

    def action_move_to(self, index: int) -> None:
        n = len(self.fractions)
        if n:
            self.post_message(self.Selected(n - 1 if index < 0 else min(index, n - 1)))

    def on_click(self, event: Click) -> None:
        per, cells = self._cells()
        if cells and event.y == 0 and event.x < cells:
            self.post_message(self.Selected(min(len(self.fractions) - 1, event.x * per)))
