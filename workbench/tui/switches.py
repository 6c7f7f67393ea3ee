"""Template switches: the variables other than ``enable_thinking`` that change a template's format
(``PromptSpec.switches``), and the Kwargs tab's ``key=value`` pairs that set them.  Pure and light: the
Template screen, drawn first, reads these without loading the analysis or validation packages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from workbench.runtime.spec import FormatSpec
from workbench.tui.workspace import Workspace

__all__ = ["Switch", "SwitchValue", "extra_pairs", "switches_of", "validation_kwargs", "with_pair"]

#: Kwargs-tab values that are not template switches: the generation prompt is the case's business, and
#: validation renders every case with thinking enabled (its cases carry reasoning).
_NOT_SWITCHES = ("add_generation_prompt", "enable_thinking")


def extra_pairs(extra: str) -> dict[str, Any]:
    """The well-formed ``key=value`` pairs of the Kwargs tab's extra field (values JSON, else text); a
    malformed pair is skipped here (the preview names it)."""
    out: dict[str, Any] = {}
    for pair in extra.split():
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            continue
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def with_pair(extra: str, key: str, value: Any = None, *, unset: bool = False) -> str:
    """``extra`` with ``key`` set to ``value`` (JSON, compact), or removed when ``unset``; the other pairs
    keep their text and order."""
    kept = [p for p in extra.split() if p.partition("=")[0] != key]
    if not unset:
        kept.append(f"{key}={json.dumps(value, ensure_ascii=False, separators=(',', ':'))}")
    return " ".join(kept)


def validation_kwargs(ws: Workspace) -> dict[str, Any]:
    """The template switches the Kwargs tab sets (``reasoning_effort`` and the extra pairs), which the TUI's
    validation renders every case with: the TUI's ``--kw``."""
    out: dict[str, Any] = {}
    if ws.kwargs.reasoning_effort:
        out["reasoning_effort"] = ws.kwargs.reasoning_effort
    out.update(extra_pairs(ws.kwargs.extra))
    return {k: v for k, v in out.items() if k not in _NOT_SWITCHES}


@dataclass(frozen=True)
class SwitchValue:
    """One value of a template switch the analysis tried, and what it changes against the default render."""

    value: Any
    changes: tuple[str, ...]
    start: str = ""  # where the output starts with this value's prompt (``FormatSpec.output_start_stage``)

    @property
    def label(self) -> str:
        return json.dumps(self.value, ensure_ascii=False)

    @property
    def effect(self) -> str:
        return ", ".join(self.changes) or "as the default"


@dataclass(frozen=True)
class Switch:
    """A template variable (not ``enable_thinking``) that changes the format (``PromptSpec.switches``)."""

    name: str
    kind: str  # "choice" (compared with literals) or "flag" (tested for truth)
    values: tuple[SwitchValue, ...]


def switches_of(spec: FormatSpec | None) -> list[Switch]:
    """The switches a spec records, in the analysis' order (pure; empty without a spec)."""
    if spec is None:
        return []
    out: list[Switch] = []
    for name, info in spec.prompt.switches.items():
        values = tuple(
            SwitchValue(e["value"], tuple(e.get("changes", ())), str(e.get("start", "")))
            for e in info.get("effects", ())
        )
        out.append(Switch(name, str(info.get("kind", "")), values))
    return out
