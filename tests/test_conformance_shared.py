"""The whole shared conformance set against the real analyzer and parser (issue 3's must-show).

Thresholds: >= 95 % of the llama.cpp cases, >= 95 % of the peer cases, all 26 DeepSeek RFC cases; and
docs/conformance.md's list of remaining failures is exact (every failing case is listed, every listed case
still fails), so the document cannot go stale silently.

Skips cleanly without ../shared.  One run serves every assertion (module-scoped fixture): it analyses ~25
templates and parses ~500 cases one-shot, per character and at three random chunkings (a few seconds).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO, shared_path
from workbench.conformance import CaseResult, Runner, SpecProvider, failures, load_case_paths, suite_tallies

THRESHOLD = 95.0
RFC_FAMILY = "deepseek_rfc_edge_cases"
RFC_CASES = 26
DOC = REPO / "docs" / "conformance.md"
CASE_ID = re.compile(r"`((?:llamacpp|peers)/[^`]+)`")

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
    rfc = [r for r in results if r.case.group == RFC_FAMILY]
    failed = [r for r in rfc if not r.passed]
    assert not failed, "\n".join(f"{r.case.name}: {r.first_difference}" for r in failed)
    assert sum(r.passed for r in rfc) == RFC_CASES


def test_every_remaining_failure_is_documented(results: list[CaseResult]) -> None:
    documented = set(CASE_ID.findall(_remaining_failures_section()))
    missing = [r.case.case_id for r in failures(results) if r.case.case_id not in documented]
    assert not missing, f"failing cases not listed under 'Remaining failures' in {Path(DOC).name}: {missing}"


def test_every_documented_failure_still_fails(results: list[CaseResult]) -> None:
    # A case fixed by a parser or analyzer change must leave the list (and its open issue, if any).
    failing = {r.case.case_id for r in failures(results)}
    known = {r.case.case_id for r in results}
    listed = set(CASE_ID.findall(_remaining_failures_section()))
    assert listed <= known, f"{Path(DOC).name} lists cases that do not exist: {sorted(listed - known)}"
    fixed = sorted(listed - failing)
    assert not fixed, f"these now pass; remove them from 'Remaining failures' in {Path(DOC).name}: {fixed}"


def _remaining_failures_section() -> str:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"^## Remaining failures\n(.*?)(?=^## )", text, flags=re.M | re.S)
    assert match is not None, f"{Path(DOC).name} has no '## Remaining failures' section"
    return match.group(1)


def _summary(results: list[CaseResult], suite: str) -> str:
    lines = [f"{r.case.case_id}: {r.first_difference}" for r in failures(results) if r.case.suite == suite]
    return f"{len(lines)} failing:\n" + "\n".join(lines[:60])
