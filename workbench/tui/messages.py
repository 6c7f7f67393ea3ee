"""The app's messages: intents that screens post, and results that workers post.

Intents (``Request*``) say what the user asked for; the app hands them to a workflow in
:mod:`workbench.tui.controllers`.  Results carry what a worker computed: workers never touch widgets or
workspace fields, they post one of these and the app updates the workspace and tells the visible screen.
``StepsAdvanced`` arrives at model speed and is coalesced (``can_replace``): the step log, not the message,
holds the steps, so a replaced message loses nothing.  Worker failures are not messages of their own: the
app turns them into the matching result in one place (:mod:`workbench.tui.failures`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from textual.message import Message

from workbench.analysis import Analysis
from workbench.generation.loaded import LoadedModel
from workbench.runtime.spec import FormatSpec
from workbench.session import Session
from workbench.tui.errors import Severity

if TYPE_CHECKING:  # types only: the app imports this module before its first screen is drawn
    from workbench.analysis import Analysis
    from workbench.generation.loaded import LoadedModel
    from workbench.runtime.spec import FormatSpec
    from workbench.session import Session
    from workbench.tui.steps import Driver
    from workbench.validate import ValidationReport

ToolChoice = Literal["auto", "required", "none"]


# ---------------------------------------------------------------------- intents (screens -> app)
@dataclass
class RequestAnalysis(Message):
    """Analyze the template text being edited (replaces the analysis when it succeeds)."""


@dataclass
class RequestValidation(Message):
    """Validate the current spec against the edited template; ``quiet`` skips the "no spec" warning."""

    quiet: bool = False


@dataclass
class RequestSpecEdit(Message):
    """Install a spec the user edited (already checked by ``FormatSpec.with_edit``) and re-validate."""

    spec: FormatSpec
    note: str = ""


@dataclass
class RequestGenerate(Message):
    """Start a new generation for the user message ``text`` (empty: continue the conversation as it is,
    e.g. after a tool result)."""

    text: str
    tool_choice: ToolChoice = "auto"
    constrain: bool = True
    start_paused: bool = False  # read the prompt, then wait for the first step
    # A named tool choice: force a call of this tool (OpenAI's {"type": "function", "function": {"name"}});
    # when set it overrides ``tool_choice``.
    tool_name: str = ""
    parallel: bool = True  # parallel_tool_calls: off allows at most one call


@dataclass
class RequestExport(Message):
    """Export the current spec as ``target`` to ``path`` (``force`` exports an unvalidated spec).

    ``overwrite`` is set only after the user said yes to replacing an existing file; without it the export
    is refused when ``path`` exists, so no key pressed by accident can destroy a file.
    """

    target: str
    path: str
    force: bool = False
    overwrite: bool = False


# ---------------------------------------------------------------------- results (workers -> app)


@dataclass
class Warmed(Message):
    """The modules the app loads after its first paint are loaded (``error``: why not)."""

    error: str = ""


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
    app can tell later whether the text being edited is still the analyzed one."""

    analysis: Analysis
    template_sha: str
    # False when the spec in use came from a file or a session: the analysis is shown (probes, diffs) but
    # does not replace that spec.  An explicit re-analysis replaces it.
    replace_spec: bool = True


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
class SpecLoaded(Message):
    """A spec read from ``path`` (a spec file or ``workbench analyze --json`` output)."""

    spec: FormatSpec
    path: str


@dataclass
class ModelReady(Message):
    name: str
    loaded: LoadedModel
    notice: str = ""


@dataclass
class ModelFailed(Message):
    error: str


class Latest(Message):
    """A message only the newest of which matters (progress, a count): a newer one waiting in the queue
    replaces it (textual's ``can_replace``), so a burst of them costs one update, not one each."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, type(self))


@dataclass
class ModelProgress(Latest):
    text: str


@dataclass
class SessionLoaded(Message):
    session: Session
    path: str


@dataclass
class StepsAdvanced(Latest):
    """The step log changed (new steps, or a rewind); views read the log to catch up."""

    total: int
    epoch: int


@dataclass
class EngineStateChanged(Message):
    """Running / paused / finished / constrained changed, or a control was refused (``notice``)."""

    running: bool
    finished: bool
    constrained: bool
    notice: str = ""
    severity: Severity = "information"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class DriverReady(Message):
    """A generation started: ``driver`` is what the inspector's controls act on from now on."""

    driver: Driver


@dataclass
class GrammarAnswered(Message):
    """The grammar answered the inspector: where it is (``where``), or a "why masked" / trial-string answer.

    ``position`` is a ``workbench.generation.why.GrammarPosition`` (``kind == "where"``); ``text`` the
    answer's one paragraph otherwise.  ``at`` is the step count it was asked at, so a stale answer is
    recognised.
    """

    kind: Literal["where", "why", "try"]
    at: int
    epoch: int
    text: str = ""
    ok: bool = True
    position: Any = None


@dataclass
class EngineFailed(Message):
    """An engine job stopped early or a control was refused; ``notice`` says why."""

    notice: str
    severity: Severity = "warning"


@dataclass
class ExportDone(Message):
    """An export finished: ``path`` written, or ``error`` says why not (e.g. the spec is not validated)."""

    target: str
    path: str
    error: str = ""
    warnings: tuple[str, ...] = ()
    spec: FormatSpec | None = None  # the spec written (set on success)
