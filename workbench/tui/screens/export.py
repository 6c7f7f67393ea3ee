"""Export screen: the spec as JSON, its validation report, and the export targets.

Validation and export belong to ``workbench.validate`` / ``workbench.export``: the screen shows their
report and asks the app to run them; a refusal (not validated, target cannot express the spec) comes back
as a notification saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, RadioSet, Static

from workbench.tui.controllers.export import absolute
from workbench.tui.messages import RequestExport
from workbench.tui.screens.base import WorkbenchScreen
from workbench.tui.screens.modals import ConfirmScreen
from workbench.tui.verdict import Verdict, verdict_of
from workbench.tui.widgets.nav import VERDICT_STYLES
from workbench.tui.widgets.notice import Notice
from workbench.tui.widgets.panes import text_pane
from workbench.tui.widgets.toggles import GlyphRadioButton
from workbench.validate import ValidationReport

TARGETS: tuple[tuple[str, str], ...] = (
    ("spec", "FormatSpec JSON (canonical)"),
    ("response-template", "Hugging Face response_template"),
    ("structural-tag", "xgrammar structural tag"),
    ("tests", "pytest round-trip file"),
    ("lark", "llguidance Lark grammar"),
    ("vllm-plugin", "vLLM tool + reasoning parser plug-in (folder)"),
    ("sglang-plugin", "SGLang detector + launcher (folder)"),
)


def report_text(report: ValidationReport | None) -> Text:
    """A validation report as text: per feature its status and reason, then the notes."""
    if report is None:
        return Text("not validated yet (v validates)", style="dim")
    out = Text()
    colours = {"pass": "#b8f2b0", "fail": "#ff6b6b", "error": "#ff6b6b", "unsupported": "#8a8f98"}
    for name, info in report.features().items():
        status = str(info.get("status", ""))
        out.append(f"{status:>11} ", style=colours.get(status, "bold"))
        out.append(name, style="bold")
        if info.get("reason"):
            out.append(f"  {info['reason']}", style="dim")
        out.append("\n")
    for note in report.notes:
        out.append(f"note: {note}\n", style="italic")
    return out


def export_status(has_spec: bool, verdict: Verdict, *, edited: bool) -> str:
    """The Export screen's status (pure): "ready" only for a validated spec; otherwise what ``s`` will do."""
    if not has_spec:
        return "no spec"
    spec = "edited spec" if edited else "spec"
    if verdict.green:  # short: the top line's verdict beside it already says "validated"
        return "ready to export (s)"
    if verdict.exportable:  # amber: validated with the plain tools; the export's provenance names the limit
        return "ready to export (s), limits recorded"
    if verdict.state == "running":
        return f"{spec} validating…"
    return f"{spec} not validated: s refuses, S exports anyway"


class ExportScreen(WorkbenchScreen):
    MODE = "export"
    TITLE_TEXT = "Export"
    CSS_PATH = str(Path(__file__).parent.parent / "export.tcss")
    TOPICS = ("spec", "validation", "analysis")
    BINDINGS: ClassVar[list[BindingType]] = [
        *WorkbenchScreen.BINDINGS,
        Binding("v", "app.validate", "Validate"),
        Binding("c", "app.show_cases", "Validation cases"),
        Binding("s", "export", "Save / export"),
        Binding("S", "force_export", "Export unvalidated"),
        Binding("o", "focus_path", "Output path"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def compose_body(self) -> ComposeResult:
        yield Notice(id="export-notice", classes="-hidden")
        with Horizontal(id="export-main"):
            yield text_pane("spec-pane", "spec JSON", "spec-json")
            with Vertical(id="export-side"):
                yield text_pane("report-pane", "validation", "report")
                with Vertical(id="targets-pane") as tp:
                    tp.border_title = "export target"
                    with RadioSet(id="targets"):
                        for i, (key, label) in enumerate(TARGETS):
                            yield GlyphRadioButton(f"{key}: {label}", value=i == 0, id=f"target-{key}")
                    yield Input(placeholder="output path", id="export-path")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#export-path", Input).value = self._default_path("spec")

    def _default_path(self, target: str) -> str:
        stem = self.ws.source.name or "template"
        return {
            "spec": f"{stem}.spec.json",
            "response-template": f"{stem}.response_template.json",
            "structural-tag": f"{stem}.structural_tag.json",
            "tests": f"test_{stem.replace('-', '_')}.py",
            "lark": f"{stem}.lark",
            "vllm-plugin": f"{stem}-vllm-plugin",
            "sglang-plugin": f"{stem}-sglang-plugin",
        }[target]

    def _target(self) -> str:
        pressed = self.query_one("#targets", RadioSet).pressed_index
        return TARGETS[max(0, pressed)][0]

    @on(RadioSet.Changed)
    def _target_changed(self, event: RadioSet.Changed) -> None:
        self.query_one("#export-path", Input).value = self._default_path(self._target())

    def sync(self, topics: set[str]) -> None:
        ws = self.ws
        notice = self.query_one("#export-notice", Notice)
        spec_box = self.query_one("#spec-json", Static)
        if ws.spec is None:
            notice.show(
                ws.analysis_error or "No spec yet: the analysis is running or has not been run.",
                "error" if ws.analysis_error else "empty",
            )
            spec_box.update("")
        else:
            notice.hide()
            spec_box.update(Syntax(ws.spec.to_json(), "json", theme="ansi_dark", word_wrap=True))
        report = self.query_one("#report", Static)
        verdict = verdict_of(ws)
        head = Text.assemble(
            (f" {verdict.label} ", VERDICT_STYLES.get(verdict.state, "bold")), " ", (verdict.text, "bold")
        )
        if ws.spec_edited:
            head.append("  (spec edited by hand)", style="#e0af68")
        report.update(Text.assemble(head, "\n", report_text(ws.validation)))
        self.set_status(export_status(ws.spec is not None, verdict, edited=ws.spec_edited))

    def action_export(self, force: bool = False) -> None:
        ws = self.ws
        if ws.spec is None:
            self.notify("no spec to export yet", severity="warning")
            return
        target = self._target()
        path = self.query_one("#export-path", Input).value.strip() or self._default_path(target)
        if not Path(path).expanduser().exists():
            self.post_message(RequestExport(target, path, force=force))
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(RequestExport(target, path, force=force, overwrite=True))
            else:
                self.notify(f"not exported: {absolute(path)} kept", title="Export")

        self.app.push_screen(
            ConfirmScreen(f"Overwrite {absolute(path)}?", "The file exists.", yes="Overwrite"), answered
        )

    def action_focus_path(self) -> None:
        self.query_one("#export-path", Input).focus()

    @on(Input.Submitted, "#export-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        self.set_focus(None)
        self.action_export()

    def action_force_export(self) -> None:
        self.action_export(force=True)
