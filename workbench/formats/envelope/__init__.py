"""The reply envelope's export side (spec v6): why the response-template export does not spell it yet.

The envelope is not a tool-call format (``tools.format`` names how one call object is written); its runtime
family (:mod:`workbench.runtime.formats.envelope`) reads the whole reply as one JSON object.
:func:`workbench.formats.hooks_for` returns these hooks for a spec whose envelope is defined.
"""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.runtime.formats.envelope import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    response_template_gap=(
        "the reply is one JSON object whose members hold the text and the calls (spec envelope): its "
        "response-template spelling (a JSON region per member, in the template's order, the members it "
        "leaves out optional) is not written yet; export the vllm-plugin, sglang-plugin, structural-tag or "
        "lark target"
    ),
)
