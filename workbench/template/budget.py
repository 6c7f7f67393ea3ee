"""One deadline and one output cap for everything a template drives in one command.

The time limit bounds each render, but an analysis renders a template some 60-100 times (its probes, the
switch values, the self-check's round trips), and validation, ``parse --template`` and ``export`` add theirs:
a template that takes just under the limit on every render (a chain of 6,000 comparisons, 2,000 nested
elements) used to keep ``analyze`` busy for minutes, and renders that each stayed under the reply cap (20 MB
each) piled up in the caller's memory.  A :class:`RenderBudget` is the running total of one command:

* **time**: the renders together may take ``TOTAL_FACTOR`` x the time limit (20 s for the default 2 s; the
  slowest real template here, analysed and validated on this loaded machine, spent 2.1 s rendering).  Each
  render runs under what is left when that is less than its own limit; worker start-ups are not counted.
* **output**: the renders together may return at most ``MAX_TOTAL_OUTPUT`` characters (the largest real
  analysis plus validation returns ~250,000); each render is refused in the worker once its output passes
  what is left, so an oversized text is never sent back.

Once spent, every later render raises :class:`BudgetExhausted` at once (no work), so a caller that catches
render errors to carry on (the analysis' phases do) finishes quickly; :func:`raise_if_exhausted` at the end
of the analysis or validation turns the budget's state into its one-line error instead of a partial result.

A budget is active for a block (``with budget:``) in the current context (a ``ContextVar``: a TUI worker
thread has its own); :func:`workbench.template.render.render` and ``render_many`` consult it.
"""

from __future__ import annotations

import contextvars
from types import TracebackType

from workbench.template.errors import TemplateError
from workbench.template.limits import DEFAULT_TIME_LIMIT, check_time_limit

#: All the renders of one command together may take this many times the per-render time limit.
TOTAL_FACTOR = 10
#: Characters all the renders of one command may return together (and so the largest single render there).
MAX_TOTAL_OUTPUT = 32 << 20


class BudgetExhausted(TemplateError):
    """The renders of one command used up its time or output budget (``kind`` timeout or limit)."""


_current: contextvars.ContextVar[RenderBudget | None] = contextvars.ContextVar("render_budget", default=None)


def current_budget() -> RenderBudget | None:
    """The budget active in this context, if any."""
    return _current.get()


class RenderBudget:
    """The running totals of one command's renders; a context manager that makes itself current.

    Not thread-safe: one command's renders run on one thread.  ``what`` names the work in errors
    ("the analysis", "validation").
    """

    def __init__(
        self,
        time_limit: float = DEFAULT_TIME_LIMIT,
        *,
        total_seconds: float | None = None,
        max_output: int = MAX_TOTAL_OUTPUT,
        what: str = "this command",
    ) -> None:
        self.time_limit = check_time_limit(time_limit)
        self.total_seconds = (
            check_time_limit(total_seconds) if total_seconds is not None else self.time_limit * TOTAL_FACTOR
        )
        self.max_output = max_output
        self.what = what
        self.spent = 0.0  # seconds rendering (worker start-ups excluded)
        self.output = 0  # characters returned
        self.renders = 0
        self.exhausted: BudgetExhausted | None = None
        self._tokens: list[contextvars.Token[RenderBudget | None]] = []

    # ------------------------------------------------------------------------------------- activation
    def __enter__(self) -> RenderBudget:
        self._tokens.append(_current.set(self))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _current.reset(self._tokens.pop())

    # --------------------------------------------------------------------------------------- queries
    def limit_for(self, time_limit: float) -> float:
        """The time limit of the next render: its own, or what is left when that is less.  Raises
        :class:`BudgetExhausted` when nothing is left (or the budget was spent before)."""
        if self.exhausted is not None:
            raise self._again()
        left = self.total_seconds - self.spent
        if left <= 0:
            raise self._spend_time()
        return min(time_limit, left)

    def output_for(self, max_output: int) -> int:
        """The output cap of the next render: its own, or what is left of the budget when that is less."""
        if self.exhausted is not None:
            raise self._again()
        return min(max_output, self.max_output - self.output)

    def bound_by_time(self, time_limit: float) -> bool:
        """Whether a render with ``time_limit`` runs under the budget's rest rather than its own limit."""
        return self.total_seconds - self.spent < time_limit

    def bound_by_output(self, max_output: int) -> bool:
        return self.max_output - self.output < max_output

    # -------------------------------------------------------------------------------------- accounting
    def charge(self, seconds: float, characters: int = 0) -> None:
        """Count one render (or batch): its seconds and the characters it returned."""
        self.renders += 1
        self.spent += max(seconds, 0.0)
        self.output += characters

    def spend_time(self) -> BudgetExhausted:
        """The budget's time ran out (a render stopped at its rest): the error, remembered."""
        return self._spend_time()

    def spend_output(self) -> BudgetExhausted:
        """A render's output passed what was left: the error, remembered."""
        self.exhausted = BudgetExhausted(
            f"{self.what} stopped: the template's renders would return more than {self.max_output:,} "
            f"characters together (the output cap of one analysis, validation or prompt; real templates "
            "return well under 1,000,000)",
            kind="limit",
        )
        return self.exhausted

    def raise_if_exhausted(self) -> None:
        """Raise the budget's error when it ran out (at the end of an analysis or a validation, so that a
        result built from renders that were refused is never returned as if it were whole)."""
        if self.exhausted is not None:
            raise self._again()

    def _spend_time(self) -> BudgetExhausted:
        why = (
            f" ({TOTAL_FACTOR} x the time limit of {self.time_limit:g} s per render)"
            if self.total_seconds == self.time_limit * TOTAL_FACTOR
            else ""
        )
        self.exhausted = BudgetExhausted(
            f"{self.what} stopped: the template's renders took {self.total_seconds:g} s together{why}, "
            f"after {self.renders} renders",
            kind="timeout",
        )
        return self.exhausted

    def _again(self) -> BudgetExhausted:
        assert self.exhausted is not None
        return BudgetExhausted(self.exhausted.detail, kind=self.exhausted.kind)


def budget_for(time_limit: float, what: str) -> RenderBudget:
    """The budget to run under: the one already active (a command's), else a new one for ``what`` (an
    analysis or a validation called on its own).  Use as ``with budget_for(...) as budget:``."""
    active = current_budget()
    return active if active is not None else RenderBudget(time_limit, what=what)
