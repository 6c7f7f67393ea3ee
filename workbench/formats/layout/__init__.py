"""The turn layout (spec v3): the family every stage uses for a spec whose ``layout`` is defined.

It is not a tool-call format (``tools.format`` still names how a call's name and arguments are written):
it wraps that format's family with what the layout says about the turn, a lead the model writes first, and
headed messages (docs/layout.md).  :func:`workbench.formats.family_for` returns it for such specs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.formats.base import FormatFamily
from workbench.formats.layout.export import response_fields
from workbench.formats.layout.grammar import LayoutGrammar
from workbench.formats.layout.samples import write_calls, write_output

if TYPE_CHECKING:
    from workbench.chat import Tool
    from workbench.parsing.core import Machine
    from workbench.parsing.options import ParseOptions
    from workbench.spec import FormatSpec


def turn_machine(spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> Machine:
    """The layout machine over the tools format's parser."""
    from workbench.formats import family
    from workbench.parsing.layout import LayoutMachine

    fam = family(spec.tools.format)
    return LayoutMachine(spec, tools, options, fam.parser if fam is not None else None)


FAMILY = FormatFamily(
    name="layout",
    grammar=LayoutGrammar,
    write_calls=write_calls,
    turn_machine=turn_machine,
    write_output=write_output,
    response_fields=response_fields,
)
