"""Harmony (gpt-oss): every part of a turn is a channel message; calls are commentary messages addressed to
``functions.NAME``.  The tokens are the format's own (:mod:`workbench.runtime.formats.harmony.markers`)."""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.harmony.grammar import HarmonyGrammar
from workbench.runtime.formats.harmony.parser import HarmonyMachine
from workbench.runtime.formats.harmony.samples import write_calls, write_output

FAMILY = FormatFamily(
    name="harmony",
    grammar=HarmonyGrammar,
    write_calls=write_calls,
    turn_machine=HarmonyMachine,
    write_output=write_output,
    tokenizer_hint="gpt-oss",
)
