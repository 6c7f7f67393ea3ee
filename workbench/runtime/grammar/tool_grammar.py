"""The small base every tool-call grammar builds on: one call per tool, assembled into a tool section.

A format only says how *one call* of *one tool* looks (:meth:`ToolGrammar.call_body`); the base wraps it
in the per-call markers, joins calls for parallel calling, and wraps the lot in the section markers, all
read from the :class:`~workbench.runtime.spec.ToolsSpec`.  Each format family subclasses it in
``workbench/runtime/formats/<name>/grammar.py``; the builder finds it in the registry
(:func:`workbench.runtime.formats.family`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import (
    BOUNDED_WHITESPACE,
    WHITESPACE,
    Element,
    GrammarError,
    any_text,
    const,
    ebnf,
    json_schema_ebnf,
    one_of,
    optional,
    regex,
    repeat,
    seq,
)
from workbench.runtime.spec import ToolsSpec

# A random or confused model can keep adding calls forever; real turns rarely hold more than a handful.
MAX_PARALLEL_CALLS = 8
# Ids written by the model (Mistral's [CALL_ID] takes nine alphanumerics; any template accepts those).
CALL_ID_PATTERN = "[A-Za-z0-9]{9}"


class ToolGrammar:
    """Build the grammar of a tool section for one :class:`ToolsSpec`."""

    name: ClassVar[str] = ""
    #: A reasoning region the format itself defines, used when the spec records none (Harmony's analysis
    #: channel): ``(start, end)``.
    implicit_reasoning: ClassVar[tuple[str, str] | None] = None
    #: Why the whole answer is held from its first token whatever the prompt wrote ("": only when the
    #: prompt wrote the trigger): a format whose every reply has one shape (a JSON object).
    held: ClassVar[str] = ""

    def __init__(
        self,
        tools_spec: ToolsSpec,
        *,
        any_whitespace: bool = False,
        output_prefix: str = "",
        lenient: bool = False,
        max_whitespace: int | None = None,
    ) -> None:
        self.t = tools_spec
        self.any_whitespace = any_whitespace
        # with any_whitespace: the most blanks in a row inside JSON (None: any number)
        self.max_whitespace = max_whitespace
        # Reading mode: also accept every spelling of a value the parser reads (the exported structural tag
        # proves itself on what templates write); generation keeps to the canonical spelling.
        self.lenient = lenient
        # Output-format text the generation prompt already wrote (``PromptSpec.output_prefix``): a grammar
        # starts after it, so a format whose markers it begins must not make the model write them again.
        self.output_prefix = output_prefix
        self.notes: list[str] = []

    # ----------------------------------------------------------------------------- what formats override
    def call_body(self, tool: Tool) -> Element:
        """One call of ``tool`` without the per-call markers."""
        raise NotImplementedError

    @property
    def trigger(self) -> str:
        """The text that announces a tool call (where the grammar engages under ``tool_choice=auto``).

        Surrounding whitespace is stripped: a model that writes ``<tool_call>`` and then something else than
        the template's newline has still announced a call, and the grammar then holds it to the format.
        """
        return self.t.trigger.strip()

    def answer_lead(self, *, after_reasoning: bool) -> Element:
        """What may come before a forced tool section (e.g. the blank line after ``</think>``)."""
        return optional(one_of(const("\n"), const("\n\n")))

    def plain_answer(self, tools: Sequence[Tool] = ()) -> Element:
        """The answer under ``tool_choice=none``, and the free text before a call under ``auto``: text that
        never announces a call (``tools``: the request's, for a format whose announcement names one)."""
        return any_text(excludes=(self.trigger,)) if self.trigger else any_text()

    def free_answer(self, tools: Sequence[Tool], *, parallel: bool) -> Element | None:
        """The whole answer under ``tool_choice=auto`` when it must be held from its first token.

        None (the usual case): the answer is free text and the tool section engages at the trigger.  A format
        whose trigger the generation prompt already wrote cannot wait for it and returns its whole grammar.
        """
        return None

    def call_id(self) -> Element:
        """A call id the model writes itself, between the spec's id markers."""
        return seq(const(self.t.id_prefix), regex(CALL_ID_PATTERN), const(self.t.id_suffix))

    def call_id_at(self, position: str) -> Element:
        """The call id where the spec writes it (``id_position``), else nothing: every format whose name
        sits outside the arguments places the id the same ways, and its parser reads it there (after its
        prefix: without one, the parsers read no id, so none is written)."""
        return self.call_id() if self.t.id_position == position and self.t.id_prefix else const("")

    def gap_before(self, marker: str) -> Element:
        """An optional newline between a JSON body and the ``marker`` that closes it.

        Templates write ``{json}\n</tool_call>``, but an analysed spec may keep that newline on neither side
        (the diff cannot tell whose it is); the parsers skip whitespace there, so the grammar allows it.  In
        reading mode any few blanks (``{json} <</functions>>``): the parsers skip them all.
        """
        if marker and not marker[:1].isspace():
            return BOUNDED_WHITESPACE if self.lenient else optional(const("\n"))
        return const("")

    def function_name(self, tool: Tool) -> Element:
        """The name as a call writes it: with a ``function_namespace`` (Kimi-K2) the namespace, the name and
        the call's ``:index`` (``functions.get_weather:0``), as the sample writer writes it."""
        ns = self.t.function_namespace
        if not ns:
            return const(tool.name)
        return seq(const(ns + tool.name), optional(regex(r":[0-9]+")))

    def value_alternatives(self, schema: Any) -> list[Element]:
        """Reading mode only: the other spellings of a JSON value the parser reads (``True``, ``None``,
        Python literals for nested values: :data:`~workbench.runtime.values.PYTHON_LITERAL_EBNF`)."""
        from workbench.runtime.values import PYTHON_LITERAL_EBNF, schema_types

        if not self.lenient:
            return []
        types = schema_types(schema)
        out: list[Element] = []
        if "null" in types:
            out.append(const("None"))
        if "boolean" in types:
            out += [const("True"), const("False")]
        if not types or types & {"object", "array"}:
            out.append(ebnf(PYTHON_LITERAL_EBNF))
        return out

    def schema_ebnf(self, schema: Any, what: str) -> str:
        """xgrammar's EBNF for a JSON value of ``schema`` with this grammar's whitespace rule (every
        format's JSON goes through here)."""
        return json_schema_ebnf(
            schema, any_whitespace=self.any_whitespace, what=what, max_whitespace=self.max_whitespace
        )

    def json_value(self, schema: Any, what: str) -> Element:
        """A JSON value of ``schema`` as a grammar element (:meth:`schema_ebnf` embedded): the one way
        every format grammar writes JSON arguments or a JSON-typed parameter."""
        return ebnf(self.schema_ebnf(schema, what))

    def python_canonical(self, tool_name: str, key: str, schema: Any) -> Element:
        """A value as :func:`~workbench.runtime.values.write_python` writes a Python literal, held to the
        schema: ``True``/``False``, ``None``, JSON for the rest (valid Python)."""
        from workbench.runtime.values import write_python

        if isinstance(schema, dict) and schema.get("type") == "boolean":
            return one_of(const("True"), const("False"))
        if isinstance(schema, dict) and schema.get("type") == "null":
            return const("None")
        if isinstance(schema, dict) and "enum" in schema:
            return one_of(*(const(write_python(v)) for v in schema["enum"]))
        return self.json_value(schema, f"tool {tool_name!r} parameter {key!r}")

    # ----------------------------------------------------------------------------- assembly
    def call(self, tool: Tool) -> Element:
        return seq(const(self.t.call_start), self.call_body(tool), const(self.t.call_end))

    def message_calls(self, tools: Sequence[Tool], *, parallel: bool, first_opener: str) -> Element:
        """Calls written as messages of their own (recipient addresses, headed layouts): the first after
        ``first_opener`` (what is left of the opener once the prompt wrote part of it), each later one a
        whole :meth:`call`; one call, or (``parallel``) up to :data:`MAX_PARALLEL_CALLS` back to back."""
        first = one_of(*(seq(const(first_opener), self.call_body(t)) for t in tools))
        if not parallel:
            return first
        more = one_of(*(self.call(t) for t in tools))
        return seq(first, repeat(more, 0, MAX_PARALLEL_CALLS - 1))

    def separator(self) -> Element:
        if self.t.call_separator:
            return const(self.t.call_separator)
        if self.t.array_wrapped:
            return const(", ")
        return optional(const("\n"))

    def section(self, tools: Sequence[Tool], *, parallel: bool) -> Element:
        """The whole tool section: the one place where the model must follow the tools' schemas."""
        if not tools:
            raise GrammarError("no tools to build a tool-call grammar for")
        t = self.t
        any_call = one_of(*(self.call(tool) for tool in tools))
        more = repeat(seq(self.separator(), any_call), 0, MAX_PARALLEL_CALLS - 1)
        if t.array_wrapped:
            calls = seq(any_call, more) if parallel else any_call
            if self.lenient:  # templates indent the array (Command R: ``[\n    {...}\n]``)
                calls = seq(WHITESPACE, calls, WHITESPACE)
            return seq(
                self._section_opening(),
                const("["),
                calls,
                const("]"),
                self._gap_at_end(),
                const(t.section_end),
            )
        repeats_section = not (t.call_start or t.call_end) and bool(t.section_start or t.section_end)
        if parallel and repeats_section:
            # Qwen-style: each call sits in its own <tool_call>...</tool_call>, so the section repeats.
            # Reading mode also takes several calls in one section (MiniMax-M2 writes them so).
            inside = seq(any_call, more) if self.lenient else any_call
            one = seq(self._section_opening(), inside, self._gap_at_end(), const(t.section_end))
            return seq(one, repeat(seq(self.separator(), one), 0, MAX_PARALLEL_CALLS - 1))
        calls = seq(any_call, more) if parallel else any_call
        return seq(self._section_opening(), calls, self._gap_at_end(), const(t.section_end))

    def _section_opening(self) -> Element:
        """The section's start; in reading mode its leading blanks are any few: what the answer's text writes
        before the calls may have taken them (``Plan: TEXT\n`` then ``[CALLS]``, where a turn of calls alone
        writes ``\n\n[CALLS]``), and the parsers skip blanks there."""
        start = self.t.section_start
        if self.lenient and start[:1].isspace() and start.strip():
            return seq(BOUNDED_WHITESPACE, const(start.lstrip()))
        return const(start)

    def _gap_at_end(self) -> Element:
        """Reading mode: the few blanks templates put before the section's end (``</invoke> <|end|>``)."""
        return self.gap_before(self.t.section_end) if self.lenient else const("")

    def markers(self) -> tuple[str, ...]:
        """Literal markers this format writes (the generator keeps their tokens out of the stop set)."""
        t = self.t
        values = (
            t.section_start,
            t.section_end,
            t.call_start,
            t.call_end,
            t.name_prefix,
            t.name_suffix,
            t.func_close,
            t.args_start,
            t.args_end,
            t.arg_name_prefix,
            t.arg_name_suffix,
            t.arg_value_prefix,
            t.arg_value_suffix,
        )
        return tuple(v.strip() for v in values if v.strip())


class WrappingGrammar(ToolGrammar):
    """A grammar around a tools family's (``inner``: how one call's body is written), for what a spec says
    about the whole turn: a turn layout's, a reply envelope's.  ``inner_options`` override the options the
    inner grammar gets (the envelope reads call objects with any whitespace in reading mode)."""

    def __init__(
        self,
        tools_spec: ToolsSpec,
        *,
        inner: type[ToolGrammar] | None,
        any_whitespace: bool = False,
        output_prefix: str = "",
        lenient: bool = False,
        max_whitespace: int | None = None,
        inner_options: dict[str, Any] | None = None,
    ) -> None:
        options: dict[str, Any] = {
            "any_whitespace": any_whitespace,
            "output_prefix": output_prefix,
            "lenient": lenient,
            "max_whitespace": max_whitespace,
        }
        super().__init__(tools_spec, **options)
        self.inner = inner(tools_spec, **{**options, **(inner_options or {})}) if inner is not None else None
        self.notes = self.inner.notes if self.inner is not None else self.notes


def tool_properties(tool: Tool) -> tuple[list[tuple[str, Any]], set[str]]:
    """A tool's parameters as ``(name, schema)`` in schema order, and the names it requires: what every
    family that writes arguments one by one builds its grammar from.

    Raises:
        GrammarError: the schema's ``properties`` is not an object.
    """
    schema = tool.parameters if isinstance(tool.parameters, dict) else {}
    props = schema.get("properties") or {}
    if not isinstance(props, dict):
        raise GrammarError(f"tool {tool.name!r}: 'properties' must be an object")
    return list(props.items()), set(schema.get("required") or ())


def ordered_parameters(items: Sequence[tuple[Element, bool]], sep: str) -> Element:
    """Parameters in schema order: required ones always, optional ones at will, ``sep`` only between them.

    Any parameter up to the first required one may be the first one written; each later one carries its
    separator in front.  This keeps the grammar linear in the number of parameters (no 2^n alternatives).
    """
    if not items:
        return const("")
    if not sep:
        return seq(*(p if req else optional(p) for p, req in items))
    heads: list[Element] = []
    for i, (p, req) in enumerate(items):
        rest = [seq(const(sep), q) if r else optional(seq(const(sep), q)) for q, r in items[i + 1 :]]
        heads.append(seq(p, *rest))
        if req:
            break
    else:
        heads.append(const(""))  # every parameter optional: none at all is fine
    return one_of(*heads)
