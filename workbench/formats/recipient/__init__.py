"""RECIPIENT's analysis and export side: the detector of addressed messages (``>>>name``); a response
template cannot close such a call."""

from __future__ import annotations

from workbench.analysis.dedicated import Dedicated
from workbench.formats.base import FormatHooks
from workbench.formats.recipient.detect import detect
from workbench.runtime.formats.recipient import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    dedicated=Dedicated(detect, keeps_spec=True),
    response_template_gap=(
        "recipient-style calls (>>>name) have no closing marker a response_template can use"
    ),
)
