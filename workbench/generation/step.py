"""``Step``: the record of one decode step, shared by the generator, sessions, the CLI and the TUI.

A step never holds the raw vocabulary mask (150k entries): only counts, the top candidates and a coarse
``mask_strip`` (allowed fraction per vocabulary bucket) that the inspector draws as a heat strip.  That keeps
a 2,000-step session small and lets the UI receive steps at a high rate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.runtime.events import Event


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
    # The text this step fed the parser, when known (``None``: not recorded, read ``token_text``).  It differs
    # from ``token_text`` when a character is split across tokens (the first token feeds "" and the second
    # the whole character, while each token's own text shows a replacement character) and for a stop
    # token, which feeds nothing.  Replaying a session must feed exactly this, or the message changes.
    text: str | None = None
    # The chosen token with its logit and probability *before* masking, so the inspector can show it even
    # when it is not among ``candidates`` (a masked-away favourite pushes it out of the top k).
    chosen: Candidate | None = None
    # The top allowed tokens by *renormalised* probability (the distribution sampling drew from: softmax over
    # the allowed tokens only).  Without a mask it is the top of ``candidates``.
    allowed_top: tuple[Candidate, ...] = ()

    @property
    def fed_text(self) -> str:
        """The text the parser received at this step (``text`` when recorded, else ``token_text``)."""
        return self.token_text if self.text is None else self.text

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data; ``text``, ``chosen`` and ``allowed_top`` are left out while unknown/empty (the
        shape older readers know)."""
        d = asdict(self)
        d["candidates"] = [asdict(c) for c in self.candidates]
        d["allowed_top"] = [asdict(c) for c in self.allowed_top]
        d["events"] = [asdict(e) for e in self.events]
        d["mask_strip"] = [round(x, 4) for x in self.mask_strip]
        if self.text is None:
            del d["text"]
        if self.chosen is None:  # older records: keep their shape, so saved sessions load and save unchanged
            del d["chosen"]
        if not self.allowed_top:
            del d["allowed_top"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        """Inverse of :meth:`to_dict`; dicts written before ``text`` existed load with ``text=None``."""
        data = dict(d)
        data["candidates"] = tuple(Candidate(**c) for c in data.get("candidates", ()))
        data["allowed_top"] = tuple(Candidate(**c) for c in data.get("allowed_top", ()))
        chosen = data.get("chosen")
        data["chosen"] = Candidate(**chosen) if isinstance(chosen, dict) else None
        data["events"] = tuple(Event(**e) for e in data.get("events", ()))
        data["mask_strip"] = tuple(float(x) for x in data.get("mask_strip", ()))
        data["timings_ms"] = dict(data.get("timings_ms", {}))
        return cls(**data)
