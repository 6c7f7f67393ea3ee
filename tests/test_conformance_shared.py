"""The whole shared conformance set against the real analyzer and parser (issue 3's must-show).

Skips cleanly without ../shared.  One run serves every assertion (module-scoped fixture): it analyses ~25
templates and parses ~500 cases one-shot, per character and at three random chunkings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO, shared_path
from workbench.conformance import CaseResult, Runner, SpecProvider, failures, load_case_paths, suite_tallies

THRESHOLD = 95.0
RFC_FAMILY = "deepseek_rfc_edge_cases"
DOC = REPO / "docs" / "conformance.md"

pytestmark = [pytest.mark.shared, pytest.mark.slow]


@pytest.fixture(scope="module")
def results() -> list[CaseResult]:
    llamacpp = shared_path("conformance", "llamacpp")
    peers = shared_path("conformance", "peers")
    templates = shared_path("templates")
    cases = load_case_paths([llamacpp, peers])
    return Runner(SpecProvider(templates_dir=templates)).run_all(cases)


def _rate(results: list[CaseResult], suite: str) -> float:
    (tally,) = [t for t in suite_tallies(results) if t.suite == suite]
    return tally.rate


def test_every_shared_case_was_loaded(results: list[CaseResult]) -> None:
    # The READMEs' counts: 118 llama.cpp cases, 378 peer cases (26 of them the RFC's).
    assert sum(r.case.suite == "llamacpp" for r in results) == 118
    assert sum(r.case.suite == "peers" for r in results) == 378
    assert sum(r.case.group == RFC_FAMILY for r in results) == 26


def test_llamacpp_pass_rate_meets_the_threshold(results: list[CaseResult]) -> None:
    assert _rate(results, "llamacpp") >= THRESHOLD, _summary(results, "llamacpp")


def test_peer_pass_rate_meets_the_threshold(results: list[CaseResult]) -> None:
    assert _rate(results, "peers") >= THRESHOLD, _summary(results, "peers")


def test_all_rfc_edge_cases_pass(results: list[CaseResult]) -> None:
    failed = [r for r in failures(results) if r.case.group == RFC_FAMILY]
    assert not failed, "\n".join(f"{r.case.name}: {r.first_difference}" for r in failed)


def test_every_remaining_failure_is_documented(results: list[CaseResult]) -> None:
    documented = set(re.findall(r"`((?:llamacpp|peers)/[^`]+)`", DOC.read_text(encoding="utf-8")))
    missing = [r.case.case_id for r in failures(results) if r.case.case_id not in documented]
    assert not missing, f"failing cases not listed in {Path(DOC).name}: {missing}"


def _summary(results: list[CaseResult], suite: str) -> str:
    lines = [f"{r.case.case_id}: {r.first_difference}" for r in failures(results) if r.case.suite == suite]
    return f"{len(lines)} failing:\n" + "\n".join(lines[:60])
