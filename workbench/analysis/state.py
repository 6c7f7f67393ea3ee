"""The mutable notebook the phases fill in, turned into a frozen FormatSpec at the very end.

Phases run in order (prompt structure, reasoning, prompt facts, content, tools, arguments) and each reads
what the earlier ones found; keeping those intermediate facts in one plain object (rather than threading a
dozen return values through ``analyzer.py``) is what lets every phase stay a small, separately readable
module.  Every decision a phase takes is written next to the probe it came from (``note``), so the CLI and
the TUI can show *why* the spec says what it says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.analysis.dedicated import Dedicated
from workbench.analysis.probes import PROBES_BY_ID
from workbench.analysis.renders import ProbeRenderer, ProbeResult


@dataclass
class Findings:
    """What the analysis knows so far about one template."""

    renderer: ProbeRenderer
    probes: dict[str, ProbeResult] = field(default_factory=dict)
    reasoning: dict[str, Any] = field(default_factory=lambda: {"mode": "none", "start": "", "end": ""})
    content: dict[str, Any] = field(default_factory=lambda: {"mode": "plain", "start": "", "end": ""})
    tools: dict[str, Any] = field(default_factory=lambda: {"format": "none"})
    prompt: dict[str, Any] = field(default_factory=dict)
    end_markers: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Turn structure (prompt phase): everything is measured from the end of the last user message.
    user_end: str = ""
    gen: dict[str, str | None] = field(default_factory=dict)  # "default" | "on" | "off" -> generation prompt
    forced_generation_prompt: bool = False
    raw_header: str = ""
    role_header: str = ""
    reasoning_source: str = ""  # which probe the reasoning markers came from
    reasoning_shape: str = ""  # wrapped | in_block | delimiter
    applied_workarounds: list[str] = field(default_factory=list)
    # The dedicated detectors to try (the format families', in order) and the one that claimed the template.
    dedicated: tuple[Dedicated, ...] = ()
    claimed: Dedicated | None = None
    # The call layout found by the tools phase, in render coordinates (read by the arguments phase).
    call_text: str = ""
    name_at: int = -1
    args_span: tuple[int, int] = (-1, -1)

    def probe(self, probe_id: str) -> ProbeResult:
        """Run (once) and return the probe with this id; render failures are recorded on the result."""
        if probe_id not in self.probes:
            self.probes[probe_id] = self.renderer.run(PROBES_BY_ID[probe_id])
        return self.probes[probe_id]

    def note(self, probe_id: str, text: str) -> None:
        """Append a decision to the probe's outcome (creating the probe result if it has not run yet)."""
        result = self.probe(probe_id)
        result.outcome = f"{result.outcome}; {text}" if result.outcome else text

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)
