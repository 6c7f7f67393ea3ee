"""Generate screen: chat input, the output streaming live in span colours, and the parsed message beside it.

The output and the parsed message are read from the step log, which the engine worker fills; this screen
only draws what is new since it last looked (a rewind makes it start over).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar, get_args

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Checkbox, Input, Select, Static

from workbench.tui.messages import RequestGenerate, ToolChoice
from workbench.tui.palette import visible
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.status import engine_status
from workbench.tui.widgets.notice import Notice
from workbench.tui.widgets.spans import SpanLegend, SpanStream

TOOL_CHOICES: tuple[ToolChoice, ...] = get_args(ToolChoice)


class GenerateScreen(WorkbenchScreen):
    MODE = "generate"
    TITLE_TEXT = "Generate"
    CSS_PATH = str(Path(__file__).parent.parent / "generate.tcss")
    TOPICS = ("steps", "engine", "model", "spec")
    BINDINGS: ClassVar[list[BindingType]] = [
        *WorkbenchScreen.BINDINGS,
        Binding("i", "focus_chat", "Type"),
        Binding("p", "app.pause", "Pause"),
        Binding("r", "app.run", "Run"),
        Binding("space", "app.step", "Step"),
        Binding("backspace", "app.rewind", "Rewind"),
        Binding("f", "app.force", "Force"),
        Binding("c", "app.toggle_constraint", "Constraint"),
        Binding("j", "app.jump_forward", "Jump fwd", show=False),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._seen_steps = 0
        self._epoch = -1
        self.parsed_json = ""  # what the parsed-message pane shows, as text
        self.pending_text = ""  # the held-back text drawn under the output

    def compose_body(self) -> ComposeResult:
        yield Static(id="gen-status")
        yield Notice(id="gen-notice", classes="-hidden")
        with Horizontal(id="gen-main"):
            with Vertical(id="output-pane") as out:
                out.border_title = "model output"
                yield SpanStream(id="output")
                yield Static(id="pending", classes="-hidden")
                yield SpanLegend(id="legend")
            with VerticalScroll(id="parsed-pane") as parsed:
                parsed.border_title = "parsed message"
                yield Static(id="parsed")
        with Horizontal(id="chat-row"):
            yield Input(
                placeholder="Ask something and press enter (uses the tools of the Template screen)", id="chat"
            )
            yield Select([(c, c) for c in TOOL_CHOICES], value="auto", allow_blank=False, id="tool-choice")
            yield Checkbox("constrain", True, id="constrain")
            yield Checkbox("paused", False, id="start-paused", tooltip="start paused: read the prompt, wait")

    def focus_chat(self) -> None:
        self.query_one("#chat", Input).focus()

    def action_focus_chat(self) -> None:
        self.focus_chat()

    @on(Input.Submitted, "#chat")
    def _send(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        choice = self.query_one("#tool-choice", Select).value
        tool_choice: ToolChoice = "auto"
        for known in TOOL_CHOICES:  # narrow the Select's value to the closed set
            if known == choice:
                tool_choice = known
        constrain = self.query_one("#constrain", Checkbox).value
        paused = self.query_one("#start-paused", Checkbox).value
        self.post_message(
            RequestGenerate(
                text, tool_choice=tool_choice, constrain=bool(constrain), start_paused=bool(paused)
            )
        )
        self.set_focus(None)

    @on(Checkbox.Changed, "#constrain")
    def _constrain_changed(self, event: Checkbox.Changed) -> None:
        """The switch and the status line say the same thing: with a generation loaded the switch toggles
        its constraint (the engine may refuse, and the switch follows the engine back); without one it
        sets the default for the next generation."""
        ws = self.ws
        if event.value == ws.constrained:
            return
        if ws.driver is not None:
            self.wb.action_toggle_constraint()
            return
        ws.constrained = event.value
        self.wb.changed("engine")

    def sync(self, topics: set[str]) -> None:
        ws = self.ws
        if "engine" in topics:
            box = self.query_one("#constrain", Checkbox)
            if box.value != ws.constrained:
                box.value = ws.constrained
        if topics & {"steps", "engine"}:
            self._catch_up_steps()
        self.query_one("#gen-status", Static).update(engine_status(ws))
        notice = self.query_one("#gen-notice", Notice)
        if ws.model_state == "failed" and ws.driver is None:
            notice.show(f"No model: {ws.model_notice}. Open a session (--session) to replay one.", "error")
        elif ws.model_state == "loading":
            notice.show(f"Loading the model… {ws.model_notice}", "empty")
        elif ws.model_notice and ws.driver is None:
            notice.show(ws.model_notice, "unavailable")
        else:
            notice.hide()
        self.set_status(ws.source.name)

    def _catch_up_steps(self) -> None:
        ws = self.ws
        view = ws.steps.view_since(self._seen_steps, self._epoch)
        stream = self.query_one("#output", SpanStream)
        if view.rebuilt:
            stream.clear()
        if view.new:
            stream.extend(ev for step in view.new for ev in step.events)
        self._seen_steps, self._epoch = view.total, view.epoch
        self._draw_pending(ws.steps.pending)
        message = ws.steps.message
        parsed = self.query_one("#parsed", Static)
        if message is None:
            self.parsed_json = ""
            parsed.update("")
            return
        data = message.to_contract()
        if ws.steps.diagnostics:
            data["diagnostics"] = list(ws.steps.diagnostics)
        self.parsed_json = json.dumps(data, indent=2, ensure_ascii=False)
        parsed.update(Syntax(self.parsed_json, "json", word_wrap=True, theme="ansi_dark"))

    def _draw_pending(self, pending: str) -> None:
        """Held-back text (a marker or a call still being written), dimmed under the output: the parser
        has not released it, so it is not in the coloured stream or the parsed message yet."""
        widget = self.query_one("#pending", Static)
        self.pending_text = pending
        if not pending:
            widget.add_class("-hidden")
            widget.update("")
            return
        widget.remove_class("-hidden")
        shown = visible(pending[-400:])
        widget.update(
            Text.assemble(("⋯ pending (held back, not parsed yet) ", "bold #8a8f98"), (shown, "dim italic"))
        )
