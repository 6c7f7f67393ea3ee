"""What every workbench screen shares: the nav line, the footer, and catching up with the workspace."""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer

from workbench.tui.errors import one_line
from workbench.tui.guard import Guarded
from workbench.tui.keys import acts_while_typing, is_text_field
from workbench.tui.verdict import verdict_of
from workbench.tui.widgets.nav import NavBar
from workbench.tui.workspace import Workspace

# Frames per second at which a screen draws new steps: enough to look live, cheap enough that the UI
# thread leaves the engine worker the CPU (benchmarks/tui_replay.py measures it).
STEP_FPS = 15
# What the verdict on the top line depends on.
VERDICT_TOPICS = frozenset({"spec", "validation", "analysis"})

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


class WorkbenchScreen(Guarded, Screen[None]):
    """A screen that draws part of the workspace.

    Subclasses list the workspace ``TOPICS`` they show and implement :meth:`sync`; it is called on mount,
    when the app reports a change while the screen is visible, and on resume for whatever changed while it
    was hidden.  Hidden screens therefore do no work at all while a generation streams.
    """

    MODE: ClassVar[str] = ""
    TOPICS: ClassVar[tuple[str, ...]] = ()
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave_input", "Leave field", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._seen: Counter[str] = Counter()
        self._steps_timer: Timer | None = None
        self._last_steps_draw = 0.0

    @property
    def wb(self) -> WorkbenchApp:
        return self.app

    @property
    def ws(self) -> Workspace:
        return self.wb.workspace

    def compose(self) -> ComposeResult:
        yield NavBar(self.MODE, id="nav")
        yield from self.compose_body()
        yield Footer()

    def compose_body(self) -> ComposeResult:
        raise NotImplementedError

    def on_mount(self) -> None:
        self._catch_up(force=True)

    def on_screen_resume(self) -> None:
        self._catch_up()
        # Keys typed while this screen was being switched to were dropped; take keys again once it is drawn.
        self.call_after_refresh(self.wb.end_mode_switch)

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The bindings the footer offers: while a text field has focus, only keys that are never text."""
        bindings = super().active_bindings
        if not is_text_field(self.focused):
            return bindings
        return {key: b for key, b in bindings.items() if acts_while_typing(key)}

    def _catch_up(self, force: bool = False) -> None:
        self.show_verdict()
        changed = {t for t in self.TOPICS if force or self.ws.revision[t] != self._seen[t]}
        for t in changed:
            self._seen[t] = self.ws.revision[t]
        if changed:
            self._safe_sync(changed)

    def show_verdict(self) -> None:
        """The validation verdict on the top line: every screen shows it, whatever its topics."""
        self.query_one(NavBar).verdict = verdict_of(self.ws)

    def workspace_changed(self, topic: str) -> None:
        if topic in VERDICT_TOPICS and self.is_mounted:
            self.show_verdict()
        if topic not in self.TOPICS or not self.is_mounted:
            return
        if topic == "steps":
            # Steps can arrive hundreds of times a second; drawing them is capped at STEP_FPS frames.
            wait = self._last_steps_draw + 1.0 / STEP_FPS - time.monotonic()
            if self._steps_timer is not None:
                return
            if wait > 0:
                self._steps_timer = self.set_timer(wait, self._draw_steps)
                return
            self._draw_steps()
            return
        self._seen[topic] = self.ws.revision[topic]
        self._safe_sync({topic})

    def _draw_steps(self) -> None:
        self._steps_timer = None
        self._last_steps_draw = time.monotonic()
        self._seen["steps"] = self.ws.revision["steps"]
        self._safe_sync({"steps"})

    def _safe_sync(self, topics: set[str]) -> None:
        """Draw, turning any failure into a notification: data from a stage under construction (or a
        template nobody anticipated) must never end the app with a traceback."""
        try:
            self.sync(topics)
        except Exception as exc:
            self.log.error(f"{type(self).__name__}.sync({sorted(topics)}) failed: {exc!r}")
            self.notify(f"could not draw {', '.join(sorted(topics))}: {one_line(exc)}", severity="error")

    def sync(self, topics: set[str]) -> None:
        """Redraw what depends on ``topics`` (called on the UI thread)."""

    def set_status(self, text: str) -> None:
        self.query_one(NavBar).status = text

    def action_leave_input(self) -> None:
        """Give the keyboard back to the screen so single-key bindings work again."""
        self.set_focus(None)
