"""OpenChatML 2.2's rules that no chat template renders, for a learned layout written in Harmony's tokens.

The analysis learns a gpt-oss template's turn as headed messages (opener ``<|start|>assistant``, closer
``<|message|>``, channel literal ``<|channel|>``; see docs/layout.md).  Three rules of the format never show
in a render, because the template never writes them: control tokens escaped by doubling their ``<``
(``<<|start|>`` is the text ``<|start|>``, §3), ``<|literal|>`` ... ``<|endliteral|>`` blocks in which no
token is recognised, and a call's ``call_id=`` header attribute.  When a learned layout speaks exactly
these tokens, this supplement adds those rules to it; any other layout is left alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from workbench.runtime.formats.harmony.markers import CHANNEL, ENDLITERAL, LITERAL, MESSAGE, START

if TYPE_CHECKING:
    from workbench.runtime.spec import TurnLayout

#: The header attribute in front of a call id (OpenChatML 2.2 §6).
CALL_ID = "call_id="


def supplement(layout: TurnLayout) -> TurnLayout | None:
    """``layout`` with OpenChatML's escapes, literal blocks and call-id attribute; None when the layout is
    not written in Harmony's tokens."""
    speaks = (
        layout.headed
        and layout.opener.strip().startswith(START)
        and layout.closer.strip() == MESSAGE
        and layout.channel.strip() == CHANNEL
    )
    if not speaks:
        return None
    return replace(
        layout,
        escape=layout.escape or "<",
        verbatim=layout.verbatim or (LITERAL, ENDLITERAL),
        ids=layout.ids or CALL_ID,
    )
