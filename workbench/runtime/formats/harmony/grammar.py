"""Harmony (gpt-oss): calls are messages on the ``commentary`` channel addressed to ``functions.NAME``.

``<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>``

The markers are fixed by the Harmony format itself (the template cannot vary them): they come from
:mod:`workbench.runtime.formats.harmony.markers`.  A call ends the assistant's turn (``<|call|>``), so one
section holds exactly one call.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.runtime.chat import Tool
from workbench.runtime.formats.harmony.markers import (
    CALL,
    CHANNEL,
    CONSTRAIN,
    MESSAGE,
    REASONING_END,
    REASONING_START,
    RECIPIENT,
    START,
    START_ASSISTANT,
    call_header,
)
from workbench.runtime.grammar.elements import Element, const, one_of, optional, seq
from workbench.runtime.grammar.tool_grammar import ToolGrammar


class HarmonyGrammar(ToolGrammar):
    name = "harmony"
    implicit_reasoning = (REASONING_START, REASONING_END)

    def call_body(self, tool: Tool) -> Element:
        args = self.json_value(tool.parameters, f"tool {tool.name!r}")
        return seq(const(call_header(tool.name)), args, const(CALL))

    def call(self, tool: Tool) -> Element:
        return self.call_body(tool)

    def section(self, tools: Sequence[Tool], *, parallel: bool) -> Element:
        if parallel and len(tools) > 0:
            self.notes.append("harmony: a call ends the turn (<|call|>), so parallel calls are not generated")
        return one_of(*(self.call(tool) for tool in tools))

    @property
    def trigger(self) -> str:
        return CHANNEL + RECIPIENT

    def answer_lead(self, *, after_reasoning: bool) -> Element:
        # After the analysis message ends (<|end|>) the next message re-opens the assistant role; at the
        # start the generation prompt has already opened it.
        return optional(const(START_ASSISTANT)) if after_reasoning else const("")

    def markers(self) -> tuple[str, ...]:
        return (CHANNEL, MESSAGE, CALL, CONSTRAIN, START, REASONING_END)
