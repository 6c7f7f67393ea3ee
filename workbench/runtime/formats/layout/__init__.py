"""The turn layout (spec v3): the family every stage uses for a spec whose ``layout`` is defined.

It is not a tool-call format (``tools.format`` still names how a call's name and arguments are written):
it wraps that format's family with what the layout says about the turn, a lead the model writes first, and
headed messages (docs/layout.md).  :func:`workbench.runtime.formats.family_for` returns it for such specs;
it is not in the table of tool formats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.layout.grammar import LayoutGrammar
from workbench.runtime.formats.layout.samples import write_calls, write_output

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool
    from workbench.runtime.parsing.core import Machine
    from workbench.runtime.parsing.options import ParseOptions
    from workbench.runtime.spec import FormatSpec


def turn_machine(spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> Machine:
    """The layout machine over the tools format's parser."""
    from workbench.runtime.formats import family  # the registry imports this package lazily
    from workbench.runtime.parsing.layout import LayoutMachine

    fam = family(spec.tools.format)
    return LayoutMachine(spec, tools, options, fam.parser if fam is not None else None)


FAMILY = FormatFamily(
    name="layout",
    grammar=LayoutGrammar,
    write_calls=write_calls,
    turn_machine=turn_machine,
    write_output=write_output,
)
