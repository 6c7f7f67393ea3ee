"""FormatSpec + tools -> xgrammar grammars, and the reasoning/trigger gate that decides when they apply.

See ARCHITECTURE.md for this stage's place in the pipeline and docs/generation.md for the design.
"""

from __future__ import annotations

from workbench.runtime.grammar.assembler import assemble, normalize_tool_choice
from workbench.runtime.grammar.build import build_grammar
from workbench.runtime.grammar.elements import GrammarError
from workbench.runtime.grammar.plan import GrammarPlan, ReasoningGate

__all__ = [
    "GrammarError",
    "GrammarPlan",
    "ReasoningGate",
    "assemble",
    "build_grammar",
    "normalize_tool_choice",
]
