"""What the inspector draws for one step, as plain rows and rich text (pure: no widgets, no engine).

The candidates table marks the *chosen* token (it is added as an extra row when it is not among the top
candidates), the allowed table lists the allowed tokens by renormalised probability, and the grammar pane
says where the matcher is and what it expects (``workbench.generation.why.GrammarPosition``), or what the step
recorded when no live grammar can answer (a replay, a step scrubbed back to).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text

from workbench.generation.step import Candidate, Step
from workbench.tui.palette import ALLOWED_STYLE, MASKED_STYLE, visible

CHOSEN_STYLE = "bold black on #e0af68"


@dataclass(frozen=True)
class Row:
    """One table row: its cells, and whether it is the chosen token."""

    cells: tuple[Text, ...]
    chosen: bool = False


def _fmt(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def candidate_rows(step: Step) -> list[Row]:
    """The top candidates before masking; the chosen one marked, and appended (rank ``»``) when it is not
    among them (a masked-away favourite pushed it out of the top k)."""
    rows = []
    found = False
    for rank, c in enumerate(step.candidates, 1):
        chosen = c.token_id == step.token_id
        found = found or chosen
        rows.append(_candidate_row(str(rank), c, chosen))
    if not found:
        c = step.chosen or Candidate(step.token_id, step.token_text, float("nan"), float("nan"), True)
        rows.append(_candidate_row("»", c, True, known=step.chosen is not None))
    return rows


def _candidate_row(rank: str, c: Candidate, chosen: bool, *, known: bool = True) -> Row:
    style = CHOSEN_STYLE if chosen else ("" if c.allowed else MASKED_STYLE)
    mark = "chosen" if chosen else ("allowed" if c.allowed else "masked")
    mark_style = CHOSEN_STYLE if chosen else (ALLOWED_STYLE if c.allowed else MASKED_STYLE)
    return Row(
        (
            Text(rank, style=style),
            Text(repr(c.text), style=style),
            Text(mark, style=mark_style),
            Text(str(c.token_id), style=style),
            Text(_fmt(c.logit if known else None, 2), style=style),
            Text(_fmt(c.prob if known else None, 3), style=style),
        ),
        chosen,
    )


def allowed_rows(step: Step) -> list[Row]:
    """The top allowed tokens by renormalised probability (``Step.allowed_top``); for a step recorded
    without that list, the allowed ones among the top candidates (probabilities before renormalising)."""
    source = step.allowed_top or tuple(c for c in step.candidates if c.allowed)
    rows = []
    for rank, c in enumerate(source, 1):
        chosen = c.token_id == step.token_id
        style = CHOSEN_STYLE if chosen else ""
        rows.append(
            Row(
                (
                    Text(str(rank), style=style),
                    Text(repr(c.text), style=style),
                    Text(str(c.token_id), style=style),
                    Text(f"{c.prob:.3f}", style=style),
                ),
                chosen,
            )
        )
    return rows


def allowed_title(step: Step) -> str:
    """The allowed table's title: how many tokens were allowed, and what the list is ranked by."""
    ranked = "renormalised p" if step.allowed_top else "p before masking (recorded without the list)"
    if not step.constrained:
        return f"allowed: all {step.vocab_size:,} (no mask) · top by p"
    return f"allowed: {step.allowed_count:,} of {step.vocab_size:,} · top by {ranked}"


def grammar_text(
    step: Step | None,
    *,
    live: Any = None,
    answer: str = "",
    answer_ok: bool = True,
    expanded: bool = False,
    note: str = "",
    label: str = "next token",
) -> Text:
    """The grammar pane: where the matcher is and what it expects next.

    ``live`` is a ``GrammarPosition`` for the position after ``step`` when the generator can answer (or, at a
    step scrubbed back to, the position of that step's own choice, ``label`` naming it); else
    the step's own record is shown (its phase, the jump-forward string and allowed count before its token).
    ``expanded`` adds the grammar's EBNF.
    """
    out = Text()
    if live is not None:
        grammar = f"{live.grammar} grammar" if live.grammar else "no grammar (free)"
        out.append(f"{label}: ", style="dim")
        out.append(f"{live.phase} phase · {grammar}\n", style="bold")
        if live.grammar:
            out.append("so far in it: ", style="dim")
            out.append(visible(live.inside[-160:]) or "—", style="#7fd1c7")
            out.append("\n")
        out.append("expects: ", style="dim")
        out.append(live.expects() + "\n")
    elif step is not None:
        out.append("recorded at this step: ", style="dim")
        out.append(f"{step.phase or step.region} · {'mask applied' if step.constrained else 'no mask'}")
        out.append(f" · {step.allowed_count:,} of {step.vocab_size:,} allowed · jump-forward ")
        out.append((visible(step.jump_forward) or "—") + "\n")
    if note:
        out.append(note + "\n", style="dim italic")
    if answer:
        out.append("answer: ", style="dim")
        out.append(answer + "\n", style=ALLOWED_STYLE if answer_ok else "#ffb4a2")
    if expanded:
        ebnf = getattr(live, "ebnf", "") if live is not None else ""
        out.append("\n")
        out.append(ebnf or "(no grammar engaged at this position: nothing to show)", style="#c0c6d0")
    out.rstrip()
    return out


#: The grammar pane's border subtitle: its keys, always visible however long the answer.
GRAMMAR_KEYS = "w why · t test · j jump · g EBNF"
