"""CALL_PATTERN's analysis and export side: no dedicated detector (the analysis learns the pattern when
the marker-field spec reads fewer calls back) and no response-template spelling."""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.runtime.formats.call_pattern import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    response_template_gap=(
        "a call pattern's slots (per-type argument elements, values in an encoding of their own, counters) "
        "have no response-template spelling; export a spec, a structural tag or an engine plug-in instead"
    ),
)
