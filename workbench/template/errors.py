"""The errors a template can cause, one subclass per limit so callers (and tests) can tell them apart.

They live in their own module because both sides of the render worker raise them: the worker process
builds them while rendering, sends their fields back as JSON, and the caller's process raises them again
(see :mod:`workbench.template.worker`).  ``workbench.template.render`` re-exports all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from workbench.runtime.errors import WorkbenchError


class TemplateError(WorkbenchError):
    """A template failed to compile or render.

    ``line`` is the template line when known, ``kind`` one of syntax | raised | undefined | security | limit
    | timeout | recursion | usage | cancelled | render, ``detail`` the message without the line suffix.
    ``str()`` is always a single line, because the CLI prints it as its one line on stderr.
    """

    def __init__(self, message: str, *, line: int | None = None, kind: str = "render") -> None:
        self.line = line
        self.kind = kind
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        flat = " ".join(str(self.detail).split())
        return f"{flat} (template line {self.line})" if self.line is not None else flat

    def with_line(self, line: int | None) -> TemplateError:
        """Fill in the line once the traceback has been walked (deadline errors are raised deep inside)."""
        if self.line is None and line is not None:
            self.line = line
            self.args = (self._format(),)
        return self

    def to_wire(self) -> dict[str, Any]:
        """The fields the render worker sends back (JSON, never pickle: the worker runs untrusted code)."""
        return {"cls": type(self).__name__, "detail": self.detail, "line": self.line, "kind": self.kind}


class RenderTimeout(TemplateError):
    """The render ran past its time limit (the template probably loops forever)."""


#: The :class:`RenderTimeout` of a batched render not made because the batch's earlier renders ran out of
#: time as often as the caller allowed (``render_many(stop_after_timeouts=)``): what one render at a time,
#: stopping there, would have left unrendered.
SKIPPED_AFTER_TIMEOUTS = (
    "not rendered: the template had already run out of time on earlier renders of this batch"
)


def until_timeouts(
    render_one: Callable[[Any], str | TemplateError], items: Iterable[Any], stop: int | None
) -> list[str | TemplateError]:
    """``render_one`` of each item (a text, or the :class:`TemplateError` it failed with), except that once
    ``stop`` of them have run out of time the rest are not rendered: each gets a :class:`RenderTimeout` of
    :data:`SKIPPED_AFTER_TIMEOUTS` (``stop=None``: every item is rendered).  The one rule of a batch that
    stops where one render at a time would, in-process, in the worker and in the worker's retries."""
    out: list[str | TemplateError] = []
    timeouts = 0
    for item in items:
        if stop is not None and timeouts >= stop:
            out.append(RenderTimeout(SKIPPED_AFTER_TIMEOUTS, kind="timeout"))
            continue
        outcome = render_one(item)
        timeouts += isinstance(outcome, RenderTimeout)
        out.append(outcome)
    return out


class CompileTimeout(RenderTimeout):
    """Compiling the template took longer than its time limit (a compile bomb: thousands of macros)."""


class RenderMemoryLimit(TemplateError):
    """The render needed more memory than the render worker is allowed (``RLIMIT_AS``)."""


class RenderLimitExceeded(TemplateError):
    """An operation was refused before it ran because its result would be too large (a size guard)."""


class RenderOutputTooLarge(RenderLimitExceeded):
    """The render's output passed the cap it ran under; the worker refused to send it back."""


class TemplateTooLarge(TemplateError):
    """The template source is larger than ``MAX_SOURCE_BYTES``; it is refused before compiling."""


class RenderCancelled(TemplateError):
    """The caller cancelled the render (``workbench.template.render.cancel_renders``)."""


class TimeLimitError(TemplateError):
    """A time limit that is not a finite positive number of seconds (``inf`` and ``nan`` included)."""


_BY_NAME: dict[str, type[TemplateError]] = {
    cls.__name__: cls
    for cls in (
        TemplateError,
        RenderTimeout,
        CompileTimeout,
        RenderMemoryLimit,
        RenderLimitExceeded,
        RenderOutputTooLarge,
        TemplateTooLarge,
        RenderCancelled,
        TimeLimitError,
    )
}


def from_wire(fields: dict[str, Any]) -> TemplateError:
    """Rebuild an error sent by the worker; unknown class names fall back to :class:`TemplateError`."""
    cls = _BY_NAME.get(str(fields.get("cls")), TemplateError)
    line = fields.get("line")
    return cls(
        str(fields.get("detail", "render failed")),
        line=line if isinstance(line, int) else None,
        kind=str(fields.get("kind", "render")),
    )
