"""Dedicated detectors: formats the generic diffs cannot express, read from the format registry.

Each format family with a detector (``workbench/formats/<name>/detect.py``) looks at the isolated call
(probe T1) and either claims the template (fills the spec, returns True) or passes; they are tried in
registry order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.analysis.state import Findings

if TYPE_CHECKING:
    from workbench.analysis.renders import ProbeResult
    from workbench.analysis.tools import CallRegion


def detect(f: Findings, region: CallRegion, t1: ProbeResult) -> bool:
    """Run the registered detectors in order; True when one of them recognised the format."""
    from workbench.formats import FORMATS  # read at call time: the families import the analysis helpers

    return any(fam.detect(f, region, t1) for fam in list(FORMATS.values()) if fam.detect is not None)
