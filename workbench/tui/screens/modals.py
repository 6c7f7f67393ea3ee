"""Small dialogs: confirm a destructive action, edit one spec field, choose a token to force."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, TextArea

from workbench.generation.step import Step
from workbench.runtime.spec import FormatSpec
from workbench.tui.guard import Guarded
from workbench.tui.spec_fields import apply_edit, editor_kind, editor_text


class ConfirmScreen(Guarded, ModalScreen[bool]):
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


class EditFieldScreen(Guarded, ModalScreen[FormatSpec | None]):
    """Edit one spec field as JSON: a marker or a mode on one line, a part (the call pattern, an argument
    variant, an encoding) or a list as a document over several lines.

    The editor starts with the field's JSON form (:func:`workbench.tui.spec_fields.editor_text`), which every
    spec value has, so opening it never fails; submitting it unchanged closes it with no edit.  The edited
    spec is checked by ``FormatSpec.with_edit`` before the dialog closes, and errors stay in the dialog with
    the text as typed.  ``enter`` submits a one-line value, ``ctrl+s`` (or the Save button) either kind.
    """

    DEFAULT_CSS = """
    EditFieldScreen { align: center middle; }
    EditFieldScreen > Vertical { width: 90%; max-width: 110; height: auto; max-height: 90%;
                                 border: thick $accent; background: $surface; padding: 0 1; }
    EditFieldScreen #edit-error { color: $error; height: auto; }
    EditFieldScreen #edit-document { height: 16; }
    EditFieldScreen Horizontal { height: auto; align-horizontal: right; }
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
        value = spec.value_at(path)
        self.kind = editor_kind(value)
        self.initial = editor_text(value)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text.assemble(("Edit ", "bold"), (self.path, "bold #e0af68")))
            if self.description:
                yield Static(self.description, classes="hint")
            if self.allowed:
                yield Static(
                    Text.assemble(("allowed values: ", "bold"), (", ".join(self.allowed), "#7fa7d9")),
                    id="edit-allowed",
                )
            if self.kind == "document":
                yield Static(
                    "JSON, as in the spec file (strings in quotes, \\n for a newline); "
                    "pattern parts are literal text or the slots $name $id $index $args ($key $value in "
                    "an argument)",
                    classes="hint",
                )
                yield TextArea(self.initial, id="edit-document", language=None, soft_wrap=True)
            else:
                yield Static(
                    'Type a JSON value: strings in quotes ("<tool_call>\\n"), true/false, numbers.',
                    classes="hint",
                )
                yield Input(self.initial, id="edit-value")
            yield Static("", id="edit-error")
            with Horizontal():
                yield Static(
                    ("enter" if self.kind == "line" else "ctrl+s") + " saves · escape cancels", classes="hint"
                )
                yield Button("Save (ctrl+s)", id="edit-save", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#edit-document" if self.kind == "document" else "#edit-value").focus()

    def typed(self) -> str:
        """The text in the editor now."""
        if self.kind == "document":
            return self.query_one("#edit-document", TextArea).text
        return self.query_one("#edit-value", Input).value

    def action_submit(self) -> None:
        """Check the typed value and close with the edited spec (None: unchanged); errors stay here."""
        try:
            edited = apply_edit(self.spec, self.path, self.typed(), self.allowed)
        except ValueError as exc:  # not JSON, or a SpecError naming the field
            self.query_one("#edit-error", Static).update(Text(str(exc)))
            return
        self.dismiss(edited)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_submit()


T = TypeVar("T")


class InputDialog(Guarded, ModalScreen[T]):
    """A dialog that asks for a line or two of input: a bold title, a hint, the inputs, and a line saying
    what the keys do; escape cancels (None).

    Forcing a token, asking the grammar and typing a tool result are such dialogs: one frame, so they look
    and close alike.  Subclasses give the :meth:`hint` and the :meth:`inputs`.
    """

    DEFAULT_CSS = """
    InputDialog { align: center middle; }
    InputDialog > Vertical { width: 80%; max-width: 90; height: auto; border: thick $accent;
                             background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, keys: str) -> None:
        super().__init__()
        self.title_text = title
        self.keys_line = keys

    def hint(self) -> str | Text:
        raise NotImplementedError

    def inputs(self) -> ComposeResult:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            yield Static(self.hint(), classes="hint")
            yield from self.inputs()
            yield Static(self.keys_line, classes="hint")


class ForceTokenScreen(InputDialog[str | None]):
    """Ask for the token to force: an id, or text that is one token.  The last step's candidates are listed
    as a reminder of what the model wanted and what the mask allowed."""

    def __init__(self, last: Step | None) -> None:
        super().__init__(
            "Force the next token",
            "enter forces · escape cancels · a masked token is refused with the reason",
        )
        self.last = last

    def inputs(self) -> ComposeResult:
        yield Input(placeholder="token id (e.g. 151657) or the token's text", id="force-value")

    def hint(self) -> Text:
        out = Text(
            "the previous step's candidates (the next step's mask is checked when you force): ", style="dim"
        )
        for c in self.last.candidates[:6] if self.last else ():
            out.append(f"{c.token_id}:{c.text!r} ", style="green" if c.allowed else "strike #8a6a6a")
        return out

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value if event.value.strip() else None)


class AskScreen(InputDialog[str | None]):
    """Ask the grammar something: one line of input (a token for "why masked", a string to test)."""

    def __init__(self, title: str, hint: str, value: str = "", *, purpose: str = "") -> None:
        super().__init__(title, "enter asks · escape cancels")
        self.hint_text = hint
        self.value = value
        #: What the question is for ("load-spec"): the app asks a question once, never twice over itself.
        self.purpose = purpose

    def hint(self) -> str:
        return self.hint_text

    def inputs(self) -> ComposeResult:
        yield Input(self.value, id="ask-value")

    def on_mount(self) -> None:
        self.query_one("#ask-value", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value if event.value else None)


class ToolResultScreen(InputDialog[tuple[str, str] | None]):
    """Type a tool's result for one call of the last assistant turn (its id pre-filled), so the next
    assistant turn can be generated from it.  Returns (call id, result text) or None."""

    def __init__(self, call_id: str, name: str, arguments: str, remaining: int = 0) -> None:
        more = f" · {remaining} more call(s) after this one" if remaining else ""
        super().__init__(
            f"Tool result for {name}", f"enter adds the result and, when every call has one, generates{more}"
        )
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.remaining = remaining

    def hint(self) -> Text:
        return Text(f"{self.tool_name}({self.arguments})", style="dim")

    def inputs(self) -> ComposeResult:
        yield Input(self.call_id, placeholder="tool_call_id", id="tool-call-id")
        yield Input(placeholder='the result, e.g. {"temp_c": 18}', id="tool-result")

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
