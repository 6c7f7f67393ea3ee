"""Dedicated detectors: formats the generic diffs cannot express.

Each one looks at the isolated call (probe T1) and either claims the template (fills the spec, returns True)
or passes; they are tried in the order given.  They belong to their format families
(``workbench/formats/<name>/detect.py``), which sit above the analysis: :func:`workbench.formats.analyze`
passes every registered family's detector to :func:`workbench.analysis.analyze`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.analysis.renders import ProbeResult
    from workbench.analysis.state import Findings
    from workbench.analysis.tools import CallRegion

#: ``(findings, call region, probe T1) -> claimed?``: a dedicated detector fills the spec and returns True.
Detector = Callable[["Findings", "CallRegion", "ProbeResult"], bool]


@dataclass(frozen=True)
class Dedicated:
    """One format family's dedicated detector, and what the analysis does differently once it claims.

    Attributes:
        detect: the detector.
        fills_reasoning: it also sets the reasoning markers (Harmony's analysis channel), so the prompt
            facts, read before the tools phase, are read again with them.
        keeps_spec: no learned call pattern replaces what it found (the format's calls are not literal text
            around slots: message headers, addressed messages).
    """

    detect: Detector
    fills_reasoning: bool = False
    keeps_spec: bool = False


def detect(f: Findings, region: CallRegion, t1: ProbeResult) -> bool:
    """Run the analysis's dedicated detectors in order; True when one of them recognised the format (it is
    then ``f.claimed``)."""
    for dedicated in f.dedicated:
        if dedicated.detect(f, region, t1):
            f.claimed = dedicated
            return True
    return False
