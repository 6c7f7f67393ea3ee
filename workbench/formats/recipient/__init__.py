"""RECIPIENT: every message is addressed (functionary v3.2: ``>>>all\\ntext``, ``>>>get_weather\\n{...}``)."""

from __future__ import annotations

from workbench.formats.base import FormatFamily
from workbench.formats.recipient.grammar import RecipientGrammar
from workbench.formats.recipient.parser import RecipientParser
from workbench.formats.recipient.samples import write_calls

FAMILY = FormatFamily(
    name="recipient",
    grammar=RecipientGrammar,
    write_calls=write_calls,
    parser=RecipientParser,
    response_template_gap=(
        "recipient-style calls (>>>name) have no closing marker a response_template can use"
    ),
)
