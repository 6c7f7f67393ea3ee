"""``spec.tools.format`` -> the machine that reads the output, from the format registry.

The parsers live with their formats (``workbench/formats/<name>/parser.py``); this module only picks the
turn machine.  The registry is read when a machine is built, not at import: the families import this
package's machinery, so reading it at load time would be circular.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.chat import Tool
from workbench.parsing.core import Machine
from workbench.parsing.options import ParseOptions
from workbench.parsing.turn import TurnMachine
from workbench.spec import FormatSpec


def build_machine(spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> Machine:
    """The machine for ``spec`` (no tool format, or an unknown one, parses as plain reasoning + content)."""
    from workbench.formats import family_for

    fam = family_for(spec)
    if fam is not None and fam.turn_machine is not None:
        return fam.turn_machine(spec, tools, options)
    return TurnMachine(spec, tools, options, fam.parser if fam is not None else None)
