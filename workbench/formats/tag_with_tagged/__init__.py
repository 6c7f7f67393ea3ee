"""TAG_WITH_TAGGED's analysis and export side: the response-template hook (the generic analysis and its
arguments phase describe the calls)."""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.formats.tag_with_tagged.export import response_fields
from workbench.runtime.formats.tag_with_tagged import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    response_fields=response_fields,
)
