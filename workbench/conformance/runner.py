"""Run conformance cases: every case one-shot and streamed, judged by its suite's rules.

Runs per case (each must pass for the case to pass):

- ``oneshot``: ``parse(spec, text)`` (for cases judged on deltas, one ``feed`` of the whole text);
- ``per_char``: one ``feed`` per character (llama.cpp's harness feeds every prefix);
- ``random-N``: random chunkings from a fixed seed (chunk lengths 1-3, 1-11, 1-47 characters);
- ``chunks``: the case's own ``chunks``, when given (the deltas the upstream test fed).

Every streamed run also checks the streaming invariants (``invariants.py``).  For llama.cpp cases that are
not partial, a streamed run is judged twice, as llama.cpp's harness does: on the finished parse and on the
accumulated deltas.  A case that crashes the parser fails (for ``no_crash`` cases that is the only check).

A streamed run reads the message with ``current()`` after every feed: that partial parse is what OpenAI
deltas are computed from, so it is what a client has received.  Cases judged "as the stream stands" (partial
llama.cpp cases, peer streaming cases) use the last partial parse; the others use ``finish()``.

Each case is parsed under the parsing profile of the engine its upstream test targeted (``Plan.profile``);
``Runner(profile=...)`` runs every case under one profile instead, e.g. ``"workbench"`` to measure how far
the workbench's own defaults get without any engine's policies.

``is_reasoning_end`` is derived from the parser by a probe: after the input, one ordinary character is fed;
reasoning has ended when that character lands in the content or in a call's arguments rather than in the
reasoning (or nowhere, e.g. inside a Harmony header).  This asks the parser the same question the upstream
check asks of its reasoning parser, without a dedicated API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from workbench.conformance.backend import Backend, ParsingBackend
from workbench.conformance.cases import LLAMACPP, Case, CaseFileError
from workbench.conformance.checks import check_llamacpp, check_peer
from workbench.conformance.plan import FINAL, Plan, plan_for
from workbench.conformance.targets import SpecProvider, Target, TargetError, target_for
from workbench.runtime.chat import ChatDataError, Tool
from workbench.runtime.events import Diagnostic
from workbench.streaming.chunks import DEFAULT_SEED, chunk_runs
from workbench.streaming.invariants import continuity_violations, event_violations, nameless_calls
from workbench.streaming.observed import Observed, observed_from_message

PROBE = "Z"
INTERNAL = "E-INTERNAL"  # the parser's diagnostic for an exception it caught instead of raising


@dataclass(frozen=True)
class RunResult:
    """The outcome of one way of feeding one case."""

    run: str
    differences: tuple[str, ...] = ()
    violations: tuple[str, ...] = ()
    crash: str | None = None
    observed: Observed | None = None

    @property
    def ok(self) -> bool:
        return not self.differences and not self.violations and self.crash is None

    @property
    def first_problem(self) -> str | None:
        if self.crash:
            return f"crash: {self.crash}"
        if self.differences:
            return self.differences[0]
        if self.violations:
            return f"streaming invariant: {self.violations[0]}"
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"run": self.run, "ok": self.ok}
        if self.crash:
            out["crash"] = self.crash
        if self.differences:
            out["differences"] = list(self.differences)
        if self.violations:
            out["violations"] = list(self.violations)
        return out


@dataclass(frozen=True)
class CaseResult:
    """The verdict on one case, with every run and the first problem found."""

    case: Case
    target: str
    runs: tuple[RunResult, ...] = ()
    error: str | None = None  # the case could not be run at all (missing template, bad options, ...)
    notes: tuple[str, ...] = field(default=())
    profile: str = ""  # the engine profile the case was parsed under

    @property
    def passed(self) -> bool:
        return self.error is None and all(r.ok for r in self.runs)

    @property
    def first_difference(self) -> str | None:
        if self.error:
            return self.error
        for run in self.runs:
            if not run.ok:
                return f"[{run.run}] {run.first_problem}"
        return None

    def to_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.case.case_id,
            "suite": self.case.suite,
            "group": self.case.group,
            "name": self.case.name,
            "target": self.target,
            "profile": self.profile,
            "passed": self.passed,
            "first_difference": self.first_difference,
            "failed_runs": [r.run for r in self.runs if not r.ok],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        failing = next((r for r in self.runs if not r.ok), None)
        if failing is not None and failing.observed is not None:
            out["observed"] = failing.observed.to_dict()
        if verbose:
            out["runs"] = [r.to_dict() for r in self.runs]
        return out


def chunkings(case: Case, *, seed: int = DEFAULT_SEED) -> list[tuple[str, tuple[str, ...] | None]]:
    """The runs for a case: ``(name, chunks)``, ``chunks=None`` meaning one-shot.

    The random chunkings depend only on the seed and the case id, so a failure reproduces exactly.
    """
    runs = chunk_runs(case.input, case.case_id, seed=seed)
    if case.chunks is not None:
        runs.append(("chunks", case.chunks))
    return runs


def tools_for(case: Case) -> list[Tool] | None:
    """The request's tools as ``workbench.runtime.chat.Tool`` (``None`` = no tools in the request)."""
    if case.tools is None:
        return None
    try:
        return [Tool.from_openai(t) for t in case.tools]
    except ChatDataError as exc:
        raise CaseFileError(f"{case.case_id}: bad tool definition ({exc})") from None


class Runner:
    """Runs cases against a parser backend and a spec provider (both injectable for tests)."""

    def __init__(
        self,
        specs: SpecProvider | None = None,
        backend: Backend | None = None,
        *,
        seed: int = DEFAULT_SEED,
        streamed: bool = True,
        profile: str | None = None,
    ) -> None:
        """``profile``: run every case under this engine's parsing profile (``None``: each case's own)."""
        self.specs = specs or SpecProvider()
        self._backend = backend
        self.seed = seed
        self.streamed = streamed
        self.profile = profile

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = ParsingBackend()
        return self._backend

    def run_all(
        self, cases: Iterable[Case], progress: Callable[[CaseResult], None] | None = None
    ) -> list[CaseResult]:
        results = []
        for case in cases:
            result = self.run_case(case)
            results.append(result)
            if progress is not None:
                progress(result)
        return results

    def run_case(self, case: Case) -> CaseResult:
        try:
            plan = plan_for(case)
            tools = tools_for(case)
        except CaseFileError as exc:
            return CaseResult(case, "", error=str(exc))
        target = target_for(case, plan)
        if target is None:
            return CaseResult(case, "", error=f"no template or spec is mapped for family {case.group!r}")
        try:
            spec = self.specs.spec(target)
        except TargetError as exc:
            return CaseResult(case, target.label, error=str(exc))
        profile = self.profile or plan.profile
        try:
            options, unsupported = self.backend.make_options(
                plan.parse_options(), profile, plan.profile_streaming
            )
        except (ValueError, TypeError) as exc:  # an unknown profile or option: this case cannot run
            return CaseResult(case, target.label, error=f"parse options: {exc}", profile=profile)
        notes = [f"ignored option: {x}" for x in plan.ignored]
        notes += [f"parser does not support {x}" for x in unsupported]
        runs = chunkings(case, seed=self.seed)
        if not self.streamed:
            runs = runs[:1]
        results = tuple(
            self._run(case, plan, target, spec, tools, options, name, chunks) for name, chunks in runs
        )
        return CaseResult(case, target.label, results, notes=tuple(notes), profile=profile)

    # ------------------------------------------------------------------------------------------- one run
    def _run(
        self,
        case: Case,
        plan: Plan,
        target: Target,
        spec: Any,
        tools: Sequence[Tool] | None,
        options: Any,
        name: str,
        chunks: tuple[str, ...] | None,
    ) -> RunResult:
        check = check_llamacpp if plan.rules == LLAMACPP else check_peer
        probe = "is_reasoning_end" in case.expect
        try:
            if chunks is None and plan.point == FINAL and not probe:
                result = self.backend.parse(spec, case.input, tools, options)
                diagnostics = result.diagnostics
                observed = observed_from_message(result.message, diagnostics)
                differences = tuple(check(case.expect, observed))
                return RunResult(name, differences, tuple(internal_errors(diagnostics)), observed=observed)
            return self._run_streamed(case, plan, spec, tools, options, name, chunks or (case.input,), check)
        except Exception as exc:  # a parser crash is a verdict, not a runner failure
            return RunResult(name, crash=f"{type(exc).__name__}: {exc}")

    def _run_streamed(
        self,
        case: Case,
        plan: Plan,
        spec: Any,
        tools: Sequence[Tool] | None,
        options: Any,
        name: str,
        chunks: Sequence[str],
        check: Callable[[Any, Observed], list[str]],
    ) -> RunResult:
        stream = self.backend.stream(spec, tools, options)
        events: list[Any] = []
        snapshots: list[Observed] = []
        for chunk in chunks:
            events.extend(stream.feed(chunk))
            snapshots.append(observed_from_message(stream.current()))
        streamed = snapshots[-1] if snapshots else observed_from_message(stream.current())
        finished = stream.finish()
        final = observed_from_message(finished.message, finished.diagnostics)

        drops = bool(final.diagnostics)
        violations = internal_errors(finished.diagnostics) + event_violations(events)
        for step, (before, after) in enumerate(pairwise(snapshots)):
            where = f"after feed #{step + 2}"
            violations += nameless_calls(after, where=where)
            violations += continuity_violations(before, after, where=where, drops_allowed=drops)
        violations += continuity_violations(streamed, final, where="at finish", drops_allowed=drops)

        observed = final if plan.point == FINAL else streamed
        if "is_reasoning_end" in case.expect:
            observed = replace(observed, reasoning_ended=self._probe(spec, tools, options, chunks))
        differences = list(check(case.expect, observed))
        if plan.rules == LLAMACPP and plan.point == FINAL and not differences:
            # llama.cpp rule 4: the accumulated deltas (the last partial parse) must match as well.
            differences = [f"accumulated deltas: {d}" for d in check(case.expect, streamed)]
        return RunResult(name, tuple(differences), tuple(violations[:5]), observed=observed)

    def _probe(self, spec: Any, tools: Sequence[Tool] | None, options: Any, chunks: Sequence[str]) -> bool:
        """Has reasoning ended after ``chunks``?  Feed one ordinary character and see where it goes."""
        stream = self.backend.stream(spec, tools, options)
        for chunk in chunks:
            stream.feed(chunk)
        before = observed_from_message(stream.current())
        stream.feed(PROBE)
        after = observed_from_message(stream.current())
        content_before, content_after = before.content or "", after.content or ""
        if content_after != content_before and content_after.endswith(PROBE):
            return True
        old_args = [c.arguments for c in before.tool_calls]
        new_args = [c.arguments for c in after.tool_calls]
        return new_args != old_args and any(a.endswith(PROBE) for a in new_args)


def internal_errors(diagnostics: Iterable[Diagnostic]) -> list[str]:
    """The parser's own "I failed" diagnostics: a caught internal exception still fails the case."""
    return [f"internal parser error: {d.message}" for d in diagnostics if d.code == INTERNAL]
