"""Small dialogs: confirm a destructive action, edit one spec field, choose a token to force."""

from __future__ import annotations

import json
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from workbench.generation.step import Step
from workbench.runtime.spec import FormatSpec, SpecError


def _get_path(spec: FormatSpec, path: str) -> object:
    obj: object = spec
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


class ConfirmScreen(ModalScreen[bool]):
    """Ask before something that cannot be undone (overwrite a file, discard edits).

    The answer defaults to no: ``enter`` on the focused "No" button, ``escape`` and ``n`` all decline, so a
    key typed by habit never destroys anything; only ``y`` or the "Yes" button agree.
    """

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 70%; max-width: 80; height: auto; border: thick $warning;
                               background: $surface; padding: 0 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "dismiss(False)", "No"),
        Binding("y", "dismiss(True)", "Yes"),
    ]

    def __init__(self, question: str, detail: str = "", *, yes: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.question, style="bold"))
            if self.detail:
                yield Static(self.detail, classes="hint")
            yield Static("y: yes · n / escape / enter: no", classes="hint")
            with Horizontal():
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="warning")
                yield Button("No (n)", id="confirm-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")


class EditFieldScreen(ModalScreen[FormatSpec | None]):
    """Edit one spec field.  The value is typed as a JSON string (so ``\\n`` is a newline); the edited spec
    is checked by ``FormatSpec.with_edit`` before the dialog closes, and errors stay in the dialog."""

    DEFAULT_CSS = """
    EditFieldScreen { align: center middle; }
    EditFieldScreen > Vertical { width: 80%; max-width: 90; height: auto; border: thick $accent;
                                 background: $surface; padding: 0 1; }
    EditFieldScreen #edit-error { color: $error; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(
        self, spec: FormatSpec, path: str, *, allowed: tuple[str, ...] = (), description: str = ""
    ) -> None:
        super().__init__()
        self.spec = spec
        self.path = path
        self.allowed = allowed
        self.description = description

    def compose(self) -> ComposeResult:
        value = _get_path(self.spec, self.path)
        with Vertical():
            yield Label(Text.assemble(("Edit ", "bold"), (self.path, "bold #e0af68")))
            if self.description:
                yield Static(self.description, classes="hint")
            if self.allowed:
                yield Static(
                    Text.assemble(("allowed values: ", "bold"), (", ".join(self.allowed), "#7fa7d9")),
                    id="edit-allowed",
                )
            yield Static(
                'Type a JSON value: strings in quotes ("<tool_call>\\n"), true/false, lists.', classes="hint"
            )
            yield Input(json.dumps(value, ensure_ascii=False), id="edit-value")
            yield Static("", id="edit-error")
            yield Static("enter saves · escape cancels", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        error = self.query_one("#edit-error", Static)
        try:
            value = json.loads(event.value)
        except json.JSONDecodeError as exc:
            if event.value.strip() not in self.allowed:  # an enum value may be typed without quotes
                error.update(f"not JSON: {exc.msg} (strings need quotes)")
                return
            value = event.value.strip()
        if isinstance(value, list):
            value = tuple(value)
        try:
            edited = self.spec.with_edit(**{self.path: value})
        except SpecError as exc:
            error.update(str(exc))
            return
        self.dismiss(edited)


class ForceTokenScreen(ModalScreen[str | None]):
    """Ask for the token to force: an id, or text that is one token.  The last step's candidates are listed
    as a reminder of what the model wanted and what the mask allowed."""

    DEFAULT_CSS = """
    ForceTokenScreen { align: center middle; }
    ForceTokenScreen > Vertical { width: 80%; max-width: 90; height: auto; border: thick $accent;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, last: Step | None) -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("Force the next token", style="bold"))
            yield Static(self._hint(), classes="hint")
            yield Input(placeholder="token id (e.g. 151657) or the token's text", id="force-value")
            yield Static(
                "enter forces · escape cancels · a masked token is refused with the reason", classes="hint"
            )

    def _hint(self) -> Text:
        out = Text(
            "the previous step's candidates (the next step's mask is checked when you force): ", style="dim"
        )
        for c in self.last.candidates[:6] if self.last else ():
            out.append(f"{c.token_id}:{c.text!r} ", style="green" if c.allowed else "strike #8a6a6a")
        return out

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value if event.value.strip() else None)


class AskScreen(ModalScreen[str | None]):
    """Ask the grammar something: one line of input (a token for "why masked", a string to test)."""

    DEFAULT_CSS = """
    AskScreen { align: center middle; }
    AskScreen > Vertical { width: 80%; max-width: 90; height: auto; border: thick $accent;
                           background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, hint: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.hint = hint
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            yield Static(self.hint, classes="hint")
            yield Input(self.value, id="ask-value")
            yield Static("enter asks · escape cancels", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#ask-value", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value if event.value else None)


class ToolResultScreen(ModalScreen[tuple[str, str] | None]):
    """Type a tool's result for one call of the last assistant turn (its id pre-filled), so the next
    assistant turn can be generated from it.  Returns (call id, result text) or None."""

    DEFAULT_CSS = """
    ToolResultScreen { align: center middle; }
    ToolResultScreen > Vertical { width: 80%; max-width: 90; height: auto; border: thick $accent;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, call_id: str, name: str, arguments: str, remaining: int = 0) -> None:
        super().__init__()
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.remaining = remaining

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Tool result for {self.tool_name}", style="bold"))
            yield Static(Text(f"{self.tool_name}({self.arguments})", style="dim"), classes="hint")
            yield Input(self.call_id, placeholder="tool_call_id", id="tool-call-id")
            yield Input(placeholder='the result, e.g. {"temp_c": 18}', id="tool-result")
            more = f" · {self.remaining} more call(s) after this one" if self.remaining else ""
            yield Static(
                f"enter adds the result and, when every call has one, generates{more}", classes="hint"
            )

    def on_mount(self) -> None:
        self.query_one("#tool-result", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        call_id = self.query_one("#tool-call-id", Input).value.strip()
        result = self.query_one("#tool-result", Input).value
        if event.input.id == "tool-call-id":
            self.query_one("#tool-result", Input).focus()
            return
        self.dismiss((call_id, result) if call_id else None)
