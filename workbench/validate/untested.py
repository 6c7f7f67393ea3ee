"""Which features the template renders that no case tested.

Skipping a case is honest only when the template does not render what it holds.  A case skipped for any
other reason -- the template raised on the case's input (a tool macro that cannot describe a parameter), or
it renders the part in a way no model output can look like -- leaves that feature untested.  Each such
feature is an :class:`~workbench.validate.verdict.UntestedFeature` and the report is not validated.

A feature is untested when no case of it ran, none of its cases showed that the template does not render it
(``NOT_RENDERED``: then it is honestly "unsupported by the template"), and at least one was skipped as
``RAISED`` or ``UNTESTABLE``.  For tool calls a raise is evidence only together with a sign that the
template does render calls: the spec reads tool calls (the analysis saw them), or the template renders a
call when given no tools (its tool-definition macro is what raised).  A case with calls that raised says
something about the tools, not about its text, so the evidence for content and reasoning is the cases
without calls.

The harder tool sets are a different matter once the plain set ran: tool calls were tested, so a raise on
a harder set is not an untested feature but a limit of the template (:func:`.report.find_limits`), which
makes the verdict amber (``limited``), not red.

Pure except for the one render ``renders_calls`` may make (the caller passes it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from workbench.runtime.spec import FormatSpec
from workbench.validate.cases import HARDER_CASES
from workbench.validate.report import NOT_RENDERED, RAISED, UNSUPPORTED, UNTESTABLE, CaseResult
from workbench.validate.verdict import UntestedFeature

_NOT_SEEN = (RAISED, UNTESTABLE)
# The harder tool sets' cases: the plain set's skips say why tool calls went untested.
_HARDER_IDS = frozenset(c.id for c in HARDER_CASES)


def find_untested(
    spec: FormatSpec,
    cases: Sequence[CaseResult],
    continuation: Sequence[CaseResult],
    *,
    renders_calls: Callable[[], bool] | None = None,
) -> tuple[UntestedFeature, ...]:
    """The features the template renders that no case tested (see the module doc).

    ``renders_calls`` answers whether the template renders a call when given no tools; it is asked only when
    every call case was skipped by a raise and the spec reads no tool calls.
    """
    every = (*cases, *continuation)
    round_trip = {c.id for c in cases}
    out: list[UntestedFeature] = []

    # content: what a plain answer (or a continued one) shows; reasoning: the cases holding it
    answers = [c for c in _without_calls(every) if _has(c, "content") and not _has(c, "reasoning_content")]
    if not _ran_with(every, "content") and _untested(answers, round_trip, "content"):
        out.append(UntestedFeature("content", _reasons(answers)))

    thoughts = [c for c in _without_calls(every) if _has(c, "reasoning_content")]
    if not _ran_with(every, "reasoning_content") and _untested(thoughts, round_trip, "reasoning"):
        out.append(UntestedFeature("reasoning", _reasons(thoughts)))

    with_calls = [c for c in cases if c.expected.get("tool_calls")]
    plain = [c for c in with_calls if c.id not in _HARDER_IDS]
    skipped = bool(plain) and not _ran(with_calls) and _untested(plain, round_trip, "tool calls")
    # a raise is evidence only with a sign that the template renders calls (the last check renders)
    if skipped and (spec.tools.format != "none" or (renders_calls is not None and renders_calls())):
        out.append(UntestedFeature("tool_calls", _reasons(plain)))

    # continuation is the serving stack's, not the template's: any skip but a raise or an untestable
    # render is the template not supporting it
    if continuation and not _ran(continuation) and any(c.skip in _NOT_SEEN for c in continuation):
        out.append(UntestedFeature("continuation", _reasons(continuation)))
    return tuple(out)


def _untested(cases: Sequence[CaseResult], round_trip: set[str], part: str) -> bool:
    """No round-trip case says the template does not render ``part`` (its reason names the part), and one
    of ``cases`` was skipped because the template raised or renders it untestably."""
    said_not_rendered = any(c.skip == NOT_RENDERED and c.id in round_trip and part in c.reason for c in cases)
    return not said_not_rendered and any(c.status == UNSUPPORTED and c.skip in _NOT_SEEN for c in cases)


def _has(case: CaseResult, key: str) -> bool:
    return bool(str(case.expected.get(key) or "").strip())


def _ran_with(cases: Sequence[CaseResult], key: str) -> bool:
    """A case holding ``key`` ran (calls included: reasoning before a call is reasoning too)."""
    return any(c.status != UNSUPPORTED for c in cases if _has(c, key))


def _without_calls(cases: Sequence[CaseResult]) -> list[CaseResult]:
    return [c for c in cases if not c.expected.get("tool_calls")]


def _ran(cases: Sequence[CaseResult]) -> bool:
    return any(c.status != UNSUPPORTED for c in cases)


def _reasons(cases: Sequence[CaseResult]) -> str:
    """The distinct reasons of the cases skipped as raised or untestable, the first two, joined."""
    reasons = list(dict.fromkeys(c.reason for c in cases if c.status == UNSUPPORTED and c.skip in _NOT_SEEN))
    text = "; ".join(reasons[:2])
    return text + (f" (and {len(reasons) - 2} more)" if len(reasons) > 2 else "")
