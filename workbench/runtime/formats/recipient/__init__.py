"""RECIPIENT: every message is addressed (functionary v3.2: ``>>>all\\ntext``, ``>>>get_weather\\n{...}``)."""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.recipient.grammar import RecipientGrammar
from workbench.runtime.formats.recipient.parser import RecipientParser
from workbench.runtime.formats.recipient.samples import write_calls

FAMILY = FormatFamily(
    name="recipient",
    grammar=RecipientGrammar,
    write_calls=write_calls,
    parser=RecipientParser,
)
