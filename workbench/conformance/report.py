"""Pass rates per suite and per group (template / family), and the failures, from case results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.conformance.runner import CaseResult


@dataclass(frozen=True)
class Tally:
    """Passed / total for one suite or one group."""

    suite: str
    group: str
    target: str
    passed: int
    total: int

    @property
    def rate(self) -> float:
        """Percentage passed (100 for an empty set: nothing failed)."""
        return 100.0 * self.passed / self.total if self.total else 100.0


def group_tallies(results: Sequence[CaseResult]) -> list[Tally]:
    """One tally per (suite, group), in first-seen order; ``target`` lists every target the group used."""
    order: list[tuple[str, str]] = []
    passed: dict[tuple[str, str], int] = {}
    total: dict[tuple[str, str], int] = {}
    targets: dict[tuple[str, str], list[str]] = {}
    for r in results:
        key = (r.case.suite, r.case.group)
        if key not in total:
            order.append(key)
            passed[key] = total[key] = 0
            targets[key] = []
        total[key] += 1
        passed[key] += r.passed
        if r.target and r.target not in targets[key]:
            targets[key].append(r.target)
    return [Tally(s, g, ", ".join(targets[(s, g)]), passed[(s, g)], total[(s, g)]) for s, g in order]


def suite_tallies(results: Sequence[CaseResult]) -> list[Tally]:
    """One tally per suite, in first-seen order."""
    order: list[str] = []
    passed: dict[str, int] = {}
    total: dict[str, int] = {}
    for r in results:
        suite = r.case.suite
        if suite not in total:
            order.append(suite)
            passed[suite] = total[suite] = 0
        total[suite] += 1
        passed[suite] += r.passed
    return [Tally(s, "", "", passed[s], total[s]) for s in order]


def failures(results: Sequence[CaseResult]) -> list[CaseResult]:
    return [r for r in results if not r.passed]
