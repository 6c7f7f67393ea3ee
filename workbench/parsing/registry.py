"""``spec.tools.format`` -> the parser that reads it: adding a format is one file and one line here."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.chat import Tool
from workbench.parsing.core import Machine
from workbench.parsing.harmony import HarmonyMachine
from workbench.parsing.options import ParseOptions
from workbench.parsing.pythonic import PythonicFormat
from workbench.parsing.recipient import RecipientFormat
from workbench.parsing.tool_json import JsonNativeFormat
from workbench.parsing.tool_tag_json import TagJsonFormat
from workbench.parsing.tool_tagged import TaggedFormat
from workbench.parsing.tools_base import ToolFormat
from workbench.parsing.turn import TurnMachine
from workbench.spec import FormatSpec

#: Tool formats read inside an ordinary turn (reasoning + content + tool sections).
TOOL_FORMATS: dict[str, type[ToolFormat] | None] = {
    "none": None,
    "json_native": JsonNativeFormat,
    "tag_with_json": TagJsonFormat,
    "tag_with_tagged": TaggedFormat,
    "pythonic": PythonicFormat,
    "recipient": RecipientFormat,
}
#: Formats whose whole turn has its own structure.
TURN_FORMATS: dict[str, type[Machine]] = {
    "harmony": HarmonyMachine,
}


def build_machine(spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> Machine:
    """The machine for ``spec`` (an unknown format parses as plain reasoning + content)."""
    fmt = spec.tools.format
    if fmt in TURN_FORMATS:
        return TURN_FORMATS[fmt](spec, tools, options)
    return TurnMachine(spec, tools, options, TOOL_FORMATS.get(fmt))
