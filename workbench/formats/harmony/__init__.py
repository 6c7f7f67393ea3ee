"""Harmony (gpt-oss): every part of a turn is a channel message; calls are commentary messages addressed to
``functions.NAME``.  The tokens are the format's own (:mod:`workbench.formats.harmony.markers`)."""

from __future__ import annotations

from workbench.formats.base import FormatFamily
from workbench.formats.harmony.detect import detect
from workbench.formats.harmony.export import response_fields
from workbench.formats.harmony.grammar import HarmonyGrammar
from workbench.formats.harmony.parser import HarmonyMachine
from workbench.formats.harmony.samples import write_calls, write_output

FAMILY = FormatFamily(
    name="harmony",
    grammar=HarmonyGrammar,
    write_calls=write_calls,
    turn_machine=HarmonyMachine,
    write_output=write_output,
    detect=detect,
    response_fields=response_fields,
)
