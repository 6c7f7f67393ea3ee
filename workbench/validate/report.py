"""Validation results: one :class:`CaseResult` per case and the :class:`ValidationReport` they make.

The report's dict form is what exported specs store in ``provenance.validation``; it must round-trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.runtime.errors import WorkbenchError
from workbench.validate.cases import FEATURES, HARDER_CASES
from workbench.validate.verdict import UntestedFeature, ValidationVerdict, compute_verdict, raises_on

#: The feature the continuation cases report (``workbench.validate.continuation``).
CONTINUATION_FEATURE = "continuation"

PASS, FAIL, UNSUPPORTED, ERROR = "pass", "fail", "unsupported", "error"

# Why an unsupported case did not run (``CaseResult.skip``): the template's output lacks the part
# (``NOT_RENDERED``: a fact about the template); the template raised on the case's input (``RAISED``);
# the template renders the part but no model output looks like it, or the text alone cannot tell it
# apart (``UNTESTABLE``).  Only NOT_RENDERED says the template does not render a feature.
NOT_RENDERED, RAISED, UNTESTABLE = "not_rendered", "raised", "untestable"
SKIP_KINDS = (NOT_RENDERED, RAISED, UNTESTABLE)


class ReportError(WorkbenchError, ValueError):
    """A validation report's dict form (a spec's ``provenance.validation``) has a field of the wrong type."""


# What a harder case's reason starts with when the tool definitions themselves raised (``render_case``);
# otherwise the template took the definitions and raised on the call's values.
_RAISED_ON_DEFINITIONS = "the template raises on "
_HARDER_IDS = frozenset(c.id for c in HARDER_CASES)

_KINDS = {str: "a string", bool: "true or false", dict: "an object", list: "a list"}


def _field(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise ReportError(f"{where}: expected {_KINDS.get(kind, kind.__name__)}, not {type(value).__name__}")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    items = _field(value, list, where)
    return tuple(_field(item, str, f"{where}[{i}]") for i, item in enumerate(items))


@dataclass(frozen=True)
class RenderedCase:
    """A case rendered through a template and cut down to what the model would have generated.

    ``generation_prefix`` is the text between the end of the user turn and the start of ``output`` (the
    generation prompt, e.g. ``<|im_start|>assistant\\n``): enough context for parsers that need the prompt
    (transformers' ``parse_response``) without storing the whole prompt.  ``thinking_opened`` says whether
    the output starts inside an open reasoning block.
    """

    output: str
    generation_prefix: str
    thinking_opened: bool
    compare_ids: bool
    prompt: str = ""
    unsupported: str = ""
    note: str = ""
    skip: str = ""  # why ``unsupported`` (one of ``SKIP_KINDS``)
    unstable: str = ""  # the first difference when a second render of the case differs from the first


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case.  ``status`` is pass, fail, unsupported (with the reason) or error."""

    id: str
    features: tuple[str, ...]
    description: str
    status: str
    reason: str = ""
    output: str = ""
    generation_prefix: str = ""
    thinking_opened: bool = False
    compare_ids: bool = False
    expected: dict[str, Any] = field(default_factory=dict)
    parsed: dict[str, Any] | None = None
    mismatches: tuple[str, ...] = ()
    prompt: str = ""  # the full prompt; kept in memory for exporters, not written to reports
    # Continuation cases only (``workbench.validate.continuation``): the stage the prompt leaves the output
    # in, and the partial text (per field) the prompt already holds.
    start_stage: str = ""
    continued: dict[str, str] = field(default_factory=dict)
    skip: str = ""  # an unsupported case: why it did not run (``SKIP_KINDS``)

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = (
            {"start_stage": self.start_stage, "continued": dict(self.continued)} if self.start_stage else {}
        )
        if self.skip:
            extra["skip"] = self.skip
        return {
            "id": self.id,
            "features": list(self.features),
            "description": self.description,
            "status": self.status,
            "reason": self.reason,
            "output": self.output,
            "generation_prefix": self.generation_prefix,
            "thinking_opened": self.thinking_opened,
            "compare_ids": self.compare_ids,
            "expected": self.expected,
            "parsed": self.parsed,
            "mismatches": list(self.mismatches),
            **extra,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "case") -> CaseResult:
        """A case from a report's dict form (a spec file's ``provenance.validation``: untrusted), every
        field's type checked; :class:`ReportError` names the first wrong one."""
        data = _field(data, dict, where)
        continued = _field(data.get("continued") or {}, dict, f"{where}.continued")
        parsed = data.get("parsed")
        return cls(
            id=_field(data.get("id"), str, f"{where}.id"),
            features=_strings(data.get("features", []), f"{where}.features"),
            description=_field(data.get("description", ""), str, f"{where}.description"),
            status=_field(data.get("status"), str, f"{where}.status"),
            reason=_field(data.get("reason", ""), str, f"{where}.reason"),
            output=_field(data.get("output", ""), str, f"{where}.output"),
            generation_prefix=_field(data.get("generation_prefix", ""), str, f"{where}.generation_prefix"),
            thinking_opened=_field(data.get("thinking_opened", False), bool, f"{where}.thinking_opened"),
            compare_ids=_field(data.get("compare_ids", False), bool, f"{where}.compare_ids"),
            expected=_field(data.get("expected") or {}, dict, f"{where}.expected"),
            parsed=None if parsed is None else _field(parsed, dict, f"{where}.parsed"),
            mismatches=_strings(data.get("mismatches", []), f"{where}.mismatches"),
            start_stage=_field(data.get("start_stage", ""), str, f"{where}.start_stage"),
            continued={k: _field(v, str, f"{where}.continued.{k}") for k, v in continued.items()},
            skip=_field(data.get("skip", ""), str, f"{where}.skip"),
        )


@dataclass(frozen=True)
class ValidationReport:
    """Per-case and per-feature results, and the verdict (:attr:`verdict`, :mod:`.verdict`).

    ``validated`` is True only when every case that ran passed, every feature the template renders ran
    (``untested`` is empty) and the template rendered the same text twice (``unstable`` is empty).
    """

    template_name: str
    template_sha256: str
    cases: tuple[CaseResult, ...]
    notes: tuple[str, ...] = ()
    source: str = "template"  # "template" (rendered now) or "recorded" (cases re-run from a report)
    # Continuation cases (``workbench.validate.continuation``), apart from ``cases``: exports replay
    # ``cases`` through other parsers and grammars, which know no start stage.
    continuation: tuple[CaseResult, ...] = ()
    # Features the template renders (or the spec reads) that no case tested (``validate.untested``).
    untested: tuple[UntestedFeature, ...] = ()
    # Why the template's renders cannot be trusted: a case rendered twice gave different text ("" if not).
    unstable: str = ""

    @property
    def applicable(self) -> tuple[CaseResult, ...]:
        """The round-trip cases the template supports (what exports replay; continuation is apart)."""
        return tuple(c for c in self.cases if c.status != UNSUPPORTED)

    @property
    def verdict(self) -> ValidationVerdict:
        """Validated, or why not: failing features, an unstable template, untested features (pure)."""
        applicable = self.applicable
        continued = [c for c in self.continuation if c.status != UNSUPPORTED]
        failed = [name for name, f in self.features().items() if f["status"] == FAIL]
        return compute_verdict(
            passed=sum(c.status == PASS for c in applicable),
            applicable=len(applicable),
            all_pass=all(c.status == PASS for c in (*applicable, *continued)),
            failed=failed,
            untested=self.untested,
            unstable=self.unstable,
            limits=find_limits(self.cases),
        )

    @property
    def validated(self) -> bool:
        """Every supported round-trip case passes (at least one does), and so does every supported
        continuation case; every feature the template renders was tested; the renders were stable."""
        return self.verdict.validated

    @property
    def green(self) -> bool:
        """Validated with nothing held back (not ``limited``: the template raises on no harder tool set)."""
        return self.verdict.green

    def features(self) -> dict[str, dict[str, Any]]:
        """Each feature's status: pass, fail (any case failed) or unsupported (no case applied), with why."""
        out: dict[str, dict[str, Any]] = {}
        every = (*self.cases, *self.continuation)
        for name in (*FEATURES, CONTINUATION_FEATURE):
            cases = [c for c in every if name in c.features]
            if not cases:
                continue
            failed = [c for c in cases if c.status in (FAIL, ERROR)]
            applicable = [c for c in cases if c.status != UNSUPPORTED]
            if failed:
                status, reason = FAIL, "; ".join(f"{c.id}: {c.reason}" for c in failed)
            elif not applicable:
                status, reason = UNSUPPORTED, "; ".join(dict.fromkeys(c.reason for c in cases))
            else:
                status, reason = PASS, ""
            out[name] = {"status": status, "reason": reason, "cases": [c.id for c in cases]}
        return out

    def summary(self) -> str:
        # The count is of the round-trip cases (the words every report has used); a continuation case that
        # fails shows as the feature ``continuation`` below, and ``validated`` counts it.
        applicable = self.applicable
        passed = sum(c.status == PASS for c in applicable)
        features = self.features()
        said_untested = self._in_untested(features)  # said once, as "tool calls untested (...)"
        unsupported = [
            n for n, f in features.items() if f["status"] == UNSUPPORTED and n not in said_untested
        ]
        failed = [n for n, f in features.items() if f["status"] == FAIL]
        text = f"{passed}/{len(applicable)} applicable cases pass"
        if failed:
            text += f"; the spec cannot express: {', '.join(failed)}"
        if self.unstable:
            text += f"; the template renders differently each time ({self.unstable})"
        for untested in self.untested:
            text += f"; {untested.line()}"
        verdict = self.verdict
        if verdict.status == "limited":
            text += f" with the plain tools; {raises_on(verdict.limits)}"
        if unsupported:
            text += f"; unsupported by the template: {', '.join(unsupported)}"
        return ("validated: " if verdict.validated else "NOT validated: ") + text

    def _in_untested(self, features: dict[str, dict[str, Any]]) -> set[str]:
        """The features whose every case belongs to an untested one (every call feature when tool calls
        are untested): the summary names the untested feature instead of listing them as unsupported."""
        groups = {u.feature for u in self.untested}
        key = {"tool_calls": "tool_calls", "reasoning": "reasoning_content", "content": "content"}
        by_id = {c.id: c for c in (*self.cases, *self.continuation)}
        out: set[str] = set()
        for name, info in features.items():
            cases = [by_id[i] for i in info["cases"] if i in by_id]
            if name == CONTINUATION_FEATURE:
                if "continuation" in groups:
                    out.add(name)
                continue
            if any(cases and all(c.expected.get(key[g]) for c in cases) for g in groups if g in key):
                out.add(name)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Deterministic JSON form (no timings, no prompts), as stored in ``provenance.validation``."""
        return {
            "validated": self.validated,
            "summary": self.summary(),
            "verdict": self.verdict.to_dict(),
            "untested": [u.to_dict() for u in self.untested],
            "unstable": self.unstable,
            "source": self.source,
            "template_name": self.template_name,
            "template_sha256": self.template_sha256,
            "notes": list(self.notes),
            "features": self.features(),
            "cases": [c.to_dict() for c in self.cases],
            "continuation": [c.to_dict() for c in self.continuation],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "validation") -> ValidationReport:
        """A report from its dict form; every field's type is checked (it comes from spec files people
        share): :class:`ReportError` names the first wrong field instead of a ``TypeError`` later."""
        data = _field(data, dict, where)
        cases = _field(data.get("cases", []), list, f"{where}.cases")
        continuation = _field(data.get("continuation", []), list, f"{where}.continuation")
        return cls(
            template_name=_field(data.get("template_name", ""), str, f"{where}.template_name"),
            template_sha256=_field(data.get("template_sha256", ""), str, f"{where}.template_sha256"),
            cases=tuple(CaseResult.from_dict(c, f"{where}.cases[{i}]") for i, c in enumerate(cases)),
            notes=_strings(data.get("notes", []), f"{where}.notes"),
            source=_field(data.get("source", "template"), str, f"{where}.source"),
            continuation=tuple(
                CaseResult.from_dict(c, f"{where}.continuation[{i}]") for i, c in enumerate(continuation)
            ),
            untested=tuple(
                UntestedFeature.from_dict(_field(u, dict, f"{where}.untested[{i}]"))
                for i, u in enumerate(_field(data.get("untested") or [], list, f"{where}.untested"))
            ),
            unstable=_field(data.get("unstable") or "", str, f"{where}.unstable"),
        )


def find_limits(cases: Sequence[CaseResult]) -> tuple[str, ...]:
    """What the template raises on among the harder tool sets, once the plain set's calls ran (pure).

    Tool calls were tested then, so a raise on a harder set is not an untested feature
    (:mod:`.untested`) but a limit of the template, which makes the verdict amber (``limited``).  One item
    per harder case skipped because the template raised, in the sets' order: the set's words when its
    definitions raised ("a parameter without `type`"), else the call it refused ("a call with values for
    `anyOf` parameters").  Empty when no plain call case ran: tool calls are then untested, not limited.
    """
    with_calls = [c for c in cases if c.expected.get("tool_calls")]
    if not any(c.status != UNSUPPORTED for c in with_calls if c.id not in _HARDER_IDS):
        return ()
    by_id = {c.id: c for c in with_calls}
    out: list[str] = []
    for case in HARDER_CASES:
        result = by_id.get(case.id)
        if result is None or result.status != UNSUPPORTED or result.skip != RAISED:
            continue
        if result.reason.startswith(_RAISED_ON_DEFINITIONS):
            out.append(case.tools.describes)
        else:
            out.append(f"a call with {case.description}")
    return tuple(dict.fromkeys(out))
