"""Template screen: the source with highlighting, the conversation and kwargs, and a live render preview.

Every edit is written to the workspace at once (never lost), and the preview re-renders a moment after the
last keystroke in a worker (templates are untrusted and may be slow).  A render error names its template
line, which is marked in the editor.

The Kwargs tab offers the template switches the analysis found (``PromptSpec.switches``), each with the
values it tried and what they change, so nobody guesses variable names.  A chosen value is written to the
extra ``key=value`` field (one place for every kwarg: the preview, generation and saved sessions read it),
re-renders the preview and re-validates, the TUI's ``--kw``.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Checkbox, Input, Label, Select, Static, TabbedContent, TabPane, TextArea

from workbench.template.render import TemplateError, render
from workbench.tui.controllers.template_file import (
    TemplateSave,
    accept_template_save,
    plan_chosen_save,
    plan_template_save,
)
from workbench.tui.errors import Refused, one_line
from workbench.tui.messages import RequestValidation, TemplateRendered
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.modals import AskScreen, ConfirmScreen
from workbench.tui.switches import Switch, switches_of, validation_kwargs, with_pair
from workbench.tui.widgets.jinja_editor import JinjaEditor
from workbench.tui.widgets.notice import Notice
from workbench.tui.widgets.panes import text_pane
from workbench.tui.widgets.spans import highlight_markers
from workbench.tui.widgets.toggles import GlyphCheckbox
from workbench.tui.workspace import REASONING_EFFORTS

RENDER_DELAY = 0.25


class TemplateScreen(WorkbenchScreen):
    MODE = "template"
    TITLE_TEXT = "Template"
    CSS_PATH = str(Path(__file__).parent.parent / "template.tcss")
    TOPICS = ("template", "spec", "analysis")
    AUTO_FOCUS = "#preview-pane"
    BINDINGS: ClassVar[list[BindingType]] = [
        *WorkbenchScreen.BINDINGS,
        Binding("e", "goto_error", "Go to error line"),
        Binding("f6", "show_tab('messages')", "Messages tab", priority=True, show=False),
        Binding("f7", "show_tab('tools')", "Tools tab", priority=True, show=False),
        Binding("f8", "show_tab('kwargs')", "Kwargs tab", priority=True, show=False),
        Binding(
            "ctrl+right_square_bracket", "indent", "Indent (in the editor)", key_display="ctrl+]", show=False
        ),
        Binding("ctrl+s", "app.save", "Save template"),
        Binding("ctrl+r", "app.analyze", "Analyze"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._timer: Timer | None = None
        self._render_rev = 0
        self._error_line: int | None = None
        self._last_text = ""
        self._switches: list[Switch] | None = None  # the switches the Kwargs tab's selects were built for

    def compose_body(self) -> ComposeResult:
        ws = self.ws
        with Horizontal(id="template-main"):
            with Vertical(id="source-pane"):
                yield JinjaEditor(ws.template_text, id="source")
                yield Notice(id="render-error", classes="-hidden")
            with Vertical(id="side"):
                with TabbedContent(id="inputs"):
                    with TabPane("Messages F6", id="tab-messages"):
                        yield TextArea(
                            ws.messages_json, id="messages", soft_wrap=True, show_line_numbers=False
                        )
                    with TabPane("Tools F7", id="tab-tools"):
                        yield TextArea(ws.tools_json, id="tools", soft_wrap=True, show_line_numbers=False)
                    with TabPane("Kwargs F8", id="tab-kwargs"), VerticalScroll():
                        yield GlyphCheckbox(
                            "add_generation_prompt", ws.kwargs.add_generation_prompt, id="kw-agp"
                        )
                        yield GlyphCheckbox("enable_thinking", ws.kwargs.enable_thinking, id="kw-think")
                        yield Select(
                            [(e or "(not set)", e) for e in REASONING_EFFORTS],
                            value=ws.kwargs.reasoning_effort,
                            allow_blank=False,
                            id="kw-effort",
                            prompt="reasoning_effort",
                        )
                        yield Input(
                            ws.kwargs.extra, placeholder="more kwargs: key=value key2=true", id="kw-extra"
                        )
                        yield Static(id="kw-switches-title")
                        yield Vertical(id="kw-switches")
                yield text_pane("preview-pane", "render preview", "preview")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#source", JinjaEditor).border_title = self._source_title()
        self._schedule(0)

    def _source_title(self) -> str:
        src = self.ws.source
        edited = " · edited" if self.ws.template_text != src.text else ""
        return f"{src.name}{edited}"

    def sync(self, topics: set[str]) -> None:
        editor = self.query_one("#source", JinjaEditor)
        if "template" in topics and editor.text != self.ws.template_text:
            editor.load_text(self.ws.template_text)  # e.g. a session replaced it
        editor.border_title = self._source_title()
        if "template" in topics:
            self._show_kwargs()  # e.g. a session brought the kwargs it was generated with
        if topics & {"template", "spec", "analysis"}:
            self.call_later(self._fill_switches)
        if "spec" in topics:
            self._schedule(0)  # marker highlighting depends on the spec
        self._status()

    # ------------------------------------------------------------------ template switches
    def _show_kwargs(self) -> None:
        """The Kwargs tab's fields from the workspace (no-ops when they already show it)."""
        kw = self.ws.kwargs
        self.query_one("#kw-agp", Checkbox).value = kw.add_generation_prompt
        self.query_one("#kw-think", Checkbox).value = kw.enable_thinking
        self.query_one("#kw-effort", Select).value = kw.reasoning_effort
        extra = self.query_one("#kw-extra", Input)
        if extra.value != kw.extra:
            extra.value = kw.extra

    async def _fill_switches(self) -> None:
        """One select per switch the analysis found, showing the value the kwargs set (rebuilt only when the
        switches change; otherwise only the shown values follow the kwargs)."""
        switches = switches_of(self.ws.spec)
        title = self.query_one("#kw-switches-title", Static)
        if not switches:
            title.update(Text("template switches: none found (besides enable_thinking)", style="dim"))
        else:
            title.update(Text.assemble(("template switches", "bold"), (" found by the analysis", "dim")))
        # A switch named reasoning_effort replaces the generic choice (its values are the template's).
        self.query_one("#kw-effort", Select).display = all(s.name != "reasoning_effort" for s in switches)
        current = validation_kwargs(self.ws)
        box = self.query_one("#kw-switches", Vertical)
        if switches == self._switches:
            for switch in switches:
                self.query_one(f"#kw-sw-{switch.name}", Select).value = _chosen(switch, current)
            return
        self._switches = switches
        await box.remove_children()
        widgets: list[Any] = []
        for switch in switches:
            widgets.append(Label(f"{switch.name} ({switch.kind})", classes="kw-switch-name"))
            widgets.append(
                Select(
                    switch_options(switch, current),
                    value=_chosen(switch, current),
                    allow_blank=False,
                    id=f"kw-sw-{switch.name}",
                    name=switch.name,
                    classes="kw-switch",
                )
            )
        await box.mount_all(widgets)

    @on(Select.Changed, ".kw-switch")
    def _switch_chosen(self, event: Select.Changed) -> None:
        """A switch value picked: set in the extra kwargs; the preview re-renders, the spec re-validates."""
        ws, name = self.ws, event.select.name or ""
        raw = event.value if isinstance(event.value, str) else ""
        current = validation_kwargs(ws)
        if raw == _chosen_raw(name, current):
            return  # the select only shows what the kwargs already say
        if name == "reasoning_effort" and ws.kwargs.reasoning_effort:
            ws.kwargs.reasoning_effort = ""  # one place for the value: the extra pair
            self.query_one("#kw-effort", Select).value = ""
        if raw:
            ws.kwargs.extra = with_pair(ws.kwargs.extra, name, json.loads(raw))
        else:
            ws.kwargs.extra = with_pair(ws.kwargs.extra, name, unset=True)
        self.query_one("#kw-extra", Input).value = ws.kwargs.extra
        self._schedule(0)
        if ws.spec is not None:
            self.post_message(RequestValidation(quiet=True))

    def _status(self) -> None:
        ws = self.ws
        parts = [ws.source.name]
        if ws.analysis_running:
            parts.append("analyzing…")
        elif ws.analysis_error:
            parts.append("analysis failed (see Analysis)")
        elif ws.template_dirty:
            parts.append("changed since analysis (ctrl+r)")
        self.set_status(" · ".join(parts))

    # ------------------------------------------------------------------ edits -> workspace -> preview
    @on(TextArea.Changed)
    def _text_changed(self, event: TextArea.Changed) -> None:
        ws = self.ws
        if event.text_area.id == "source":
            if ws.template_text == event.text_area.text:
                return
            ws.template_text = event.text_area.text
            event.text_area.border_title = self._source_title()
            self.wb.changed("template")
        elif event.text_area.id == "messages":
            ws.messages_json = event.text_area.text
        elif event.text_area.id == "tools":
            ws.tools_json = event.text_area.text
        self._schedule()

    @on(Checkbox.Changed)
    def _checkbox(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id == "kw-agp":
            self.ws.kwargs.add_generation_prompt = event.value
        elif event.checkbox.id == "kw-think":
            self.ws.kwargs.enable_thinking = event.value
        self._schedule(0)

    @on(Select.Changed, "#kw-effort")
    def _effort(self, event: Select.Changed) -> None:
        self.ws.kwargs.reasoning_effort = str(event.value) if isinstance(event.value, str) else ""
        self._schedule(0)

    @on(Input.Changed, "#kw-extra")
    def _extra(self, event: Input.Changed) -> None:
        self.ws.kwargs.extra = event.value
        self._schedule()

    def _schedule(self, delay: float = RENDER_DELAY) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(delay, self._start_render) if delay else None
        if not delay:
            self._start_render()

    def _start_render(self) -> None:
        ws = self.ws
        self._render_rev += 1
        try:
            messages, tools = ws.render_inputs()
            kwargs = ws.kwargs.to_kwargs()
        except ValueError as exc:  # ChatDataError is a ValueError too
            self.post_message(TemplateRendered("", error=one_line(exc), revision=self._render_rev))
            return
        kwargs.update(ws.source.render_kwargs())
        self.render_job(ws.template_text, messages, tools or None, kwargs, self._render_rev)

    @work(thread=True, exclusive=True, group="render")
    def render_job(self, text: str, messages: list, tools: list | None, kwargs: dict, rev: int) -> None:
        try:
            out = render(text, messages, tools=tools, **kwargs)
        except TemplateError as exc:
            self.post_message(TemplateRendered("", error=exc.detail, line=exc.line, revision=rev))
            return
        except Exception as exc:  # never let a preview take the screen down
            self.post_message(TemplateRendered("", error=one_line(exc), revision=rev))
            return
        self.post_message(TemplateRendered(out, revision=rev))

    def on_template_rendered(self, message: TemplateRendered) -> None:
        if message.revision != self._render_rev:
            return  # a newer edit is already rendering
        notice = self.query_one("#render-error", Notice)
        editor = self.query_one("#source", JinjaEditor)
        self._error_line = message.line
        editor.set_error_line(message.line)
        if message.error:
            where = f"line {message.line}: " if message.line else ""
            notice.show(f"⚠ {where}{message.error}" + ("   (e: go to line)" if message.line else ""), "error")
            return  # keep the last good preview visible
        notice.hide()
        self._last_text = message.text
        self.query_one("#preview", Static).update(self._highlight(message.text))

    def _highlight(self, text: str) -> Text:
        """The render with markers picked out: the spec's markers when there is a spec, and the literal text
        the template writes whole (its author's literals, its tokenizer's added tokens); bos/eos in their
        own colour."""
        # The analysis package loads after the first paint.
        from workbench.analysis.analyzer import template_evidence
        from workbench.analysis.diff import marker_evidence, segmentize

        ws = self.ws
        specials = [t for t in (ws.source.bos_token, ws.source.eos_token) if t]
        with marker_evidence(template_evidence(ws.source)):
            markers = {s.text for s in segmentize(text) if s.is_marker}
        if ws.spec is not None:
            markers.update(ws.spec.all_markers())
            markers.update(ws.spec.preserved_tokens)
        return highlight_markers(text, sorted(markers), specials)

    def action_save_template(self) -> None:
        """``ctrl+s``: save the edited template to its file, asking before replacing anything unseen; a
        template with no file of its own asks where to save it."""
        try:
            plan = plan_template_save(self.ws)
        except Refused as refusal:
            self.notify(refusal.one_line(), title=refusal.title)
            return
        if not plan.choose:
            self._save_to(plan)
            return

        def chosen(typed: str | None) -> None:
            if not typed or not typed.strip():
                self.notify("not saved", title="Template")
                return
            try:
                self._save_to(plan_chosen_save(typed.strip()))
            except Refused as refusal:
                self.notify(refusal.one_line(), title=refusal.title, severity="warning")

        self.app.push_screen(
            AskScreen(
                "Save the template as",
                f"{self.ws.source.name} has no file of its own here (a session's template, a built-in "
                "one, or a Hub id): the file to write",
                str(plan.path),
            ),
            chosen,
        )

    def _save_to(self, plan: TemplateSave) -> None:
        """Write the template to ``plan.path``, asking first when ``plan`` has a question."""

        def write() -> None:
            try:
                accept_template_save(self.ws, plan.path)
            except Exception as exc:  # SessionError from the atomic write (folder not writable, ...)
                self.notify(one_line(exc), title="Save template failed", severity="error")
                return
            self.notify(f"saved {plan.path}", title="Template")
            self.wb.changed("template")

        self.wb.confirm_first(
            bool(plan.question),
            write,
            partial(ConfirmScreen, f"Overwrite {plan.path}?", plan.question, yes="Overwrite"),
            f"not saved: {plan.path} kept",
            "Template",
        )

    def action_show_tab(self, name: str) -> None:
        """Open the Messages, Tools or Kwargs tab and put the cursor in it (reachable from the editor)."""
        self.query_one("#inputs", TabbedContent).active = f"tab-{name}"
        # The pane is shown at once (the switcher sets its display), so its field can take focus now; a
        # later focus would post TabPane.Focused after the next request and switch back.
        target = {"messages": "#messages", "tools": "#tools", "kwargs": "#kw-agp"}[name]
        self.query_one(target).focus()

    def action_indent(self) -> None:
        """Indent at the editor's cursor (``ctrl+]``); outside the editor there is nothing to indent."""
        editor = self.query_one("#source", JinjaEditor)
        if self.focused is not editor:
            self.notify("ctrl+] indents in the template editor: focus it first (tab / click)")
            return
        editor.action_indent()

    def action_goto_error(self) -> None:
        if self._error_line:
            editor = self.query_one("#source", JinjaEditor)
            editor.focus()
            editor.cursor_location = (self._error_line - 1, 0)
            editor.scroll_cursor_visible(center=True)
        else:
            self.notify("no render error")


def switch_options(switch: Switch, current: dict[str, Any]) -> list[tuple[Text, str]]:
    """The select's options: "(not set)", then every value tried with what it changes (values as JSON),
    and the value the kwargs set when the analysis did not try it.  Labels are plain text, never markup
    (a prompt such as ``[ASSISTANT]`` must show as written)."""
    options = [(Text("(not set)"), "")]
    for value in switch.values:
        effect = value.effect if len(value.effect) <= 48 else value.effect[:47] + "…"
        options.append((Text(f"{value.label} · {effect}"), value.label))
    chosen = _chosen_raw(switch.name, current)
    if chosen and chosen not in {raw for _, raw in options}:
        options.append((Text(f"{chosen} · set by hand"), chosen))
    return options


def _chosen_raw(name: str, current: dict[str, Any]) -> str:
    return json.dumps(current[name], ensure_ascii=False) if name in current else ""


def _chosen(switch: Switch, current: dict[str, Any]) -> str:
    return _chosen_raw(switch.name, current)
