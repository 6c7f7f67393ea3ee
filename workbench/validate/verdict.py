"""The verdict of a validation report: validated, or why not, in a form the CLI, the TUI and exports share.

"Validated" is a claim that travels with every export, so it means exactly this: every feature the
template renders (or the spec reads) was round-tripped, and every case that ran passed, one-shot and
streamed, on a template that renders the same text each time.  Anything less is *not* validated and the
verdict says which of these held it back:

- ``failed``: a case ran and its parse differs from what the template rendered (the features named);
- ``unstable``: the template renders different text each time (it prints the clock, ...): no spec can be
  checked against it;
- ``untested``: a feature the template renders, or the spec reads, never ran, e.g. every tool-call case
  was skipped because the template raises on the tool definitions ("tool calls untested");
- ``nothing_tested``: not a single case applied.

One state sits between red and green: ``limited``.  Every feature the template renders was tested and
passed with the plain typed tool definitions, so the parser configuration is validated (``validated`` is
True: exports are allowed, ``workbench validate`` exits 0), but the template itself raises on a harder tool
set servers do send (a parameter without ``type``, an ``anyOf``, ...).  It is amber, never plain green
(``green`` is False), and its ``limits`` name each refusal ("the template raises on a parameter without
`type`", :func:`raises_on`) wherever the verdict travels: the CLI, the TUI and every export's provenance.

Pure data: :func:`compute_verdict` reads a report's results; nothing here renders or parses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

VerdictStatus = Literal["validated", "limited", "failed", "unstable", "untested", "nothing_tested"]
VERDICT_STATUSES: tuple[VerdictStatus, ...] = (
    "validated",
    "limited",
    "failed",
    "unstable",
    "untested",
    "nothing_tested",
)

#: The features a verdict can find untested, with the words people read.
UNTESTED_LABELS: dict[str, str] = {
    "content": "content",
    "reasoning": "reasoning",
    "tool_calls": "tool calls",
    "continuation": "continuation",
}


@dataclass(frozen=True)
class UntestedFeature:
    """A feature the template renders (or the spec reads) that no case tested, and why none ran.

    ``feature`` is a key of :data:`UNTESTED_LABELS`; ``label`` its words ("tool calls"); ``reason`` the
    skipped cases' reason ("the template raises on the tool definitions: ...").
    """

    feature: str
    reason: str

    @property
    def label(self) -> str:
        return UNTESTED_LABELS.get(self.feature, self.feature)

    def line(self) -> str:
        """``tool calls untested (the template raises on ...)``."""
        return f"{self.label} untested ({self.reason})" if self.reason else f"{self.label} untested"

    def to_dict(self) -> dict[str, str]:
        return {"feature": self.feature, "label": self.label, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UntestedFeature:
        return cls(feature=str(data.get("feature", "")), reason=str(data.get("reason", "")))


@dataclass(frozen=True)
class ValidationVerdict:
    """What a report concludes: ``green`` only when ``status == "validated"``; ``validated`` (the parser
    configuration holds for what the template renders) also when ``limited``.

    Attributes:
        status: see the module doc; when several apply, the first of failed, unstable, untested,
            nothing_tested, limited.
        passed / applicable: round-trip cases that passed / that ran (continuation apart).
        failed: the features with a failing case.
        untested: the features the template renders that no case tested, with why.
        unstable: why the template's renders cannot be trusted ("" when it renders the same each time).
        limits: what the template raises on while the plain tool set passed, one harder tool set each ("a
            parameter without `type`", "a call with a parameter typed null"): they make an otherwise
            validated verdict ``limited``; :func:`raises_on` makes them one clause.
    """

    status: VerdictStatus
    passed: int
    applicable: int
    failed: tuple[str, ...] = ()
    untested: tuple[UntestedFeature, ...] = ()
    unstable: str = ""
    limits: tuple[str, ...] = ()

    @property
    def validated(self) -> bool:
        """The parser configuration is validated for what the template renders (green or amber)."""
        return self.status in ("validated", "limited")

    @property
    def green(self) -> bool:
        """Validated with nothing held back: no tool set the template refuses."""
        return self.status == "validated"

    @property
    def headline(self) -> str:
        """One short line for a header or a status bar: ``validated: 11/11 cases``, ``validated: 11/11 cases
        with the plain tools; the template raises on a parameter without `type``` or ``NOT validated: tool
        calls untested`` (every reason, most serious first; the long form is ``ValidationReport.summary``)."""
        count = f"{self.passed}/{self.applicable} cases"
        if self.status == "limited":
            return f"validated: {count} with the plain tools; {raises_on(self.limits)}"
        if self.validated:
            return f"validated: {count}"
        reasons: list[str] = []
        if self.failed:
            reasons.append(f"{', '.join(self.failed)} fail{'s' if len(self.failed) == 1 else ''} ({count})")
        if self.unstable:
            reasons.append("the template renders differently each time")
        if self.untested:
            reasons.append(", ".join(u.label for u in self.untested) + " untested")
        if not reasons:
            reasons.append("no case could be tested")
        return "NOT validated: " + "; ".join(reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "validated": self.validated,
            "green": self.green,
            "headline": self.headline,
            "passed": self.passed,
            "applicable": self.applicable,
            "failed": list(self.failed),
            "untested": [u.to_dict() for u in self.untested],
            "unstable": self.unstable,
            "limits": list(self.limits),
        }


def compute_verdict(
    *,
    passed: int,
    applicable: int,
    all_pass: bool,
    failed: Sequence[str],
    untested: Sequence[UntestedFeature],
    unstable: str,
    limits: Sequence[str] = (),
) -> ValidationVerdict:
    """The verdict from a report's counts (pure).  ``all_pass``: every applicable case, continuation
    included, passed; ``limits``: what the template raises on
    (:func:`~workbench.validate.untested.find_limits`)."""
    status: VerdictStatus
    if failed or not all_pass:
        status = "failed"
    elif unstable:
        status = "unstable"
    elif untested:
        status = "untested"
    elif applicable == 0:
        status = "nothing_tested"
    elif limits:
        status = "limited"
    else:
        status = "validated"
    return ValidationVerdict(
        status=status,
        passed=passed,
        applicable=applicable,
        failed=tuple(failed),
        untested=tuple(untested),
        unstable=unstable,
        limits=tuple(limits),
    )


def raises_on(limits: Sequence[str]) -> str:
    """The limits as one clause: ``the template raises on a parameter without `type` and an `anyOf```."""
    if not limits:
        return ""
    listed = limits[0] if len(limits) == 1 else ", ".join(limits[:-1]) + " and " + limits[-1]
    return f"the template raises on {listed}"
