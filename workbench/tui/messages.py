"""Messages that carry results from worker threads to the UI.

Workers never touch widgets: they post one of these to the app, which updates the workspace and tells the
visible screen.  ``StepsAdvanced`` arrives at model speed and is coalesced (``can_replace``): the step log,
not the message, holds the steps, so a replaced message loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from workbench.analysis import Analysis
from workbench.engine.loaded import LoadedModel
from workbench.session import Session
from workbench.validate import ValidationReport


@dataclass
class TemplateRendered(Message):
    """The live preview render finished (``error`` set when the template failed)."""

    text: str
    error: str = ""
    line: int | None = None
    revision: int = 0


@dataclass
class AnalysisDone(Message):
    """The analysis of one template text; ``template_sha`` is that text's sha256 (64 hex digits), so the
    app can tell later whether the text being edited is still the analysed one."""

    analysis: Analysis
    template_sha: str


@dataclass
class AnalysisFailed(Message):
    error: str


@dataclass
class ValidationDone(Message):
    """A validation report (``report`` is the core's object, ``summary`` one line for status bars)."""

    report: ValidationReport | None
    summary: str
    error: str = ""


@dataclass
class ModelReady(Message):
    name: str
    loaded: LoadedModel
    notice: str = ""


@dataclass
class ModelFailed(Message):
    error: str


@dataclass
class ModelProgress(Message):
    text: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ModelProgress)


@dataclass
class SessionLoaded(Message):
    session: Session
    path: str


@dataclass
class StepsAdvanced(Message):
    """The step log changed (new steps, or a rewind); views read the log to catch up."""

    total: int
    epoch: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StepsAdvanced)


@dataclass
class EngineStateChanged(Message):
    """Running / paused / finished / constrained changed, or a control was refused (``notice``)."""

    running: bool
    finished: bool
    constrained: bool
    notice: str = ""
    severity: str = "information"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExportDone(Message):
    """An export finished: ``path`` written, or ``error`` says why not (e.g. the spec is not validated)."""

    target: str
    path: str
    error: str = ""
    warnings: tuple[str, ...] = ()
