"""``Step``: the record of one decode step, shared by the generator, sessions, the CLI and the TUI.

A step never holds the raw vocabulary mask (150k entries): only counts, the top candidates and a coarse
``mask_strip`` (allowed fraction per vocabulary bucket) that the inspector draws as a heat strip.  That keeps
a 2,000-step session small and lets the UI receive steps at a high rate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.events import Event


@dataclass(frozen=True)
class Candidate:
    """One of the top-k tokens before masking."""

    token_id: int
    text: str
    logit: float
    prob: float
    allowed: bool


@dataclass(frozen=True)
class Step:
    index: int
    token_id: int
    token_text: str
    allowed_count: int
    vocab_size: int
    candidates: tuple[Candidate, ...] = ()
    forced: bool = False
    constrained: bool = True  # was a grammar mask applied at this step
    region: str = "free"  # "free" (no mask: thinking / before the trigger) or "constrained"
    jump_forward: str = ""
    mask_strip: tuple[float, ...] = ()
    events: tuple[Event, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)  # forward, mask, sample, record, parse
    finished: bool = False
    note: str = ""
    # Which part of the answer the step was in: "lead" (reasoning may still open), "reasoning", "text" (free
    # answer text before a tool call), "tool" (inside the tool section) or "answer" (a forced grammar).
    phase: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["candidates"] = [asdict(c) for c in self.candidates]
        d["events"] = [asdict(e) for e in self.events]
        d["mask_strip"] = [round(x, 4) for x in self.mask_strip]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        data = dict(d)
        data["candidates"] = tuple(Candidate(**c) for c in data.get("candidates", ()))
        data["events"] = tuple(Event(**e) for e in data.get("events", ()))
        data["mask_strip"] = tuple(float(x) for x in data.get("mask_strip", ()))
        data["timings_ms"] = dict(data.get("timings_ms", {}))
        return cls(**data)
