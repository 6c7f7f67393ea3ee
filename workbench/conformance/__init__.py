"""Conformance runner: llama.cpp's and the peers' (SGLang, vLLM, DeepSeek RFC) parse vectors.

``load_case_paths`` reads case files of both shapes, ``Runner`` parses every case one-shot and streamed
against the spec its template (or family) maps to, and the ``report`` helpers turn the results into pass
rates.  ``workbench conformance`` is the CLI shell over this package; docs/conformance.md explains the
rules and lists every remaining failure.
"""

from __future__ import annotations

from workbench.conformance.cases import Case, CaseFileError, load_case_paths
from workbench.conformance.report import Tally, failures, group_tallies, suite_tallies
from workbench.conformance.runner import CaseResult, Runner, RunResult
from workbench.conformance.targets import FAMILY_RULES, SpecProvider, Target

__all__ = [
    "FAMILY_RULES",
    "Case",
    "CaseFileError",
    "CaseResult",
    "RunResult",
    "Runner",
    "SpecProvider",
    "Tally",
    "Target",
    "failures",
    "group_tallies",
    "load_case_paths",
    "suite_tallies",
]
