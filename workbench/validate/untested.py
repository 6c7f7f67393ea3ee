"""Which features the template renders (or the spec reads) that no case tested.

Skipping a case is honest only when the template does not render what it holds.  A case skipped for any
other reason (the template raised on the case's input, or renders the part in a way no model output can
look like) leaves that feature untested, and so does a feature the spec reads that no case could show
(the prompt opens a reasoning block the template never renders in a turn).  Each such feature is an
:class:`~workbench.validate.verdict.UntestedFeature` and the report is not validated.

The evidence per feature:

- ``tool_calls``: the spec reads tool calls (its tool format is not ``none``), or the template renders a
  call when no tools are passed (its tool-definition macro raised, the calls themselves render);
- ``reasoning``: the spec reads reasoning, or a reasoning case was skipped for a reason other than "the
  template does not render it";
- ``content`` and ``continuation``: a case was skipped for a reason other than "the template does not
  render it".

Pure except for the one render ``renders_calls`` may make (the caller passes it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.spec import FormatSpec
from workbench.validate.cases import HARDER_CASES
from workbench.validate.report import RAISED, UNSUPPORTED, UNTESTABLE, CaseResult
from workbench.validate.verdict import UntestedFeature

_NOT_SEEN = (RAISED, UNTESTABLE)


def find_untested(
    spec: FormatSpec,
    cases: Sequence[CaseResult],
    continuation: Sequence[CaseResult],
    *,
    renders_calls: Callable[[], bool] | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
) -> tuple[UntestedFeature, ...]:
    """The features with evidence that the template renders them and no case that ran (see the module doc).

    ``renders_calls`` answers whether the template renders a call when given no tools; it is asked only
    when no call case ran and the spec reads no tool calls.  ``template_kwargs`` are the switches the cases
    were rendered with: a switch value the spec records as turning reasoning off (``prompt.switches``) means
    reasoning is not expected, whatever the spec reads otherwise.
    """
    every = (*cases, *continuation)
    out: list[UntestedFeature] = []

    # A case with calls that raised says something about the tools, not about its text: the evidence for
    # content and reasoning is the cases without calls.
    with_content = [c for c in every if str(c.expected.get("content") or "").strip()]
    if not _ran(with_content) and _not_seen(_without_calls(with_content)):
        out.append(UntestedFeature("content", _reasons(_without_calls(with_content))))

    with_reasoning = [c for c in every if str(c.expected.get("reasoning_content") or "").strip()]
    if not _ran(with_reasoning):
        evidence = _without_calls(with_reasoning)
        # the round-trip case's reason first: a continuation's says less about the template
        said = evidence[0].reason if evidence else "no case holds reasoning"
        reads = spec.reasoning.mode != "none" and not switched_off_reasoning(spec, template_kwargs or {})
        if reads and not _not_seen(evidence[:1]):
            said = f"the spec reads reasoning ({spec.reasoning.mode}), but {said}: no round trip shows it"
        if reads or _not_seen(evidence):
            out.append(UntestedFeature("reasoning", _reasons(evidence[:1]) or said))

    with_calls = [c for c in cases if c.expected.get("tool_calls")]
    if with_calls and not _ran(with_calls):
        plain = [c for c in with_calls if c.id not in _HARDER_IDS] or with_calls
        if spec.tools.format != "none":
            said = _reasons(plain) or plain[0].reason or "no call case ran"
            if not _not_seen(plain):
                said = f"the spec reads tool calls ({spec.tools.format}), but {said}"
            out.append(UntestedFeature("tool_calls", said))
        elif _not_seen(plain) and renders_calls is not None and renders_calls():
            out.append(UntestedFeature("tool_calls", _reasons(plain)))

    if continuation and not _ran(continuation) and _not_seen(continuation):
        out.append(UntestedFeature("continuation", _reasons(continuation)))
    return tuple(out)


# The harder tool sets' cases: the plain set's skips say why tool calls went untested.
_HARDER_IDS = frozenset(c.id for c in HARDER_CASES)


def switched_off_reasoning(spec: FormatSpec, template_kwargs: Mapping[str, Any]) -> bool:
    """Does a switch value among ``template_kwargs`` turn reasoning off, by the spec's record of what each
    value does (it renders no reasoning, or its prompt leaves the output past the reasoning)?"""
    for name, value in template_kwargs.items():
        info = spec.prompt.switches.get(name) or {}
        for effect in info.get("effects", ()):
            same = type(effect.get("value")) is type(value) and effect.get("value") == value
            off = effect.get("renders_reasoning") is False or effect.get("start") in ("content", "answer")
            if same and off:
                return True
    return False


def _without_calls(cases: Sequence[CaseResult]) -> list[CaseResult]:
    return [c for c in cases if not c.expected.get("tool_calls")]


def _ran(cases: Sequence[CaseResult]) -> bool:
    return any(c.status != UNSUPPORTED for c in cases)


def _not_seen(cases: Sequence[CaseResult]) -> bool:
    """Some case was skipped for a reason other than "the template does not render it"."""
    return any(c.status == UNSUPPORTED and c.skip in _NOT_SEEN for c in cases)


def _reasons(cases: Sequence[CaseResult], kinds: Sequence[str] = _NOT_SEEN) -> str:
    """The distinct skip reasons of ``cases`` of those kinds, the first two, joined."""
    reasons = list(dict.fromkeys(c.reason for c in cases if c.status == UNSUPPORTED and c.skip in kinds))
    text = "; ".join(reasons[:2])
    return text + (f" (and {len(reasons) - 2} more)" if len(reasons) > 2 else "")
