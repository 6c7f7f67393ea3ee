"""TAG_WITH_JSON's analysis and export side: the response-template hook (the generic analysis describes
the calls)."""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.formats.tag_with_json.export import response_fields
from workbench.runtime.formats.tag_with_json import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    response_fields=response_fields,
)
