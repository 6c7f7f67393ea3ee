"""What every export target shares: the error types and the consumer's :class:`Proof`.

Kept apart from the targets so that each target module depends only on this one, never on another target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.runtime.errors import WorkbenchError
from workbench.validate import PASS, UNSUPPORTED


class ExportError(WorkbenchError):
    """The spec cannot be exported to the requested target (the message says why, in one line)."""


@dataclass(frozen=True)
class CaseProof:
    """One round-trip case as checked by a consumer."""

    id: str
    status: str  # pass | fail | unsupported
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class Proof:
    """What running the consumer on the round-trip cases showed."""

    target: str
    cases: tuple[CaseProof, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        checked = [c for c in self.cases if c.status != UNSUPPORTED]
        return bool(checked) and all(c.status == PASS for c in checked)

    def summary(self) -> str:
        checked = [c for c in self.cases if c.status != UNSUPPORTED]
        ok = sum(c.status == PASS for c in checked)
        return f"{self.target}: {ok}/{len(checked)} round-trip cases accepted by the consumer"

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "passed": self.passed,
            "summary": self.summary(),
            "notes": list(self.notes),
            "cases": [c.to_dict() for c in self.cases],
        }


class Unsupported(ExportError):
    """The target format cannot express this spec (e.g. a response_template cannot read Python calls)."""


def first_line(exc: BaseException) -> str:
    """The first line of a consumer's exception: transformers and xgrammar errors can run to many lines."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else ""
