"""Harmony (gpt-oss): every part of a turn is a channel message; calls are commentary messages addressed to
``functions.NAME``.  The tokens are the format's own (:mod:`workbench.formats.harmony.markers`).

The analysis learns gpt-oss templates as headed layouts (docs/layout.md); this family's dedicated parser
reads hand-written Harmony specs (``specs/openchatml.json``) and is the cross-check of the learned layout
(``tests/test_layout_harmony.py``).  Its ``layout_protocol`` adds OpenChatML's rules no template renders."""

from __future__ import annotations

from workbench.formats.base import FormatFamily
from workbench.formats.harmony.export import response_fields
from workbench.formats.harmony.grammar import HarmonyGrammar
from workbench.formats.harmony.parser import HarmonyMachine
from workbench.formats.harmony.protocol import supplement
from workbench.formats.harmony.samples import write_calls, write_output

FAMILY = FormatFamily(
    name="harmony",
    grammar=HarmonyGrammar,
    write_calls=write_calls,
    turn_machine=HarmonyMachine,
    write_output=write_output,
    layout_protocol=supplement,
    response_fields=response_fields,
)
