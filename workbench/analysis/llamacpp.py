"""Our analysis against llama.cpp's auto-parser (``shared/conformance/llamacpp-analysis/summary.json``).

llama.cpp's result is a reference, not ground truth.  For every template and field (reasoning mode, tool
format) its value is taken as it is, except where this table says otherwise, with the evidence:

* ``dedicated`` -- llama.cpp does not use the auto-parser's result for this template in production
  (``snapshot_dispatch``) but a dedicated handler; we compare with what that handler parses, as shown by
  the parse cases of ``shared/conformance/llamacpp/``.
* ``known_wrong`` -- listed as a mistake in the README next to ``summary.json``.
* ``disputed`` -- we disagree and say why; each one is pinned by a test on the real template
  (tests/test_analysis_vs_llamacpp.py).

Entries marked ``known_wrong`` or ``disputed`` leave the agreement rate's denominator ("counting only the
templates where llama.cpp is right"); ``dedicated`` entries stay in it, compared with the handler's format.
docs/analysis-vs-llamacpp.md is the prose version of this table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.runtime.spec import FormatSpec


FIELDS = ("reasoning", "tools")


@dataclass(frozen=True)
class Correction:
    """What llama.cpp's auto-parser result should be read as, for one template and field."""

    template: str
    field: str  # "reasoning" | "tools"
    kind: str  # "dedicated" | "known_wrong" | "disputed"
    value: str  # our vocabulary: the value we hold to be right
    reason: str


CORRECTIONS: tuple[Correction, ...] = (
    # --- llama.cpp routes these to dedicated handlers; compare with what the handler parses.
    Correction(
        "openai-gpt-oss-120b",
        "tools",
        "dedicated",
        "layout",
        "snapshot_dispatch 'GPT-OSS': a Harmony handler parses to=functions.NAME recipients; we learn the "
        "same messages as a headed layout (cross-checked against our Harmony parser on every Harmony case)",
    ),
    Correction(
        "openai-gpt-oss-120b",
        "reasoning",
        "dedicated",
        "tag_based",
        "the Harmony handler returns the analysis channel as reasoning (parse cases #03-#14); the "
        "auto-parser's NONE is listed as a mistake in the README",
    ),
    Correction(
        "LFM2-8B-A1B",
        "tools",
        "dedicated",
        "pythonic",
        "snapshot_dispatch 'LFM2': <|tool_call_start|>[name(arg=value)]<|tool_call_end|> "
        "(parse cases #02-#09); the README lists the auto-parser's NONE as a mistake",
    ),
    Correction(
        "LFM2-8B-A1B",
        "reasoning",
        "dedicated",
        "tag_based",
        "the LFM2 handler extracts <think>...</think> (parse cases #04 and #06)",
    ),
    Correction(
        "meetkai-functionary-medium-v3.2",
        "tools",
        "dedicated",
        "layout",
        "snapshot_dispatch 'Functionary v3.2': >>>NAME\\n{json} recipients (parse cases #01-#02); we learn "
        "them as a headed layout whose opener '>>>' the prompt wrote",
    ),
    Correction(
        "mistralai-Ministral-3-14B-Reasoning-2512",
        "reasoning",
        "dedicated",
        "tag_based",
        "the Ministral 3 handler extracts [THINK]...[/THINK] (parse cases #03 and #05)",
    ),
    # --- the README's list of llama.cpp mistakes.
    Correction(
        "Apertus-8B-Instruct",
        "reasoning",
        "known_wrong",
        "tag_based",
        "README: the markers 'en'/'dis' come from the words enabled/disabled in the system prompt; "
        "Apertus writes thoughts between <|inner_prefix|> and <|inner_suffix|>",
    ),
    Correction(
        "Apriel-1.6-15b-Thinker-fixed",
        "reasoning",
        "known_wrong",
        "delimiter",
        "README: the reasoning start is a role token (<|begin_assistant|>); reasoning simply ends at "
        "'[BEGIN FINAL RESPONSE]' (parse cases #02-#03, family 'DELIMITER')",
    ),
    # --- where we hold llama.cpp's label to be wrong (each pinned by a test on the template).
    Correction(
        "deepseek-ai-DeepSeek-V3.1",
        "reasoning",
        "disputed",
        "forced_open",
        "with enable_thinking the prompt ends with '<｜Assistant｜><think>' (the output starts inside "
        "reasoning, parse cases #02-#04); disabled, it adds only '</think>', not the two tags that "
        "llama.cpp's own definition of FORCED_CLOSED requires",
    ),
    Correction(
        "StepFun3.5-Flash",
        "reasoning",
        "disputed",
        "forced_open",
        "every generation prompt ends with '<think>\\n' and there is no switch to close it; the "
        "parse cases (#01-#11) start inside reasoning ('...</think>'), as FORCED_OPEN describes",
    ),
    Correction(
        "MiniMax-M2",
        "reasoning",
        "disputed",
        "forced_open",
        "every generation prompt ends with '<think>\\n' and there is no switch to close it, so the "
        "output starts inside reasoning; llama.cpp's FORCED_CLOSED needs a disabled form with both tags",
    ),
    Correction(
        "ibm-granite-granite-3.3-2B-Instruct",
        "tools",
        "disputed",
        "json_native",
        "the template drops calls from the history, but its system prompt asks for '<|tool_call|> "
        "followed by a JSON list of tools used'; llama.cpp reports no tool format at all",
    ),
)


@dataclass(frozen=True)
class Row:
    """One template and field: llama.cpp's value, the value compared against, ours, and the verdict."""

    template: str
    field: str
    llamacpp: str
    reference: str
    ours: str
    status: str  # agree | disagree | excluded
    correction: Correction | None


@dataclass(frozen=True)
class Comparison:
    rows: tuple[Row, ...]

    @property
    def counted(self) -> list[Row]:
        return [r for r in self.rows if r.status != "excluded"]

    @property
    def agreement(self) -> float:
        """Share of counted (template, field) pairs where we agree, in percent."""
        counted = self.counted
        return 100.0 * sum(r.status == "agree" for r in counted) / len(counted) if counted else 0.0

    @property
    def template_agreement(self) -> float:
        """Share of templates (with at least one counted field) where every counted field agrees, in %."""
        by_template: dict[str, list[Row]] = {}
        for r in self.counted:
            by_template.setdefault(r.template, []).append(r)
        ok = sum(all(r.status == "agree" for r in rows) for rows in by_template.values())
        return 100.0 * ok / len(by_template) if by_template else 0.0

    def differences(self) -> list[Row]:
        return [r for r in self.rows if r.ours != r.llamacpp]


def our_values(spec: FormatSpec) -> dict[str, str]:
    """A spec in the comparison's vocabulary: the reasoning mode, and the tool format, ``layout`` for a
    turn of headed messages (llama.cpp's dedicated handlers parse those formats)."""
    tools = "layout" if spec.layout.headed and spec.tools.format != "none" else spec.tools.format
    return {"reasoning": spec.reasoning.mode, "tools": tools}


def load_summary(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def llamacpp_values(summary: dict[str, Any]) -> dict[str, dict[str, str]]:
    """``{template: {"reasoning": mode, "tools": format}}`` in our lower-case vocabulary (pure)."""
    out = {}
    for name, entry in summary["templates"].items():
        if entry.get("set", "shared") != "shared":
            continue
        out[name] = {
            "reasoning": str(entry["reasoning_mode"]).lower(),
            "tools": str(entry["tool_format"]).lower(),
        }
    return out


def compare(summary: dict[str, Any], ours: dict[str, dict[str, str]]) -> Comparison:
    """Compare our ``{template: {"reasoning": .., "tools": ..}}`` with llama.cpp's summary (pure)."""
    corrections = {(c.template, c.field): c for c in CORRECTIONS}
    rows = []
    for name, theirs in sorted(llamacpp_values(summary).items()):
        mine = ours.get(name)
        if mine is None:
            continue
        for field in FIELDS:
            c = corrections.get((name, field))
            reference = c.value if c is not None else theirs[field]
            if c is not None and c.kind in ("known_wrong", "disputed"):
                status = "excluded"
            else:
                status = "agree" if mine[field] == reference else "disagree"
            rows.append(Row(name, field, theirs[field], reference, mine[field], status, c))
    return Comparison(tuple(rows))
