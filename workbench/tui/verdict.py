"""The validation verdict as the TUI shows it: one short, never-cut label for the top line of every screen,
and the full sentence for the Analysis and Export screens.

This is the one place the TUI reads a :class:`~workbench.validate.ValidationReport`'s verdict: what counts
as green is the report's business (``validated``, the features it could not test), and when the report
grows a richer verdict only :func:`verdict_of` changes.  Pure: no Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from workbench.tui.workspace import Workspace

if TYPE_CHECKING:
    from workbench.validate import ValidationReport

VerdictState = Literal["none", "running", "validated", "limited", "not_validated", "failed"]

#: The glyph that says the state without colour (a person may not see the colour).  ``limited`` (amber:
#: validated with the plain tools, but the template raises on harder tool sets) has its own, never ``✓``.
GLYPHS: dict[VerdictState, str] = {
    "none": "·",
    "running": "…",
    "validated": "✓",
    "limited": "!",
    "not_validated": "✗",
    "failed": "✗",
}


@dataclass(frozen=True)
class Verdict:
    """``short`` fits the top line at 80 columns; ``text`` is the report's own sentence."""

    state: VerdictState
    short: str
    text: str

    @property
    def green(self) -> bool:
        """Plain green: validated with nothing held back."""
        return self.state == "validated"

    @property
    def exportable(self) -> bool:
        """Validated for what the template renders (green or amber): ``s`` exports without force."""
        return self.state in ("validated", "limited")

    @property
    def label(self) -> str:
        """The short form with its glyph: what the top line shows."""
        return f"{GLYPHS[self.state]} {self.short}"


def report_verdict(report: ValidationReport) -> Verdict:
    """A report's verdict (pure), from the report's own (:attr:`ValidationReport.verdict`): green only when
    it says validated with nothing held back; amber (``limited``) when validated with the plain tools while
    the template raises on harder tool sets; otherwise the short form names what held it back (the count of
    passing cases when cases failed, "tool calls untested" when a feature the template renders was never
    tested)."""
    verdict = getattr(report, "verdict", None)
    if verdict is None:  # a report without a verdict of its own (older objects): its validated flag
        applicable = report.applicable
        passed = sum(c.status == "pass" for c in applicable)
        count = f"{passed}/{len(applicable)}"
        if report.validated:
            return Verdict("validated", f"validated {count}", report.summary())
        return Verdict("not_validated", f"NOT validated {count}", report.summary())
    count = f"{verdict.passed}/{verdict.applicable}"
    text = verdict.headline
    if verdict.status == "limited":
        return Verdict("limited", f"validated {count}, plain tools only", text)
    if verdict.validated:
        return Verdict("validated", f"validated {count}", text)
    if verdict.status == "failed":
        short = f"NOT validated {count}"
    elif verdict.status == "unstable":
        short = "NOT validated: unstable"
    elif verdict.status == "untested":
        labels = [u.label for u in verdict.untested]
        short = f"NOT validated: {labels[0]} untested" + (" …" if len(labels) > 1 else "")
    else:
        short = "NOT validated: nothing tested"
    return Verdict("not_validated", short, text)


def verdict_of(ws: Workspace) -> Verdict:
    """The verdict of the spec in use (pure): not yet run, running, failed to run, or the report's."""
    if ws.spec is None:
        return Verdict("none", "no spec", "no spec yet: the analysis has not finished")
    if ws.validation is not None:
        return report_verdict(ws.validation)
    summary = ws.validation_summary
    if summary.startswith("validation failed"):
        return Verdict("failed", "validation failed", summary)
    if summary:
        return Verdict("running", "validating", summary)
    return Verdict("none", "not validated yet", "not validated yet (v validates)")
