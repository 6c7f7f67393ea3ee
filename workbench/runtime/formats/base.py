"""The small contract a format family fulfils at run time: one object that says how one tool-call format is
read, constrained and written.

Each runtime stage reads the piece it needs from the family registered under ``ToolsSpec.format``
(:func:`workbench.runtime.formats.family`): the streaming parser its
:class:`~workbench.runtime.parsing.tools_base.ToolParser` (or, for a format whose whole turn has its own
structure, its turn machine), the grammar assembler its
:class:`~workbench.runtime.grammar.tool_grammar.ToolGrammar`, the sample writer its call writer.  Facts about
one format that generic code needs (does it define a reasoning region of its own?) are attributes here, never
``if format == "x"`` in shared code.  The analysis and export side of a family (its detector, its
response-template hook) live in ``workbench/formats/<name>/``, above the stages they plug into.

The stage classes are referenced only for type checking, so a family module can import the machinery it
builds on without the machinery importing the registry at module load (it reads it lazily).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.grammar.tool_grammar import ToolGrammar
    from workbench.runtime.parsing.core import Machine
    from workbench.runtime.parsing.options import ParseOptions
    from workbench.runtime.parsing.tools_base import ToolParser
    from workbench.runtime.spec import FormatSpec


@dataclass(frozen=True)
class SampleCall:
    """One call to write: a name, its arguments (a JSON object) and an optional id."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""


class CallWriter(Protocol):
    """The tool-call part of an output, as a model following the spec writes it.

    ``tools`` gives the parameters' schemas, which decide how a value is written where the format writes
    values raw (see :mod:`workbench.runtime.values`); without them a string is taken for a string parameter.
    """

    def __call__(
        self, spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None
    ) -> str: ...


#: ``(spec, reasoning, content, calls, end) -> text``: a whole output, for formats whose turn has its own
#: structure (Harmony writes reasoning and answers as channel messages, not with the spec's markers).
OutputWriter = Callable[["FormatSpec", str, str, Sequence[SampleCall], bool], str]
#: ``(spec, tools, options) -> machine``: the parser of a whole turn.
TurnMachineFactory = Callable[["FormatSpec", "Sequence[Tool] | None", "ParseOptions"], "Machine"]
#: ``(spec, text) -> end | None``: where one generation's output ends in ``text`` (a render after the
#: generation prompt), for a format whose reply ends by its own structure; None when it cannot tell.
OutputEnd = Callable[["FormatSpec", str], "int | None"]


@dataclass(frozen=True)
class FormatFamily:
    """How one tool-call format is read, constrained and written, registered under its ``ToolsSpec.format``.

    Attributes:
        name: the ``ToolsSpec.format`` value (the one name of the format in every stage); a built-in
            family's folder under ``runtime/formats/`` has this name.
        grammar: builds the xgrammar structural tag of a tool section (generation, the structural-tag export
            and the plug-ins share it through :func:`workbench.runtime.grammar.assemble`).
        write_calls: the sample writer (the inverse of parsing: round trips, fuzzing, demos).
        parser: reads the format's tool sections inside an ordinary turn (reasoning + content + calls).
        turn_machine: reads a whole turn that has its own structure (Harmony); set instead of ``parser``.
        write_output: writes a whole output, for formats with a ``turn_machine``.
        tokenizer_hint: the name of a real tokenizer (a folder of ``../shared/tokenizers``) whose special
            tokens are this format's markers, for proofs that stream outputs token by token ("": any).
        output_end: where a reply ends by its own structure (a JSON object's closing brace), for the
            validation's cut of a history render; None: at the end markers, as for any format.
    """

    name: str
    grammar: type[ToolGrammar]
    write_calls: CallWriter
    parser: type[ToolParser] | None = None
    turn_machine: TurnMachineFactory | None = None
    write_output: OutputWriter | None = None
    tokenizer_hint: str = ""
    output_end: OutputEnd | None = None

    def __post_init__(self) -> None:
        if (self.parser is None) == (self.turn_machine is None):
            raise ValueError(f"format {self.name!r}: give exactly one of parser and turn_machine")

    @property
    def implicit_reasoning(self) -> tuple[str, str] | None:
        """The reasoning region the format defines itself (start, end markers), when the spec's reasoning
        fields do not (Harmony's analysis channel); None for every format that reasons with spec markers."""
        return self.grammar.implicit_reasoning

    @property
    def reads_whole_turn(self) -> bool:
        """The format's parser reads the whole turn, reasoning included (its turn machine walks the turn's
        own structure), rather than tool sections inside a reasoning + content turn."""
        return self.turn_machine is not None
