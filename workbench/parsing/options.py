"""Parse options and the parse result (the contract of docs/INTERFACES.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.chat import Message
from workbench.events import Diagnostic


@dataclass(frozen=True)
class ParseOptions:
    """How one model output is to be read.

    Attributes:
        enable_thinking: the request's thinking switch.  Off, a template-controlled reasoning block
            (forced-open / forced-closed modes, or any mode when the template has a thinking toggle) is not
            expected: reasoning tags stay in the content verbatim.
        thinking_opened: True when the prompt already opened a reasoning block, so the output starts inside
            it; None takes it from ``spec.prompt.thinking_opened`` / the reasoning mode.
        parallel_tool_calls: the request allowed several calls; more are still parsed, with a diagnostic.
        extract_reasoning: False is llama.cpp's ``reasoning_format: none``: reasoning text, tags included,
            stays in ``content`` verbatim.
        parse_tools: False leaves tool-call text in the content (a request without tools); a tool-call
            start still ends reasoning implicitly.
        exclusive_tool_calls: the DeepSeek RFC policy (§3.2.3, §3.2.5, §3.3): tool calls are parsed only
            before any non-whitespace content, and text after a call ends tool parsing for the turn.
        known_tools_only: a call to a function that is not among the request's tools is ignored (with an
            E-CALL-SCHEMA diagnostic), as SGLang does; False keeps it (vLLM).  Without tools any name goes.
    """

    enable_thinking: bool = True
    thinking_opened: bool | None = None
    parallel_tool_calls: bool = True
    extract_reasoning: bool = True
    parse_tools: bool = True
    exclusive_tool_calls: bool = False
    known_tools_only: bool = True


@dataclass(frozen=True)
class ParseResult:
    """The finished message and everything noticed on the way."""

    message: Message
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def to_contract(self) -> dict[str, Any]:
        """``{"content", "reasoning_content", "tool_calls": [{"id","name","arguments"}], "diagnostics"}``."""
        out = self.message.to_contract()
        out["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        return out
