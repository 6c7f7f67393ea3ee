"""``spec.tools.format`` -> the machine that reads the output, from the format registry.

The parsers live with their formats (``workbench/runtime/formats/<name>/parser.py``); this module only
picks the turn machine.  The registry resolves a family when a machine is first built for it: the families
import this package's machinery.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.runtime.chat import Tool
from workbench.runtime.formats import family_for
from workbench.runtime.parsing.core import Machine
from workbench.runtime.parsing.options import ParseOptions
from workbench.runtime.parsing.turn import TurnMachine
from workbench.runtime.spec import FormatSpec


def build_machine(spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> Machine:
    """The machine for ``spec`` (no tool format, or an unknown one, parses as plain reasoning + content)."""
    fam = family_for(spec)
    if fam is not None and fam.turn_machine is not None:
        return fam.turn_machine(spec, tools, options)
    return TurnMachine(spec, tools, options, fam.parser if fam is not None else None)
