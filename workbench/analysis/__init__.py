"""Template -> FormatSpec by differential rendering (see ARCHITECTURE.md and docs/analysis-vs-llamacpp.md).

The public interface (docs/INTERFACES.md): :func:`analyze`, :class:`Analysis`, :class:`ProbeResult`, the
probe table :data:`PROBES`, and the diff primitives :class:`DiffSplit`, :func:`diff_split`,
:func:`segmentize`.
"""

from __future__ import annotations

from workbench.analysis.analyzer import Analysis, analyze
from workbench.analysis.dedicated import Dedicated, Detector
from workbench.analysis.diff import (
    DiffSplit,
    Segment,
    after_common_suffix,
    diff_split,
    segmentize,
    until_common_prefix,
)
from workbench.analysis.probes import PROBES, VARIANTS, Probe, Variant
from workbench.analysis.renders import ProbeResult

__all__ = [
    "PROBES",
    "VARIANTS",
    "Analysis",
    "Dedicated",
    "Detector",
    "DiffSplit",
    "Probe",
    "ProbeResult",
    "Segment",
    "Variant",
    "after_common_suffix",
    "analyze",
    "diff_split",
    "segmentize",
    "until_common_prefix",
]
