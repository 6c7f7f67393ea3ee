"""JSON_NATIVE's analysis and export side: the generic analysis describes these calls, so only the
response-template hook is here."""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.formats.json_native.export import response_fields
from workbench.runtime.formats.json_native import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    response_fields=response_fields,
)
