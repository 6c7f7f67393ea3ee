"""The reply envelope (spec v6): the family every stage uses for a spec whose ``envelope`` is defined.

Like the turn layout it is not a tool-call format: ``tools.format`` (``json_native``) still says how one
call object is written; the envelope says that the whole reply is one JSON object whose members hold the
answer's text, the reasoning and the calls.  :func:`workbench.runtime.formats.family_for` returns it for such
specs; it is not in the table of tool formats.
"""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.envelope.grammar import EnvelopeGrammar
from workbench.runtime.formats.envelope.parser import turn_machine
from workbench.runtime.formats.envelope.samples import output_end, write_calls, write_output

FAMILY = FormatFamily(
    name="envelope",
    grammar=EnvelopeGrammar,
    write_calls=write_calls,
    turn_machine=turn_machine,
    write_output=write_output,
    output_end=output_end,
)
