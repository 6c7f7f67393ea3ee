"""Harmony's analysis and export side: the detector (channel headers the generic diffs only see in
fragments) and the response-template regions of a whole Harmony turn."""

from __future__ import annotations

from workbench.analysis.dedicated import Dedicated
from workbench.formats.base import FormatHooks
from workbench.formats.harmony.detect import detect
from workbench.formats.harmony.export import response_fields
from workbench.runtime.formats.harmony import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    dedicated=Dedicated(detect, fills_reasoning=True, keeps_spec=True),
    response_fields=response_fields,
)
