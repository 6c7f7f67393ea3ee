"""RECIPIENT's analysis and export side: a response template cannot close an addressed call (``>>>name``).

There is no dedicated detector: the analysis learns addressed messages as a headed layout (docs/layout.md)."""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.runtime.formats.recipient import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    response_template_gap=(
        "recipient-style calls (>>>name) have no closing marker a response_template can use"
    ),
)
