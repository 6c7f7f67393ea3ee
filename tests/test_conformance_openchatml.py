"""OpenChatML 2.2's conformance fixtures (seed 002, §17) and its escaping rule (§3) as conformance cases.

The cases live in ``workbench/data/conformance/openchatml.json`` (peer shape, family ``openchatml``, run
against the hand-written ``specs/openchatml.json``); each §17 fixture is one case whose ``rule`` names it.
They need nothing from ../shared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from workbench.conformance import CaseResult, Runner, load_case_paths
from workbench.conformance.checks import check_peer
from workbench.streaming.observed import Observed

CASES = REPO / "workbench" / "data" / "conformance" / "openchatml.json"


@pytest.fixture(scope="module")
def results() -> list[CaseResult]:
    return Runner().run_all(load_case_paths([CASES]))


def test_all_eight_section_17_fixtures_are_cases() -> None:
    rules = sorted(c.rule for c in load_case_paths([CASES]) if c.rule.startswith("§17."))
    assert rules == [f"§17.{n}" for n in range(1, 9)]


def test_every_openchatml_case_passes_one_shot_and_streamed(results: list[CaseResult]) -> None:
    failing = {r.case.name: r.first_difference for r in results if not r.passed}
    assert failing == {}
    assert all(len(r.runs) == 5 for r in results)  # one-shot, per character, three random chunkings
    assert {r.target for r in results} == {"specs/openchatml.json"}


def test_the_escape_cases_are_there(results: list[CaseResult]) -> None:
    escapes = [r.case for r in results if r.case.rule == "§3 escaping"]
    assert any("<<|start|>" in c.input and "<|literal|>" not in c.input for c in escapes)


def test_diagnostic_expectations_are_checked() -> None:
    got = Observed(content="x", diagnostics=("E-PARSE-CHANNEL-MISSING",))
    assert check_peer({"diagnostics_contains": ["E-PARSE-CHANNEL-MISSING"]}, got) == []
    assert check_peer({"diagnostics_excludes": ["E-PARSE-HEADER"]}, got) == []
    (diff,) = check_peer({"diagnostics_contains": ["E-BODY-CONSTRAINT-VIOLATION"]}, got)
    assert diff.startswith("diagnostics_contains: E-BODY-CONSTRAINT-VIOLATION not among")
    (diff,) = check_peer({"diagnostics_excludes": ["E-PARSE-CHANNEL-MISSING"]}, got)
    assert diff == "diagnostics_excludes: E-PARSE-CHANNEL-MISSING was reported"


def test_the_case_file_is_package_data() -> None:
    # pyproject ships workbench/data/**: the cases travel with an installed workbench.
    assert CASES.is_file() and Path(CASES).suffix == ".json"
