"""RECIPIENT (Functionary v3.2): every message of the turn opens with ``>>>RECIPIENT\\n``.

``>>>all\\nSome text`` is text for the user; ``>>>get_weather\\n{"city": "Paris"}`` is a call whose body is
the JSON arguments; messages follow each other with nothing in between (the template writes
``>>>all\\n{content}>>>NAME\\n{args}>>>NAME\\n{args}``).

The generation prompt already ends with the first ``>>>`` (``spec.prompt.output_prefix``), so the model's
first token is a recipient name.  That changes two things compared with the other formats:

- the first header of a grammar has no ``>>>``: the model must not write a second one;
- under ``tool_choice=auto`` the trigger has already been written, so waiting for it would leave the first
  (and usually only) call unconstrained; the grammar engages from the first token instead, and free text is
  what follows ``all\\n``.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import (
    Element,
    GrammarError,
    const,
    one_of,
    optional,
    seq,
)
from workbench.runtime.grammar.tool_grammar import ToolGrammar

# The recipient that addresses the user: its body is text, not a call (the parser reads it the same way).
CONTENT_RECIPIENT = "all"
DEFAULT_OPENER = ">>>"


class RecipientGrammar(ToolGrammar):
    name = "recipient"

    # ----------------------------------------------------------------------------- the markers
    @property
    def opener(self) -> str:
        """What opens every message (``>>>``)."""
        return self.t.name_prefix or self.t.call_start or DEFAULT_OPENER

    @property
    def header_end(self) -> str:
        return self.t.name_suffix or "\n"

    @property
    def opened(self) -> bool:
        """The generation prompt already wrote the opener of the first message."""
        return bool(self.output_prefix) and self.output_prefix.endswith(self.opener)

    @property
    def first_opener(self) -> str:
        return "" if self.opened else self.opener

    @property
    def trigger(self) -> str:
        return self.opener.strip()

    # ----------------------------------------------------------------------------- calls
    def call_body(self, tool: Tool) -> Element:
        """``NAME\\n{json}``: one message to ``tool`` without its opener."""
        args = self.json_value(tool.parameters, f"tool {tool.name!r}")
        return seq(const(tool.name + self.header_end), args)

    def call(self, tool: Tool) -> Element:
        return seq(const(self.opener), self.call_body(tool))

    def callable_tools(self, tools: Sequence[Tool]) -> list[Tool]:
        """The tools a message can address: ``all`` is the user, so a tool of that name cannot be called."""
        kept = [t for t in tools if t.name != CONTENT_RECIPIENT]
        if len(kept) < len(tools):
            self.notes.append(
                f"recipient: a tool named {CONTENT_RECIPIENT!r} cannot be called ({CONTENT_RECIPIENT!r} "
                "addresses the user); it is left out of the grammar"
            )
        if not kept:
            raise GrammarError(
                f"no tool can be called in the recipient format: {CONTENT_RECIPIENT!r} addresses the user"
            )
        return kept

    def calls(self, tools: Sequence[Tool], *, parallel: bool, first_opener: str) -> Element:
        """One call, or (``parallel``) up to MAX_PARALLEL_CALLS messages back to back."""
        return self.message_calls(self.callable_tools(tools), parallel=parallel, first_opener=first_opener)

    def section(self, tools: Sequence[Tool], *, parallel: bool) -> Element:
        return self.calls(tools, parallel=parallel, first_opener=self.first_opener)

    # ----------------------------------------------------------------------------- the answer around calls
    def answer_lead(self, *, after_reasoning: bool) -> Element:
        # Nothing may precede the recipient name the prompt opened; after a reasoning block the prompt's
        # opener lies behind, so the next message must be opened again.
        return const(self.opener) if after_reasoning and self.opened else const("")

    def plain_answer(self, tools: Sequence[Tool] = ()) -> Element:
        """``all\\n`` and text that never opens another message."""
        head = const(self.first_opener + CONTENT_RECIPIENT + self.header_end)
        return seq(head, super().plain_answer(tools))

    def free_answer(self, tools: Sequence[Tool], *, parallel: bool) -> Element | None:
        """Text for the user, optionally followed by calls, or calls straight away."""
        after_text = self.calls(tools, parallel=parallel, first_opener=self.opener)
        return one_of(
            seq(self.plain_answer(tools), optional(after_text)), self.section(tools, parallel=parallel)
        )

    def markers(self) -> tuple[str, ...]:
        return (self.opener.strip(),) if self.opener.strip() else ()
