"""The registry of dedicated detectors: formats the generic diffs cannot express.

Each detector looks at the isolated call (probe T1) and either claims the template (fills the spec, returns
True) or passes.  Adding a format is one new module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.analysis import harmony, pythonic, recipient
from workbench.analysis.state import Findings

if TYPE_CHECKING:
    from workbench.analysis.renders import ProbeResult
    from workbench.analysis.tools import CallRegion

Detector = Callable[[Findings, "CallRegion", "ProbeResult"], bool]

DETECTORS: tuple[tuple[str, Detector], ...] = (
    ("harmony", harmony.detect),
    ("recipient", recipient.detect),
    ("pythonic", pythonic.detect),
)


def detect(f: Findings, region: CallRegion, t1: ProbeResult) -> bool:
    """Run the detectors in order; True when one of them recognised the format."""
    return any(fn(f, region, t1) for _, fn in DETECTORS)
