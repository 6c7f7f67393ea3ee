"""Harmony's analysis and export side: the response-template regions of a whole Harmony turn, and the
protocol rules (OpenChatML's escapes, literal blocks, ``call_id=``) that no template renders.

The analysis learns gpt-oss templates as headed layouts (docs/layout.md): there is no dedicated detector.
The runtime family's dedicated parser reads hand-written Harmony specs (``specs/openchatml.json``) and is
the cross-check of the learned layout (``tests/test_layout_harmony.py``); ``layout_protocol`` adds the
rules a learned layout written in Harmony's tokens cannot see in any render."""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.formats.harmony.export import response_fields
from workbench.formats.harmony.protocol import supplement
from workbench.runtime.formats.harmony import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    response_fields=response_fields,
    layout_protocol=supplement,
)
