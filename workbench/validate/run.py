"""The entry points: validate a spec against its template, or re-check the cases a spec recorded."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from workbench.runtime.spec import FormatSpec
from workbench.template.budget import RenderBudget, budget_for
from workbench.template.render import TemplateError, fixed_clock
from workbench.template.render_cache import cached_renders
from workbench.template.source import TemplateSource
from workbench.validate.cases import USER_TURN, Case, build_cases
from workbench.validate.compare import ParseFn, check_output, parse_output, streamed_from_prompt
from workbench.validate.continuation import continuation_results, recheck, render_continuations_ahead
from workbench.validate.render import (
    AFTER_GUESSED_END,
    AFTER_TURN_END,
    IN_OWN_MESSAGE,
    NAMELESS_CALL,
    CaseRenderer,
    find_turn_end,
    render_case,
    render_cases_ahead,
)
from workbench.validate.report import FAIL, UNSUPPORTED, UNTESTABLE, CaseResult, ValidationReport
from workbench.validate.untested import find_untested


def validate(
    source: TemplateSource,
    spec: FormatSpec | None = None,
    *,
    time_limit: float = 2.0,
    parse: ParseFn = parse_output,
    template_kwargs: dict[str, Any] | None = None,
    continuation: bool = True,
    streamed: bool = True,
) -> ValidationReport:
    """Validate ``spec`` (analysed from ``source`` when not given) against the template's own renders.

    ``template_kwargs`` are template switches (``--kw reasoning_effort=none``) every case is rendered with;
    the output is read from the stage the prompt they give leaves it in.  ``continuation`` adds the
    continuation cases (a partial message continued, :mod:`workbench.validate.continuation`), which the
    built-in parser reads whatever ``parse`` is.  Every case renders at the analysis' fixed instant
    (:func:`~workbench.template.render.fixed_clock`), so a template that prints the time gives the output
    the spec was read from, and the same report on every run.  ``streamed=False`` parses each case
    one-shot only (the analysis's self-check: whether the spec can read each feature; chunk invariance is
    the parser's own property, and ``workbench validate`` checks it on every case).  Renders are shared
    with the analysis (the same conversations are rendered once per process:
    :mod:`workbench.template.render_cache`).
    """
    with fixed_clock(), cached_renders(), budget_for(time_limit, "validation") as budget:
        report = _validate(source, spec, time_limit, parse, template_kwargs, continuation, streamed)
        budget.raise_if_exhausted()  # a report of cases whose renders were refused is not a verdict
    return report


def _validate(
    source: TemplateSource,
    spec: FormatSpec | None,
    time_limit: float,
    parse: ParseFn,
    template_kwargs: dict[str, Any] | None,
    continuation: bool,
    streamed: bool = True,
) -> ValidationReport:
    if spec is None:
        from workbench.formats import analyze

        spec = analyze(source, time_limit=time_limit).spec
    results: list[CaseResult] = []
    notes: list[str] = []
    renderer, turn_end, cases = _cases_for(source, spec, time_limit, template_kwargs)
    if renderer.template_kwargs:
        said = ", ".join(f"{k}={v!r}" for k, v in renderer.template_kwargs.items())
        notes.append(f"rendered with the template switches {said}")
    render_cases_ahead(renderer, cases)
    if turn_end:
        notes.append(
            f"the spec names no end marker; the template ends a turn with {turn_end!r}, cut like one"
        )
    unstable = ""
    for case in cases:
        rendered = render_case(renderer, spec, case, turn_end=turn_end)
        if rendered.unstable and not unstable:
            unstable = f"{case.id}: {rendered.unstable}"
        base = CaseResult(
            id=case.id,
            features=case.features,
            description=case.description,
            status=UNSUPPORTED,
            reason=rendered.unsupported,
            output=rendered.output,
            generation_prefix=rendered.generation_prefix,
            thinking_opened=rendered.thinking_opened,
            compare_ids=rendered.compare_ids,
            expected=case.expected(),
            prompt=rendered.prompt,
            skip=rendered.skip,
        )
        if rendered.note and rendered.note not in notes:
            notes.append(rendered.note)
        if rendered.unsupported:
            results.append(base)
            continue
        ambiguity = raw_value_ambiguity(spec, case, rendered.output)
        if ambiguity:
            results.append(replace(base, reason=ambiguity, skip=UNTESTABLE))
            continue
        results.append(_parsed_back(spec, base, parse, streamed=streamed))
    results = _blame_the_spec_for_early_cuts(results)
    continued = (
        continuation_results(renderer, spec, turn_end=turn_end, streamed=streamed) if continuation else ()
    )
    untested = find_untested(
        spec,
        results,
        continued,
        renders_calls=lambda: _renders_calls_without_tools(renderer, cases),
    )
    notes = [*renderer.notes, *notes]
    return ValidationReport(
        template_name=source.name,
        template_sha256=source.sha256,
        cases=tuple(results),
        notes=tuple(dict.fromkeys(notes)),
        continuation=continued,
        untested=untested,
        unstable=unstable,
    )


def _cases_for(
    source: TemplateSource, spec: FormatSpec, time_limit: float, template_kwargs: dict[str, Any] | None
) -> tuple[CaseRenderer, str, tuple[Case, ...]]:
    """The renderer, the end-of-turn text and the cases :func:`validate` renders for ``spec``."""
    # The cases carry reasoning: rendered with thinking on, by enable_thinking and by the template's own
    # thinking switch when it has one (``thinking=True`` where the template's default is off).
    from workbench.analysis.switches import with_thinking_switch

    kwargs = with_thinking_switch(spec, True, template_kwargs) or None
    renderer = CaseRenderer(source, time_limit, kwargs)
    turn_end = find_turn_end(renderer, spec)
    return renderer, turn_end, build_cases(spec, turn_end)


def render_cases_early(source: TemplateSource, spec: FormatSpec, *, time_limit: float = 2.0) -> None:
    """Make the renders a self-check of ``spec`` will ask for first (the generation prompts, each case's
    first way, the continuation cases), keeping nothing but the render cache's entries: called while the
    analysis is still learning the turn, in another thread and render worker, so that the self-check finds
    its renders made (:class:`workbench.selfcheck.EarlyRenders`).  A spec the analysis then changes asks
    for some other renders, made then; what was made is the render of an exact context, right for whoever
    asks for it.  Never raises."""
    try:
        with fixed_clock(), RenderBudget(time_limit, what="the self-check's early renders"):
            renderer, _turn_end, cases = _cases_for(source, spec, time_limit, None)
            render_cases_ahead(renderer, cases, again=False)
            render_continuations_ahead(renderer)
    except Exception:  # only an earlier start of renders the self-check makes anyway
        return


def _renders_calls_without_tools(renderer: CaseRenderer, cases: tuple[Case, ...]) -> bool:
    """Does the template render a call when no tools are passed?  Asked when every call case was skipped
    because the template raised: its tool-definition macro may be what raises, while the calls render."""
    case = next((c for c in cases if c.calls), None)
    if case is None:
        return False
    for as_string in (False, True):
        try:
            text = renderer.render([USER_TURN, case.message(string_arguments=as_string)], None, False)
        except TemplateError:
            continue
        return case.calls[0].name in text
    return False


def _parsed_back(spec: FormatSpec, case: CaseResult, parse: ParseFn, *, streamed: bool = True) -> CaseResult:
    """``case`` with its output parsed by ``spec`` and compared with what was rendered."""
    status, reason, parsed, mismatches = check_output(
        spec,
        case.id,
        case.output,
        case.expected,
        thinking_opened=case.thinking_opened,
        compare_ids=case.compare_ids,
        parse=parse,
        # the built-in parser is also read after every feed, as a client reads its deltas
        stream=streamed_from_prompt(case.thinking_opened) if parse is parse_output else None,
        streamed=streamed,
    )
    return replace(case, status=status, reason=reason, parsed=parsed, mismatches=mismatches)


def _blame_the_spec_for_early_cuts(results: list[CaseResult]) -> list[CaseResult]:
    """Cases cut off by the spec's end-of-turn marker fail the *spec* when the part cut off comes in a
    further message of the assistant's own (its header follows the marker: the turn goes on), after a turn
    end validation guessed because the spec names none, or when even plain content is cut off.

    A template may well write something after its turn ends (DeepSeek-R1 puts an assistant's content after
    its calls' end-of-sentence): that case is unsupported by the template.  But when the plain answer of the
    content-only case lies beyond the spec's end of turn, the template clearly renders it inside the turn and
    the spec's markers are what cannot describe it; saying "unsupported by the template" would send the
    person looking in the wrong place.
    """
    results = _failed_where(
        results,
        IN_OWN_MESSAGE,
        "the spec cannot express this: the template renders it in a further message of the assistant's own, "
        "after a marker the spec takes for the end of the turn",
    )
    results = _failed_where(
        results,
        NAMELESS_CALL,
        "the spec cannot express this: the template renders the call but writes its id (or nothing) where "
        "the function's name would be, with or without an id in the history; no reader can tell the function",
    )
    results = _failed_where(
        results,
        AFTER_GUESSED_END,
        "the spec cannot express this: the template renders it after the text validation took for the "
        "turn's end, and the spec names no end of its own",
    )
    by_id = {r.id: r for r in results}
    content_only = by_id.get("content_only")
    if content_only is None or content_only.status != UNSUPPORTED:
        return results
    if AFTER_TURN_END not in content_only.reason:
        return results
    return _failed_where(
        results,
        AFTER_TURN_END,
        "the spec cannot express this: the template renders it inside the turn, but the spec's end-of-turn "
        "marker cuts the output before it",
    )


def _failed_where(results: list[CaseResult], said: str, reason: str) -> list[CaseResult]:
    """``results`` with each unsupported case whose reason says ``said`` failed instead, for ``reason``."""
    return [
        replace(r, status=FAIL, reason=reason) if r.status == UNSUPPORTED and said in r.reason else r
        for r in results
    ]


def raw_value_ambiguity(spec: FormatSpec, case: Case, output: str) -> str:
    """A value holding the format's own marker is ambiguous when the template writes values raw (unescaped):
    the text alone cannot tell the value's marker from the real one.  Judged from the render: the value
    appears verbatim but not as a JSON string (quoted), and contains a marker of the spec.  So is a value
    holding the very quote the template writes raw around it (``body="He said "hi""``): no reader can tell
    the value's quote from its end."""
    framing = {m.strip() for m in spec.all_markers() if len(m.strip()) >= 2} if case.calls else set()
    for call in case.calls:
        for value in call.arguments.values():
            if not isinstance(value, str) or value not in output:
                continue
            quoted = json.dumps(value, ensure_ascii=False) in output or json.dumps(value) in output
            if quoted or repr(value) in output:
                continue
            if "marker_text" in case.features and any(m in value for m in framing):
                return (
                    "the template writes argument values raw, so a value holding the format's own markers "
                    "cannot be told apart from them"
                )
            if any(q in value and f"{q}{value}{q}" in output for q in ('"', "'")):
                return (
                    "the template writes string values raw between quotes, so a value holding that quote "
                    "cannot be told apart from the value's end"
                )
    return ""


def validate_recorded(
    spec: FormatSpec, report: ValidationReport, *, parse: ParseFn = parse_output
) -> ValidationReport:
    """Re-run the cases recorded in ``report`` (e.g. from an exported spec's provenance) without a template.

    The outputs were cut from the template's renders when the report was made; only the parsing side is
    checked again, so an edited spec or a changed parser is caught even where the template is not at hand.
    """
    results: list[CaseResult] = []
    for case in report.cases:
        if case.status == UNSUPPORTED:
            results.append(case)
            continue
        results.append(_parsed_back(spec, case, parse))
    notes = (
        *report.notes,
        "no template given: the recorded round-trip outputs were parsed again; nothing was re-rendered",
    )
    continued = tuple(c if c.status == UNSUPPORTED else recheck(spec, c) for c in report.continuation)
    # What the report recorded as untested stays untested; the spec given may read more (a reasoning
    # mode or a tool format the recorded cases never showed).
    untested = {u.feature: u for u in find_untested(spec, results, continued)}
    untested.update({u.feature: u for u in report.untested})
    return ValidationReport(
        template_name=report.template_name,
        template_sha256=report.template_sha256,
        cases=tuple(results),
        notes=tuple(dict.fromkeys(notes)),
        source="recorded",
        continuation=continued,
        untested=tuple(untested.values()),
        unstable=report.unstable,
    )


def report_from_spec(spec: FormatSpec) -> ValidationReport | None:
    """The validation report an exported spec carries, if any."""
    data = spec.provenance.validation
    if not data or "cases" not in data:
        return None
    return ValidationReport.from_dict(data, "provenance.validation")
