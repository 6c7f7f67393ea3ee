"""A hand-written Harmony spec (gpt-oss), written from the format's published tokens: one of the fixed points
of :mod:`workbench.testing.reference_specs`, which do not depend on the analyzer."""

from __future__ import annotations

from workbench.runtime.formats.harmony import markers as harmony
from workbench.runtime.spec import FormatSpec, PromptSpec, ReasoningSpec, ToolsSpec

HARMONY = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start=harmony.REASONING_START, end=harmony.REASONING_END),
    tools=ToolsSpec(format="harmony", parallel=False),
    prompt=PromptSpec(generation_prompt=harmony.START_ASSISTANT),
    eos_token=harmony.RETURN,
    end_markers=(harmony.RETURN, harmony.CALL),
)
