"""FormatSpec + tools -> xgrammar grammars, and the reasoning/trigger gate that decides when they apply.

See ARCHITECTURE.md for this stage's place in the pipeline and docs/generation.md for the design.
"""

from __future__ import annotations

from workbench.grammar.build import build_grammar, normalize_tool_choice
from workbench.grammar.elements import GrammarError
from workbench.grammar.plan import GrammarPlan, ReasoningGate

__all__ = ["GrammarError", "GrammarPlan", "ReasoningGate", "build_grammar", "normalize_tool_choice"]
