"""The grammar of a layout (spec v3): headed messages and a lead, around the tools spec's calls.

A :class:`LayoutGrammar` wraps the grammar of the tools spec's family (which says how one call's name and
arguments are written) and adds what the layout says about the turn:

* a ``lead`` the model writes first (history's ``Assistant:``) may open the answer;
* in a headed layout every call is a message of its own, ``opener + call header + arguments + end``;
  when the generation prompt wrote the first opener, the first message is written without it, and the
  answer is held from its first token (as the recipient format's is): an answer message (header, free
  text, optionally calls after it) or calls straight away.  Reasoning is the reasoning message, free up
  to its end (the plan's reasoning gate); after it, the next message opens again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import (
    BOUNDED_WHITESPACE,
    Element,
    any_text,
    const,
    one_of,
    optional,
    repeat,
    seq,
    tag,
)
from workbench.runtime.grammar.tool_grammar import MAX_PARALLEL_CALLS, ToolGrammar, WrappingGrammar
from workbench.runtime.spec import ToolsSpec, TurnLayout


class LayoutGrammar(WrappingGrammar):
    """See the module docstring; ``inner`` is the tools family's grammar (one call's body)."""

    name = "layout"

    def __init__(
        self, tools_spec: ToolsSpec, *, layout: TurnLayout, inner: type[ToolGrammar] | None, **options: Any
    ) -> None:
        super().__init__(tools_spec, inner=inner, **options)
        self.layout = layout

    # ----------------------------------------------------------------------------- the layout
    @property
    def headed(self) -> bool:
        return self.layout.headed

    @property
    def opener(self) -> str:
        return self.layout.opener

    @property
    def opened(self) -> bool:
        """The generation prompt already wrote the first message's opener."""
        core = self.opener.strip()
        return self.headed and bool(core) and self.output_prefix.strip().endswith(core)

    @property
    def first_opener(self) -> str:
        return "" if self.opened else self.opener

    @property
    def call_head(self) -> str:
        """A call message's header text before the call pattern's parts, after the opener."""
        start = self.t.call_start
        return start[len(self.opener) :] if self.headed and start.startswith(self.opener) else start

    def _content(self) -> tuple[str, str, str]:
        """(the answer message's header, its end when the turn ends, its end when a call follows)."""
        c = self.layout.message("content")
        if c is None:
            return "", "", ""
        last = c.ends[0] if c.ends else ""
        between = c.ends[1] if len(c.ends) > 1 else last
        return c.header, last, between

    # ----------------------------------------------------------------------------- calls
    def _need_inner(self) -> ToolGrammar:
        if self.inner is None:
            from workbench.runtime.grammar.elements import GrammarError

            raise GrammarError(f"no grammar for tool format {self.t.format!r}")
        return self.inner

    def call_body(self, tool: Tool) -> Element:
        inner = self._need_inner()
        if not self.headed:
            return inner.call_body(tool)
        return seq(const(self.call_head), inner.call_body(tool), const(self.t.call_end))

    def call(self, tool: Tool) -> Element:
        if not self.headed:
            return self._need_inner().call(tool)
        return seq(const(self.opener), self.call_body(tool))

    def calls(self, tools: Sequence[Tool], *, parallel: bool, first_opener: str) -> Element:
        return self.message_calls(tools, parallel=parallel, first_opener=first_opener)

    def section(self, tools: Sequence[Tool], *, parallel: bool) -> Element:
        if not self.headed:
            return self._need_inner().section(tools, parallel=parallel)
        return self.calls(tools, parallel=parallel, first_opener=self.first_opener)

    # ----------------------------------------------------------------------------- reading mode
    def _reading_answer(self, tools: Sequence[Tool]) -> Element:
        """Reading mode (the structural-tag and Lark exports): the turn as messages, each opened by the
        opener (optional: the prompt or an earlier message may have written it) and the header the template
        writes; every message but the last runs to one of its kind's ends, the last may run to the end of
        the output (the turn's end is cut off by the stop token)."""
        lay = self.layout
        # blanks between messages (``<call>\n<start>assistant``) are skipped by the parser
        opener = seq(BOUNDED_WHITESPACE, optional(const(lay.opener)))
        closed: list[Element] = []
        last: list[Element] = []
        for m in lay.messages:
            for end in dict.fromkeys(e for e in m.ends if e.strip()):
                closed.append(seq(opener, tag(m.header, any_text(), end)))
            last.append(seq(opener, const(m.header), any_text()))
        # a call message ends with the calls' separator when another message follows (role switches:
        # ``...}<end_turn><turn>action...``); after the last one it is the turn's end, which may be cut off
        core = self.t.call_separator.strip()
        after = optional(seq(BOUNDED_WHITESPACE, const(core))) if core else const("")
        calls = [seq(opener, self.call_body(t), after) for t in tools]
        answer = seq(repeat(one_of(*closed, *calls), 0, 2 * MAX_PARALLEL_CALLS), optional(one_of(*last)))
        return seq(optional(const(lay.lead)), answer) if lay.lead else answer

    @property
    def trigger(self) -> str:
        if not self.headed:
            return self._need_inner().trigger
        if self.opened:  # the prompt wrote the opener: a call announces itself by its own header, if any
            return self.call_head.strip() or self.opener.strip()
        return self.t.call_start.strip()

    # ----------------------------------------------------------------------------- the answer
    def answer_lead(self, *, after_reasoning: bool) -> Element:
        lead = self.layout.lead
        if self.headed:
            # After a reasoning message the prompt's opener lies behind: the next message opens again.
            base = const(self.opener) if after_reasoning and self.opened else const("")
        else:
            base = (
                self._need_inner().answer_lead(after_reasoning=after_reasoning) if self.inner else const("")
            )
        return seq(optional(const(lead)), base) if lead and not after_reasoning else base

    def plain_answer(self, tools: Sequence[Tool] = ()) -> Element:
        if not self.headed:
            text = self._need_inner().plain_answer(tools) if self.inner is not None else any_text()
            return seq(optional(const(self.layout.lead)), text) if self.layout.lead else text
        header, _, _ = self._content()
        stops = tuple(x for x in (self.opener.strip(),) if x)
        return seq(const(self.first_opener + header), any_text(excludes=stops))

    def free_answer(self, tools: Sequence[Tool], *, parallel: bool) -> Element | None:
        if not self.headed:
            return self._need_inner().free_answer(tools, parallel=parallel) if self.inner else None
        if self.lenient:
            return self._reading_answer(tools)
        if not self.opened:
            return None  # the answer is free text until a message opens
        header, _, between = self._content()
        after_text = self.calls(tools, parallel=parallel, first_opener=self.opener)
        with_calls = seq(const(self.first_opener + header), any_text(excludes=(between or self.opener,)))
        text_then_calls = seq(with_calls, const(between), after_text) if between else None
        ways = [self.plain_answer(tools), self.section(tools, parallel=parallel)]
        if text_then_calls is not None:
            ways.insert(1, text_then_calls)
        else:
            ways[0] = seq(self.plain_answer(tools), optional(after_text))
        return one_of(*ways)

    def markers(self) -> tuple[str, ...]:
        lay = self.layout
        out = list(self.inner.markers()) if self.inner is not None else []
        out += [lay.opener, lay.closer, *(e for m in lay.messages for e in m.ends), lay.lead]
        return tuple(dict.fromkeys(m.strip() for m in out if m.strip()))

    def value_alternatives(self, schema: Any) -> list[Element]:
        return self.inner.value_alternatives(schema) if self.inner is not None else []
