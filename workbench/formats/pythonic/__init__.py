"""PYTHONIC's analysis and export side: the detector of ``name(arg=value)`` calls; no response template
can read Python calls."""

from __future__ import annotations

from workbench.analysis.dedicated import Dedicated
from workbench.formats.base import FormatHooks
from workbench.formats.pythonic.detect import detect
from workbench.runtime.formats.pythonic import FAMILY

HOOKS = FormatHooks(
    family=FAMILY,
    dedicated=Dedicated(detect),
    response_template_gap="pythonic calls (f(a=1)) cannot be read by any response_template content parser",
)
