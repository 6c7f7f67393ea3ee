"""The small contract a format family fulfils: one object that says everything about one tool-call format.

Each stage reads the piece it needs from the family registered under ``ToolsSpec.format``
(:data:`workbench.formats.FORMATS`): the analyzer its detector, the streaming parser its
:class:`~workbench.parsing.tools_base.ToolParser` (or, for a format whose whole turn has its own structure,
its turn machine), the grammar builder its :class:`~workbench.grammar.tool_grammar.ToolGrammar`, the sample
writer its call writer, the exports their hooks.  The stage packages keep only the generic machinery.

The stage classes are referenced only for type checking here, so a family module can import the stage
machinery it builds on without the stages importing the registry at module load (they read it lazily).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workbench.analysis.renders import ProbeResult
    from workbench.analysis.state import Findings
    from workbench.analysis.tools import CallRegion
    from workbench.chat import Tool
    from workbench.grammar.tool_grammar import ToolGrammar
    from workbench.parsing.core import Machine
    from workbench.parsing.options import ParseOptions
    from workbench.parsing.tools_base import ToolParser
    from workbench.spec import FormatSpec, TurnLayout


@dataclass(frozen=True)
class SampleCall:
    """One call to write: a name, its arguments (a JSON object) and an optional id."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""


#: ``(findings, call region, probe T1) -> claimed?``: a dedicated detector fills the spec and returns True.
Detector = Callable[["Findings", "CallRegion", "ProbeResult"], bool]


class CallWriter(Protocol):
    """The tool-call part of an output, as a model following the spec writes it.

    ``tools`` gives the parameters' schemas, which decide how a value is written where the format writes
    values raw (see :mod:`workbench.formats.values`); without them a string is taken for a string parameter.
    """

    def __call__(
        self, spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None
    ) -> str: ...


#: ``(spec, reasoning, content, calls, end) -> text``: a whole output, for formats whose turn has its own
#: structure (Harmony writes reasoning and answers as channel messages, not with the spec's markers).
OutputWriter = Callable[["FormatSpec", str, str, Sequence[SampleCall], bool], str]
#: ``(spec, tools, options) -> machine``: the parser of a whole turn.
TurnMachineFactory = Callable[["FormatSpec", "Sequence[Tool] | None", "ParseOptions"], "Machine"]
#: ``layout -> layout | None``: a family's protocol rules that no template renders (escapes, verbatim blocks,
#: header attributes), added to a learned layout written in the family's own tokens (None: not its tokens).
LayoutProtocol = Callable[["TurnLayout"], "TurnLayout | None"]
#: ``spec -> {"tool_calls": {...}}`` (and, for Harmony, the reasoning and content regions too): the part of
#: a transformers ``response_template`` this format contributes.
ResponseFields = Callable[["FormatSpec"], dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class FormatFamily:
    """Everything about one tool-call format, registered under its ``ToolsSpec.format`` value.

    Attributes:
        name: the ``ToolsSpec.format`` value (the one name of the format in every stage).
        grammar: builds the xgrammar structural tag of a tool section (generation and the structural-tag
            export share it).
        write_calls: the sample writer (the inverse of parsing: round trips, fuzzing, demos).
        parser: reads the format's tool sections inside an ordinary turn (reasoning + content + calls).
        turn_machine: reads a whole turn that has its own structure (Harmony); set instead of ``parser``.
        write_output: writes a whole output, for formats with a ``turn_machine``.
        detect: a dedicated detector, for formats the generic diffs cannot describe; families with one are
            tried in registry order before the generic analysis.
        response_fields: the response-template export hook; None when a response template cannot read the
            format, and then ``response_template_gap`` says why.
        response_template_gap: why the response-template export cannot express the format.
        layout_protocol: rules of the family's protocol that no template renders, added to a learned layout
            that speaks the family's tokens (Harmony: OpenChatML's escapes, literal blocks, ``call_id=``).
    """

    name: str
    grammar: type[ToolGrammar]
    write_calls: CallWriter
    parser: type[ToolParser] | None = None
    turn_machine: TurnMachineFactory | None = None
    write_output: OutputWriter | None = None
    detect: Detector | None = None
    response_fields: ResponseFields | None = None
    response_template_gap: str = ""
    layout_protocol: LayoutProtocol | None = None

    def __post_init__(self) -> None:
        if (self.parser is None) == (self.turn_machine is None):
            raise ValueError(f"format {self.name!r}: give exactly one of parser and turn_machine")
        if self.response_fields is None and not self.response_template_gap:
            raise ValueError(
                f"format {self.name!r}: without response_fields, say why (response_template_gap)"
            )
