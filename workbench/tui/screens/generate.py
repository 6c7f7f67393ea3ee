"""Generate screen: a conversation (system prompt, turns, tool results), the output streaming live in span
colours, and the parsed message beside it.

The output and the parsed message are read from the step log, which the engine worker fills; this screen
only draws what is new since it last looked (a rewind makes it start over).  The conversation lives in the
workspace; ``tui/controllers/generate.py`` keeps it (this screen only draws it and asks).
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
from textual.containers import Horizontal, Vertical
from textual.widgets import Checkbox, Input, Select, Static

from workbench.tui.controllers import generate as conversation
from workbench.tui.messages import RequestGenerate, ToolChoice
from workbench.tui.palette import visible
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.modals import ConfirmScreen, ToolResultScreen
from workbench.tui.screens.status import engine_status
from workbench.tui.widgets.notice import Notice
from workbench.tui.widgets.panes import text_pane
from workbench.tui.widgets.spans import SpanLegend, SpanStream
from workbench.tui.widgets.toggles import GlyphCheckbox

TOOL_CHOICES: tuple[ToolChoice, ...] = get_args(ToolChoice)
NAMED = "tool:"  # prefix of a named tool choice's Select value


def choice_options(tool_names: list[str]) -> list[tuple[str, str]]:
    """auto / required / none, then one named choice per tool ("→ name" forces that tool)."""
    return [(c, c) for c in TOOL_CHOICES] + [(f"→ {n}", NAMED + n) for n in tool_names]


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
        Binding("t", "tool_result", "Tool result"),
        Binding("n", "new_conversation", "New chat"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._seen_steps = 0
        self._epoch = -1
        self.parsed_json = ""  # what the parsed-message pane shows, as text
        self.pending_text = ""  # the held-back text drawn under the output
        self._tools_seen: str | None = None  # the tools JSON the tool-choice options were built from
        self.turns: list[tuple[str, str]] = []  # what the conversation pane shows

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.wb.ensure_model()  # the model loads when a screen that uses it first opens

    def compose_body(self) -> ComposeResult:
        yield Static(id="gen-status")
        yield Notice(id="gen-notice", classes="-hidden")
        with Horizontal(id="gen-main"):
            with Vertical(id="output-pane") as out:
                out.border_title = "model output"
                yield SpanStream(id="output")
                yield Static(id="pending", classes="-hidden")
                yield SpanLegend(id="legend")
            with Vertical(id="side"):
                yield text_pane("turns-pane", "conversation (n: new)", "turns")
                yield text_pane("parsed-pane", "parsed message", "parsed")
        with Horizontal(id="options-row"):
            yield Select(choice_options([]), value="auto", allow_blank=False, id="tool-choice")
            yield GlyphCheckbox("constrain", True, id="constrain")
            yield GlyphCheckbox(
                "parallel", True, id="parallel", tooltip="parallel_tool_calls: off allows one call"
            )
            yield GlyphCheckbox(
                "paused", False, id="start-paused", tooltip="start paused: read the prompt, wait"
            )
        with Horizontal(id="chat-row"):
            yield Input(
                placeholder="Ask something and press enter (continues the conversation; tools from Template)",
                id="chat",
            )
            yield Input(placeholder="system prompt (optional)", id="system")

    def focus_chat(self) -> None:
        self.query_one("#chat", Input).focus()

    def action_focus_chat(self) -> None:
        self.focus_chat()

    @on(Input.Submitted, "#chat")
    def _send(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        self.request_generation(text)
        event.input.value = ""
        self.set_focus(None)

    def request_generation(self, text: str) -> None:
        """Ask for the next assistant turn: after ``text`` as a user turn, or (empty) after the turns as
        they are (a tool result was just added)."""
        choice = str(self.query_one("#tool-choice", Select).value)
        tool_choice: ToolChoice = "auto"
        for known in TOOL_CHOICES:  # narrow the Select's value to the closed set
            if known == choice:
                tool_choice = known
        tool_name = choice[len(NAMED) :] if choice.startswith(NAMED) else ""
        self.post_message(
            RequestGenerate(
                text,
                tool_choice=tool_choice,
                constrain=bool(self.query_one("#constrain", Checkbox).value),
                start_paused=bool(self.query_one("#start-paused", Checkbox).value),
                tool_name=tool_name,
                parallel=bool(self.query_one("#parallel", Checkbox).value),
            )
        )

    @on(Input.Changed, "#system")
    def _system_changed(self, event: Input.Changed) -> None:
        if self.ws.system_prompt != event.value:
            self.ws.system_prompt = event.value
            self._draw_turns()

    def action_tool_result(self) -> None:
        """Type a result for the first unanswered call of the last assistant turn, then generate on."""
        calls = conversation.pending_calls(self.ws)
        if not calls:
            self.notify(
                "no tool call to answer: the last assistant turn has none (or it is still being written)",
                title="Tool result",
                severity="warning",
            )
            return
        call = calls[0]

        def answered(result: tuple[str, str] | None) -> None:
            if result is None:
                return
            call_id, content = result
            left = conversation.accept_tool_result(
                self.ws, conversation.PendingCall(call_id, call.name, call.arguments), content
            )
            self._draw_turns()
            if left:
                self.notify(f"{left} more call(s) to answer: press t", title="Tool result")
                return
            self.request_generation("")

        self.app.push_screen(
            ToolResultScreen(call.call_id, call.name, call.arguments, len(calls) - 1), answered
        )

    def action_new_conversation(self) -> None:
        """Start over with no turns (the system prompt stays); asks first when there are turns to lose."""
        count = conversation.turn_count(self.ws)
        if not count and not self.ws.conversation_open:
            self.notify("the conversation is already empty: type a message (i)", title="New conversation")
            return

        def decided(yes: bool | None) -> None:
            if yes:
                conversation.clear_conversation(self.ws)
                self._draw_turns()
                self.notify("new conversation: the next message starts it", title="New conversation")

        self.app.push_screen(
            ConfirmScreen(f"Start a new conversation? {count} turn(s) will be forgotten."), decided
        )

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
        self._sync_tool_choices()
        self._draw_turns()
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

    def _sync_tool_choices(self) -> None:
        """Offer a named choice per tool of the Template screen's tools JSON (rebuilt when it changes)."""
        ws = self.ws
        if ws.tools_json == self._tools_seen:
            return
        self._tools_seen = ws.tools_json
        try:
            names = [t.name for t in ws.parse_tools()]
        except ValueError:  # bad tools JSON: the Template screen says so; keep the plain choices
            names = []
        select = self.query_one("#tool-choice", Select)
        current = select.value
        options = choice_options(names)
        select.set_options(options)
        select.value = current if any(v == current for _, v in options) else "auto"
        system = self.query_one("#system", Input)
        if system.value != ws.system_prompt:
            system.value = ws.system_prompt

    def _draw_turns(self) -> None:
        """The conversation, one compact line a turn (the answer being written marked ``assistant…``)."""
        self.turns = conversation.turn_lines(self.ws, width=200)
        out = Text(no_wrap=True, overflow="ellipsis")  # one line a turn: the pane cuts it at its width
        if not self.turns:
            out.append("no turns yet: the first message starts the conversation", style="dim")
        styles = {"system": "#bb9af7", "user": "#7aa2f7", "assistant": "#9ece6a"}
        for i, (role, text) in enumerate(self.turns):
            if i:
                out.append("\n")
            out.append(f"{role:<10} ", style="bold " + styles.get(role.split()[0].rstrip("…"), "#e0af68"))
            out.append(text)
        calls = conversation.pending_calls(self.ws)
        if calls:
            out.append(f"\n{len(calls)} call(s) to answer: t types a tool result", style="italic #e0af68")
        self.query_one("#turns", Static).update(out)
        self.query_one("#turns-pane").scroll_end(animate=False)  # the newest turns matter most
