"""The grammar of a reply envelope (spec v6): the whole answer is one JSON object, held from its first token.

The object's members come in the template's order, each ``"key"`` + the key separator + its value, joined by
the item separator: a text member is a JSON string (or what the template writes when there is none), the
calls member a list of the tools family's call objects (or one object), any other member one of the values
the template writes.  A member the template leaves out when it has nothing is optional.  Under
``tool_choice=auto`` the calls member may hold calls or be empty; ``required`` (or a named tool) makes it
hold at least one; ``none`` keeps it empty.  When the generation prompt opened the object
(``prompt.output_prefix``), the grammar starts after what it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import (
    BOUNDED_WHITESPACE,
    Element,
    GrammarError,
    any_text,
    const,
    one_of,
    regex,
    repeat,
    seq,
)
from workbench.runtime.grammar.tool_grammar import (
    MAX_PARALLEL_CALLS,
    ToolGrammar,
    WrappingGrammar,
    ordered_parameters,
)
from workbench.runtime.spec import EnvelopeMember, ReplyEnvelope, ToolsSpec


class EnvelopeGrammar(WrappingGrammar):
    """See the module docstring; ``inner`` is the tools family's grammar (one call object)."""

    name = "envelope"
    held = "the reply is one JSON object"

    def __init__(
        self,
        tools_spec: ToolsSpec,
        *,
        envelope: ReplyEnvelope,
        inner: type[ToolGrammar] | None,
        **options: Any,
    ) -> None:
        # reading mode: call objects written compact (',' ':') or spaced, as templates do
        spacing = {"any_whitespace": True, "max_whitespace": options.get("max_whitespace") or 2}
        super().__init__(
            tools_spec, inner=inner, inner_options=spacing if options.get("lenient") else None, **options
        )
        self.envelope = envelope

    # ----------------------------------------------------------------------------- the object
    @property
    def opened(self) -> bool:
        """The generation prompt wrote the object's ``{`` (and the members before its last separator)."""
        return "{" in self.output_prefix

    def _written(self, member: EnvelopeMember) -> bool:
        return self.opened and json.dumps(member.key) in self.output_prefix

    def _calls_value(self, tools: Sequence[Tool], *, parallel: bool) -> Element:
        """The calls member's value: a list of one call or more (one object when the envelope holds one)."""
        if self.inner is None:
            raise GrammarError(f"no grammar for tool format {self.t.format!r}")
        one = one_of(*(self._call(t) for t in tools))
        sep = const(self.envelope.item_sep)
        more = repeat(seq(sep, one), 0, MAX_PARALLEL_CALLS - 1) if parallel else const("")
        listed = seq(const("["), seq(one, more), const("]"))
        if self.envelope.calls_list:
            return listed
        # one call as an object; several, where the format has them, as a list (Holo)
        return one_of(one, seq(const("["), one, sep, one, more, const("]"))) if parallel else one

    def _call(self, tool: Tool) -> Element:
        """One call object: the tools family's, or with ``flat_calls`` the name beside the arguments."""
        assert self.inner is not None
        if not self.envelope.flat_calls:
            return self.inner.call_body(tool)
        params = tool.parameters if isinstance(tool.parameters, dict) else {}
        name = self.t.name_field or "name"
        schema = {
            "type": "object",
            "properties": {name: {"const": tool.name}, **(params.get("properties") or {})},
            "required": [name, *(params.get("required") or [])],
        }
        return self.inner.json_value(schema, f"tool {tool.name!r}")

    def _member(self, m: EnvelopeMember, calls: Element | None) -> tuple[Element, bool] | None:
        """(the member's element, whether it is always written) for one kind of reply; None when the
        member is not written in it (the calls member, left out of a reply without calls)."""
        head = const(json.dumps(m.key, ensure_ascii=False) + self.envelope.key_sep)
        empty = [const(e) for e in m.empty]
        if m.holds in ("content", "reasoning"):
            text = self.json_value({"type": "string"}, f"the reply's {m.key!r}")
            return seq(head, one_of(text, *empty)), bool(m.empty)
        if m.holds == "calls":
            if calls is None:
                return (seq(head, one_of(*empty)), True) if empty else None
            return seq(head, calls), True
        values = [const(v) for v in m.values] or [self.json_value({}, f"the reply's {m.key!r}")]
        return seq(head, one_of(*values)), True

    def _object(self, calls: Element | None, *, may_skip_calls: bool = False) -> Element:
        """The object, its calls member holding ``calls`` (None: no calls)."""
        items: list[tuple[Element, bool]] = []
        for m in self.envelope.members:
            if self._written(m):
                continue
            member = self._member(m, calls)
            if member is None:
                continue
            if m.holds == "calls" and may_skip_calls:  # calls, or what a reply without any writes
                without = self._member(m, None)
                member = (one_of(member[0], without[0]), True) if without is not None else (member[0], False)
            items.append(member)
        body = ordered_parameters(items, self.envelope.item_sep)
        if self.opened:
            return seq(body, const("}"))
        if self.lenient:  # reading mode: the blanks a render puts before the object (the parser skips them)
            return seq(BOUNDED_WHITESPACE, const("{"), body, const("}"))
        return seq(const("{"), body, const("}"))

    # ----------------------------------------------------------------------------- the plan's pieces
    @property
    def trigger(self) -> str:
        return "" if self.opened else "{"

    def section(self, tools: Sequence[Tool], *, parallel: bool) -> Element:
        """A reply that calls (``required``, a named tool): the object with at least one call."""
        if not tools:
            raise GrammarError("no tools to build a tool-call grammar for")
        return self._object(self._calls_value(tools, parallel=parallel))

    def free_answer(self, tools: Sequence[Tool], *, parallel: bool) -> Element | None:
        """Under ``auto`` the reply is the object from its first token, with or without calls."""
        whole = self._object(self._calls_value(tools, parallel=parallel), may_skip_calls=True)
        if self.lenient and not self.opened:
            # reading mode: a template may write a reply without calls as plain text (BlueLM without tools),
            # which the parser reads as the answer: any text that does not open with the object's brace
            return one_of(whole, seq(regex(r"[^{\s]"), any_text()))
        return whole

    def plain_answer(self, tools: Sequence[Tool] = ()) -> Element:
        """Under ``none``: the object without calls."""
        return self._object(None)

    def markers(self) -> tuple[str, ...]:
        return self.inner.markers() if self.inner is not None else ()
