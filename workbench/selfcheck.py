"""The analysis checks itself: a verdict per feature, from the template's own renders parsed back.

An analysed spec can be silently wrong: the probes only see what they vary, and a format the spec's fields
cannot describe still yields *a* spec.  So after analysing, the standard round-trip messages (content,
reasoning, one call, two calls, typed arguments, nested values, escapes) are rendered through the template
and parsed back with the spec (this is :func:`workbench.validate.validate`), and every feature gets one of
three verdicts:

- ``works``: every case of the feature parses back to the message that was rendered;
- ``not_rendered``: the template does not render it (no case applies), with the template's reason;
- ``cannot_express``: the template renders it but the spec does not read it back, with the first case that
  fails and its first difference.  This is the verdict a person onboarding a new format must never miss;
- ``untested``: the template renders it (or the spec reads it) but no case of it could run (e.g. every
  tool-call case was skipped because the template raises on the tool definitions), with why: not working,
  not known to work (``feature`` is ``content``, ``reasoning``, ``tool_calls`` or ``continuation``);
- ``unstable`` (feature ``renders``): the template renders different text each time, so nothing can be
  checked against it.

``analyze`` prints the verdicts (``--json`` carries them under ``"verdicts"``); ``parse`` and ``generate``
warn on stderr when the spec they use cannot express a feature its template renders.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from workbench.runtime.spec import FormatSpec
    from workbench.template.source import TemplateSource
    from workbench.validate import ValidationReport

VerdictStatus = Literal["works", "not_rendered", "cannot_express", "untested", "unstable"]
_FROM_REPORT: dict[str, VerdictStatus] = {
    "pass": "works",
    "unsupported": "not_rendered",
    "fail": "cannot_express",
}


@dataclass(frozen=True)
class Verdict:
    """One feature's verdict; ``case`` and ``difference`` name the first failing case for cannot_express."""

    feature: str
    status: VerdictStatus
    reason: str = ""
    case: str = ""
    difference: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdicts_from_report(report: ValidationReport) -> tuple[Verdict, ...]:
    """The verdict of every feature the report's cases cover (pure)."""
    by_id = {c.id: c for c in report.cases}
    out: list[Verdict] = []
    for feature, info in report.features().items():
        status = _FROM_REPORT.get(info["status"], "cannot_express")
        if status != "cannot_express":
            out.append(Verdict(feature, status, info["reason"] if status == "not_rendered" else ""))
            continue
        failing = [
            by_id[i] for i in info["cases"] if i in by_id and by_id[i].status not in ("pass", "unsupported")
        ]
        first = failing[0] if failing else None
        difference = ""
        if first is not None:
            difference = first.mismatches[0] if first.mismatches else first.reason
        out.append(
            Verdict(
                feature,
                "cannot_express",
                first.reason if first is not None else info["reason"],
                first.id if first is not None else "",
                difference,
            )
        )
    # (read leniently: the TUI's tests hand in report-shaped objects without these)
    out.extend(Verdict(u.feature, "untested", u.reason) for u in getattr(report, "untested", ()))
    if unstable := getattr(report, "unstable", ""):
        out.append(Verdict("renders", "unstable", unstable))
    return tuple(out)


def check_spec(source: TemplateSource, spec: FormatSpec, *, time_limit: float = 2.0) -> tuple[Verdict, ...]:
    """Render the round-trip messages through ``source`` and parse them back with ``spec`` (renders only).

    Each case is read one-shot: the verdict says whether the spec can express the feature; chunk
    invariance is the parser's own property (checked by ``workbench validate`` on every case, and by the
    property tests over every format)."""
    from workbench.validate import validate

    return verdicts_from_report(validate(source, spec, time_limit=time_limit, streamed=False))


#: How many analyses of this process have offered to start early renders (:meth:`EarlyRenders.start`).
_STARTS = 0


class EarlyRenders:
    """The self-check's first renders, made while the analysis is still learning the turn.

    ``workbench analyze`` runs the analysis, then the self-check of the spec it found; the self-check's
    renders (a dozen generation prompts, a case each) wait on the render worker while this process is idle.
    Given to the analysis as its ``on_spec`` hook, :meth:`start` has another thread render them
    (:func:`workbench.validate.run.render_cases_early`), in a render worker of its own, for the spec the
    probes established, while the analysis learns the call pattern and the turn layout; they land in the
    command's render cache (:mod:`workbench.template.render_cache`), where the self-check finds them.
    Nothing else changes: a render is the render of an exact context, so a spec the turn learning then
    changes only means some renders are made later, by the self-check itself.  Started only when a second
    worker is idle (:func:`~workbench.template.render.spare_worker_ready`: the second analysis of a process
    starts one for the next; a one-off command starts none), never when rendering in-process.  Use inside
    the command's ``cached_renders()`` block, and :meth:`join` before the self-check.
    """

    def __init__(self, time_limit: float = 2.0) -> None:
        self.time_limit = time_limit
        self._thread: threading.Thread | None = None

    def start(self, source: TemplateSource, spec: FormatSpec) -> None:
        from workbench.template.render import spare_worker_ready
        from workbench.validate.run import render_cases_early

        global _STARTS
        _STARTS += 1
        # a process's first analysis starts no second worker: a one-off command would pay its boot
        # (~0.15 s of CPU beside its own) and never use it
        if self._thread is not None or not spare_worker_ready(start=_STARTS > 1):
            return
        context = contextvars.copy_context()  # the command's render cache and fixed clock
        self._thread = threading.Thread(
            target=context.run,
            args=(render_cases_early, source, spec),
            kwargs={"time_limit": self.time_limit},
            name="self-check renders",
            daemon=True,
        )
        self._thread.start()

    def join(self) -> None:
        """Wait for the renders started (none: returns at once)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def recorded_verdicts(spec: FormatSpec) -> tuple[Verdict, ...]:
    """The verdicts of the validation report an exported spec carries (empty when it carries none)."""
    from workbench.validate import ValidationReport

    data = spec.provenance.validation
    if not isinstance(data, dict) or "cases" not in data:
        return ()
    return verdicts_from_report(ValidationReport.from_dict(data, "provenance.validation"))


def cannot_express(verdicts: tuple[Verdict, ...]) -> list[str]:
    """The features the template renders but the spec cannot read back."""
    return [v.feature for v in verdicts if v.status == "cannot_express"]


def untested(verdicts: tuple[Verdict, ...]) -> list[str]:
    """The features the template renders that no case tested."""
    return [v.feature for v in verdicts if v.status == "untested"]


def warning_line(verdicts: tuple[Verdict, ...]) -> str:
    """One line for stderr when the spec fails a feature its template renders, leaves one untested, or the
    template renders differently each time ("" when none of these)."""
    parts: list[str] = []
    failed = cannot_express(verdicts)
    if failed:
        first = next(v for v in verdicts if v.status == "cannot_express")
        parts.append(
            f"the spec cannot express {', '.join(failed)}, which the template renders "
            f"(first: {first.case or first.feature}: {first.difference or first.reason})"
        )
    for v in verdicts:
        if v.status == "untested":
            label = v.feature.replace("_", " ")
            parts.append(f"{label} untested ({v.reason})" if v.reason else f"{label} untested")
        elif v.status == "unstable":
            parts.append(f"the template renders differently each time ({v.reason})")
    if not parts:
        return ""
    return "; ".join(parts) + "; see `workbench validate`"
