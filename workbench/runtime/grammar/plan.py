"""``GrammarPlan``: what the constrained decoder enforces, when, and why, as inspectable text.

A plan is more than one grammar, because a reasoning model is not constrained everywhere (SGLang's
reasoner-grammar wrapper is the model): nothing is masked while the model thinks, and under
``tool_choice=auto`` nothing is masked before the tool-call trigger either.  So a plan holds up to three
structural tags, each used in one *phase* of the answer, and the markers that move between phases:

- ``lead``: while the model may still open its reasoning (reasoning on, the prompt did not open it):
  the reasoning start marker *or* the forced answer.  Unused under ``auto`` (free text needs no grammar).
- ``answer``: enforced from the start of the answer (after reasoning) under ``required``, a named
  function, or ``none`` (free text that never announces a tool call); under ``auto`` too when the
  generation prompt already wrote the trigger (Functionary v3.2's ``>>>``): nothing is left to wait for.
- ``section``: under ``auto``, the tool section, engaged when the ``trigger`` text appears.

``text`` is the main grammar (``answer``, else ``section`` under ``auto``) as xgrammar structural-tag JSON,
the form any xgrammar user can paste; :meth:`GrammarPlan.ebnf` shows xgrammar's own EBNF for it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

TOOL_CHOICES = ("auto", "required", "none")


@dataclass(frozen=True)
class ReasoningGate:
    """Where constraint stops and resumes around reasoning.

    ``starts_inside``: the prompt already opened reasoning (e.g. it ends with ``<think>\\n``), so the first
    generated token is reasoning.  Otherwise ``start`` may still be written by the model itself.
    Markers are kept without surrounding whitespace; the whitespace is left to the answer's lead.
    """

    start: str
    end: str
    starts_inside: bool


@dataclass(frozen=True)
class GrammarPlan:
    kind: str  # "structural_tag" ("none": nothing to enforce, e.g. auto without tools)
    text: str
    tool_choice: str
    tools: tuple[str, ...]
    parallel: bool
    any_whitespace: bool
    trigger: str = ""
    answer: str | None = None
    section: str | None = None
    lead: str | None = None
    reasoning: ReasoningGate | None = None
    markers: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: Why the answer is held from its first token when the format says so itself ("": the prompt wrote
    #: the trigger, or it is not held): a reply written as one JSON object.
    held: str = ""

    @property
    def forced(self) -> bool:
        """True when a tool call must be made (``required`` or a named function)."""
        return self.tool_choice not in ("auto", "none")

    def grammars(self) -> dict[str, str]:
        """Every structural tag of the plan by phase name (``lead``, ``answer``, ``section``)."""
        out = {"lead": self.lead, "answer": self.answer, "section": self.section}
        return {k: v for k, v in out.items() if v is not None}

    def ebnf(self, which: str | None = None) -> str:
        """xgrammar's EBNF for one of the plan's grammars (default: the main one).  Pure: no state."""
        import xgrammar as xgr

        text = self.text if which is None else self.grammars().get(which)
        if not text:
            return ""
        return str(xgr.Grammar.from_structural_tag(text))

    def describe(self) -> str:
        """A few lines a person reads first: which phases exist and which markers switch between them."""
        tools = ", ".join(self.tools) or "(none)"
        lines = [f"tool_choice={self.tool_choice} tools={tools} parallel={self.parallel}"]
        if self.reasoning:
            where = (
                "inside (the prompt opened it)"
                if self.reasoning.starts_inside
                else "before it (model may open)"
            )
            start, end = self.reasoning.start, self.reasoning.end
            lines.append(f"reasoning: unconstrained between {start!r} and {end!r}; starts {where}")
        if self.tool_choice == "auto":
            if self.answer:
                why = self.held or f"the prompt already wrote {self.trigger!r}"
                lines.append(
                    f"answer: the grammar from the first token ({why}): "
                    "free text where the format allows it, calls held to the tools' schemas"
                )
            elif self.section:
                lines.append(f"answer: free text until {self.trigger!r}, then the tool section grammar")
            else:
                lines.append("answer: free text (no tools)")
        elif self.tool_choice == "none" and self.held:
            lines.append(f"answer: the grammar from the first token ({self.held}), without calls")
        elif self.tool_choice == "none":
            lines.append(
                f"answer: free text that never writes {self.trigger!r}"
                if self.trigger
                else "answer: free text"
            )
        else:
            lines.append("answer: the tool section grammar from the first token")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("text", "answer", "section", "lead"):
            if d[key]:
                d[key] = json.loads(d[key])
        return d
