"""FormatSpec: the parser configuration every stage after analysis consumes.

The spec is the hinge of the pipeline (see ARCHITECTURE.md): the analyzer produces it, a person may edit it,
it is exported as JSON, and parsers, grammars and validation read nothing else.  Field names follow the
llama.cpp auto-parser's vocabulary so that people who know that code feel at home.

The JSON form *is* the export format, so it must round-trip losslessly: ``FormatSpec.from_dict(s.to_dict())
== s`` for every spec, and unknown keys or bad enum values are rejected with a :class:`SpecError` that names
the offending field instead of being silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import Field, dataclass, field, fields, replace
from functools import cache
from typing import Any, ClassVar, Literal, NamedTuple, get_args

from workbench.runtime.errors import WorkbenchError
from workbench.runtime.formats import builtin_names
from workbench.runtime.formats import names as format_names

#: Version 2 added ``tools.pattern`` (calls as literal text and typed slots, format ``call_pattern``);
#: version 3 added ``layout`` (the assistant turn as headed messages, a lead the model writes itself);
#: version 4 added ``tools.json_literals`` (pythonic values that spell ``true``/``false``/``null`` as JSON);
#: version 6 added ``envelope`` (a reply written as one JSON object whose members hold the text and calls);
#: version 7 added ``content.with_calls_start``/``with_calls_end`` (an answer wrapped otherwise by calls).
#: Older files load unchanged (they have no pattern, no layout, no envelope, and Python literals).
SPEC_VERSION = 7

ReasoningMode = Literal["none", "tag_based", "delimiter", "forced_open", "forced_closed", "tools_only"]
ContentMode = Literal["plain", "always_wrapped", "wrapped_with_reasoning"]
#: A ``tools.format`` value: ``"none"`` or the name of a registered format family.  The families are the
#: folders of ``runtime/formats/`` (plus any added at run time), so the names are read from the registry,
#: not listed here: :data:`TOOL_FORMATS`, :func:`tool_format_names`.
ToolFormatName = str
IdPosition = Literal["none", "pre_func_name", "between_func_and_args", "post_args"]
ArgsKind = Literal["json", "object", "tagged"]
ValueWriting = Literal["raw", "json", "encoded", "python"]
StringEscape = Literal["json", "none"]
ValueEscape = Literal["none", "xml"]
MessageKind = Literal["reasoning", "content"]
EnvelopeSlot = Literal["content", "reasoning", "calls", "other"]

# The runtime tuples come from the Literal types, so a value the type checker accepts is exactly a value
# ``from_dict`` accepts (and the JSON Schema's enums are checked against these by the tests); the format
# names come from the registry.
REASONING_MODES: tuple[ReasoningMode, ...] = get_args(ReasoningMode)
CONTENT_MODES: tuple[ContentMode, ...] = get_args(ContentMode)
#: ``"none"`` and the built-in families' names (the folders of ``runtime/formats/``).
TOOL_FORMATS: tuple[str, ...] = ("none", *builtin_names())
ID_POSITIONS: tuple[IdPosition, ...] = get_args(IdPosition)
ARGS_KINDS: tuple[ArgsKind, ...] = get_args(ArgsKind)
VALUE_WRITINGS: tuple[ValueWriting, ...] = get_args(ValueWriting)
STRING_ESCAPES: tuple[StringEscape, ...] = get_args(StringEscape)
VALUE_ESCAPES: tuple[ValueEscape, ...] = get_args(ValueEscape)
MESSAGE_KINDS: tuple[MessageKind, ...] = get_args(MessageKind)
ENVELOPE_SLOTS: tuple[EnvelopeSlot, ...] = get_args(EnvelopeSlot)
#: The slots of a call pattern part list (``ToolsSpec.pattern``); any other part is literal text.  A literal
#: that starts with ``$`` is written with the ``$`` doubled.
CALL_SLOTS: tuple[str, ...] = ("$name", "$id", "$index", "$args")
ARG_SLOTS: tuple[str, ...] = ("$key", "$value")
JSON_TYPES: tuple[str, ...] = ("string", "integer", "number", "boolean", "null", "array", "object")

# Reasoning modes whose output starts inside reasoning without a start marker of its own: the prompt opened
# the block (``forced_open``) or the format has only an end delimiter (``delimiter``).
_OPENED_MODES: frozenset[str] = frozenset({"forced_open", "delimiter"})
# Reasoning the template controls: with thinking disabled the model does not reason at all.
_TEMPLATE_CONTROLLED_MODES: frozenset[str] = frozenset({"forced_open", "forced_closed"})


class SpecError(WorkbenchError, ValueError):
    """A spec (or its JSON) is malformed; the message names the field."""


class MarkerField(NamedTuple):
    """One marker field of a spec: ``path`` is the dotted name :meth:`FormatSpec.with_edit` takes."""

    path: str
    value: str
    description: str


def _marker(description: str) -> Any:
    """A string field holding literal output text (a marker): parsers hold back partial matches of it."""
    return field(default="", metadata={"marker": True, "description": description})


def _enum(description: str, values: tuple[str, ...]) -> dict[str, Any]:
    """Metadata of a string field restricted to a closed set (``values`` come from its ``Literal`` type)."""
    return {"description": description, "values": values}


def _described(default: Any, description: str) -> Any:
    """A plain field with a one-line description (not a marker, not an enum)."""
    return field(default=default, metadata={"description": description})


def _static_enums_of(cls: type) -> dict[str, tuple[str, ...]]:
    """The allowed values of every enum field as declared (built-in names only)."""
    return {f.name: f.metadata["values"] for f in fields(cls) if "values" in f.metadata}


def _enums_of(cls: type) -> dict[str, tuple[str, ...]]:
    """The allowed values of every enum field, read now: ``tools.format`` also takes registered families."""
    out = _static_enums_of(cls)
    if cls is ToolsSpec:
        out["format"] = tool_format_names()
    return out


def tool_format_names() -> tuple[str, ...]:
    """Every accepted ``tools.format``: ``"none"``, the built-in names, then any family registered at run
    time with :func:`workbench.runtime.formats.register` (the registry is the one list of formats; reading
    it imports no family)."""
    return ("none", *format_names())


def _is_marker(f: Field[Any]) -> bool:
    return bool(f.metadata.get("marker"))


@dataclass(frozen=True)
class ReasoningSpec:
    """How reasoning is delimited in the assistant output."""

    mode: ReasoningMode = field(default="none", metadata=_enum("how reasoning is delimited", REASONING_MODES))
    start: str = _marker("opens a reasoning block")
    end: str = _marker("closes a reasoning block")

    _enums: ClassVar[dict[str, tuple[str, ...]]]


@dataclass(frozen=True)
class ContentSpec:
    """Markers that wrap the visible answer, if any (e.g. Granite's ``<response>``)."""

    mode: ContentMode = field(
        default="plain", metadata=_enum("whether the answer is wrapped in markers", CONTENT_MODES)
    )
    start: str = _marker("opens the visible answer")
    end: str = _marker("closes the visible answer")
    # An agent's turn that calls writes its text as something else than its answer (WebResearcher's
    # '<report>' beside the calls, '<answer>' otherwise; Command R+'s 'Plan: ' only before its calls).
    with_calls_start: str = _marker("opens the answer's text when tool calls follow it, when that differs")
    with_calls_end: str = _marker("closes the answer's text when tool calls follow it, when that differs")

    _enums: ClassVar[dict[str, tuple[str, ...]]]


@dataclass(frozen=True)
class ValueEncoding:
    """How a value is written where it is neither JSON nor raw text (issue 10's "values of their own").

    Objects are ``{`` + members joined by ``item_sep`` + ``}``, a member ``key_quote KEY key_quote key_sep
    VALUE``; arrays ``[`` + values joined by ``item_sep`` + ``]``; strings ``string_open TEXT string_close``,
    with ``escape`` "json" (JSON escapes inside the delimiters) or "none" (the text as is); numbers, booleans
    and null as in JSON.  The defaults are compact-spaced JSON.
    """

    string_open: str = field(default='"', metadata={"description": "opens a string value"})
    string_close: str = field(default='"', metadata={"description": "closes a string value"})
    escape: StringEscape = field(
        default="json", metadata=_enum("how text inside a string is escaped", STRING_ESCAPES)
    )
    key_quote: str = field(default='"', metadata={"description": "around an object key (empty: bare keys)"})
    key_sep: str = field(default=": ", metadata={"description": "between a key and its value"})
    item_sep: str = field(default=", ", metadata={"description": "between two members or items"})

    _enums: ClassVar[dict[str, tuple[str, ...]]]


@dataclass(frozen=True)
class ArgVariant:
    """How one argument is written when its value has one of ``types`` (a tagged argument).

    ``parts`` are literal text and the slots ``$key`` and ``$value``; ``value`` says how the value is
    written: ``raw`` (a string as is), ``json``, ``encoded`` (the pattern's :class:`ValueEncoding`) or
    ``python`` (a Python literal: ``'single quoted'``, ``True``, ``None``, ``{'k': [1, 2]}``).
    Templates that mark a value's type in the argument's tag (``text="yes"`` vs ``text="no"``) have one
    variant per marking.  ``escape`` ``xml``: the value's text is written XML-escaped (``&lt;``, ``&amp;``,
    ``&quot;``: a value inside an attribute or an element), and read back unescaped.
    """

    types: tuple[str, ...] = _described((), "the JSON types of values written this way")
    parts: tuple[str, ...] = _described((), "literal text and the slots $key, $value")
    value: ValueWriting = field(default="json", metadata=_enum("how the value is written", VALUE_WRITINGS))
    escape: ValueEscape = field(
        default="none", metadata=_enum("how the value's text is escaped where it is written", VALUE_ESCAPES)
    )

    _enums: ClassVar[dict[str, tuple[str, ...]]]


@dataclass(frozen=True)
class CallPattern:
    """One tool call as literal text and typed slots, between ``call_start`` and ``call_end``.

    ``call`` lists the parts in order: literal text, or one of the slots ``$name``, ``$id``, ``$index`` (the
    call's position in the turn, counted from ``index_base``) and ``$args``.  ``args`` says how the
    arguments slot is written: ``json`` (one JSON object), ``object`` (an object in the pattern's
    :class:`ValueEncoding`), or ``tagged`` (one element per argument, written by the first of ``arguments``
    whose types hold the value's type, joined by ``ToolsSpec.arg_separator``).  Element-style markup, ids
    before names and per-type attributes are all ordinary patterns.
    """

    call: tuple[str, ...] = _described((), "the call's parts: literal text, $name, $id, $index, $args")
    index_base: int = _described(0, "the value of $index for the first call of a turn")
    args: ArgsKind = field(default="json", metadata=_enum("how the arguments are written", ARGS_KINDS))
    arguments: tuple[ArgVariant, ...] = field(
        default=(),
        metadata={"description": "tagged arguments, one way per value type", "item_type": ArgVariant},
    )
    encoding: ValueEncoding = field(
        default_factory=ValueEncoding,
        metadata={"description": "how object arguments and encoded values are written"},
    )

    _enums: ClassVar[dict[str, tuple[str, ...]]]

    @property
    def defined(self) -> bool:
        return bool(self.call)

    def describe(self) -> str:
        """One readable line: the call's parts with slots in braces, then how arguments are written."""
        text = "".join(_part_shown(p, CALL_SLOTS) for p in self.call)
        if self.args == "tagged":
            ways = "; ".join(
                f"{'/'.join(v.types) or 'any'}: "
                f"{''.join(_part_shown(p, ARG_SLOTS) for p in v.parts)} "
                f"({v.value}{', XML-escaped' if v.escape == 'xml' else ''})"
                for v in self.arguments
            )
            return f"{text}  [arguments: {ways}]"
        if self.args == "object":
            e = self.encoding
            keys = e.key_quote or "bare"
            return f"{text}  [arguments: object, strings {e.string_open}…{e.string_close}, keys {keys}]"
        return f"{text}  [arguments: JSON]" if text else ""


def _part_shown(part: str, slots: tuple[str, ...]) -> str:
    if part in slots:
        return "{" + part[1:] + "}"
    return part[1:] if part.startswith("$$") else part


def pattern_literal(part: str) -> str:
    """The text of a literal part (``$$x`` stands for ``$x``)."""
    return part[1:] if part.startswith("$$") else part


def literal_part(text: str) -> str:
    """``text`` as a literal part of a pattern (a leading ``$`` doubled)."""
    return "$" + text if text.startswith("$") else text


@dataclass(frozen=True)
class ToolsSpec:
    """Everything needed to find and decode tool calls in model output.

    Markers that a format does not use stay empty strings.  ``parameter_order`` lists the JSON fields of a
    call object in the order the template writes them (e.g. ``("name", "arguments")``).
    """

    format: ToolFormatName = field(default="none", metadata=_enum("how tool calls are written", TOOL_FORMATS))
    # Section and per-call wrappers.
    section_start: str = _marker("opens the block of all tool calls")
    section_end: str = _marker("closes the block of all tool calls")
    call_start: str = _marker("opens one tool call")
    call_end: str = _marker("closes one tool call")
    call_separator: str = _marker("between two tool calls")
    # Function name and arguments container.
    name_prefix: str = _marker("before the function name")
    name_suffix: str = _marker("after the function name")
    func_close: str = _marker("closes the function (after its arguments)")
    args_start: str = _marker("opens the arguments")
    args_end: str = _marker("closes the arguments")
    # Tagged arguments (tag_with_tagged).
    arg_name_prefix: str = _marker("before an argument name")
    arg_name_suffix: str = _marker("after an argument name")
    arg_value_prefix: str = _marker("before an argument value")
    arg_value_suffix: str = _marker("after an argument value")
    arg_separator: str = _marker("between two arguments")
    # Call ids outside JSON.
    id_position: IdPosition = field(
        default="none", metadata=_enum("where a call id outside JSON sits", ID_POSITIONS)
    )
    id_prefix: str = _marker("before a call id")
    id_suffix: str = _marker("after a call id")
    # JSON field names (json_native).
    name_field: str = _described("name", "JSON field holding the function name")
    args_field: str = _described("arguments", "JSON field holding the arguments")
    id_field: str = _described("", "JSON field holding the call id")
    gen_id_field: str = _described("", "JSON field of a generated call id")
    function_field: str = _described("", "JSON field wrapping name and arguments")
    fun_name_is_key: bool = _described(False, "the function name is the JSON key of its arguments")
    array_wrapped: bool = _described(False, "the calls are a JSON array")
    parameter_order: tuple[str, ...] = _described((), "the JSON fields of a call, in template order")
    # Special wrappers.
    code_block_marker: str = _marker("opens a code block holding the calls")
    code_block_language: str = _described("", "the code block's language tag")
    function_namespace: str = _described("", "prefix of call ids (Kimi-K2's functions.)")
    args_python_dict: bool = _described(False, "arguments are a Python dict literal")
    json_literals: bool = _described(
        False, "pythonic keyword values spell true, false and null as JSON does, not True, False, None (v4)"
    )
    # Capabilities.
    parallel: bool = _described(False, "several calls per turn")
    # Format ``call_pattern``: the call as literal text and typed slots (spec version 2).
    pattern: CallPattern = field(
        default_factory=CallPattern, metadata={"description": "the call as literal text and typed slots"}
    )

    _enums: ClassVar[dict[str, tuple[str, ...]]]

    @property
    def supported(self) -> bool:
        return self.format != "none"

    @property
    def trigger(self) -> str:
        """The first marker that announces a tool call: where a lazy grammar engages."""
        for marker in (self.section_start, self.call_start, self.code_block_marker, self.name_prefix):
            if marker:
                return marker
        return ""


@dataclass(frozen=True)
class LayoutMessage:
    """One kind of message of a headed layout: its header (after the layout's opener, up to the body) and
    the literals that end its body (the first is how the template ends it when the turn ends)."""

    kind: MessageKind = field(default="content", metadata=_enum("what the body is", MESSAGE_KINDS))
    header: str = _described("", "the header after the opener, up to the body (as the template writes it)")
    ends: tuple[str, ...] = _described((), "literals that end the body")

    _enums: ClassVar[dict[str, tuple[str, ...]]]


@dataclass(frozen=True)
class TurnLayout:
    """The assistant turn as a learned layout, where the marker fields alone cannot say it (spec v3).

    ``lead`` is text every turn starts with that the generation prompt does not write (history's
    ``Assistant:``): the model writes it, and it is never content.  With ``messages``, the turn is a
    sequence of *headed messages*: each starts with ``opener`` (the first one's may be in the prompt:
    ``prompt.output_prefix``), then a header that says what the body is (a channel word after ``channel``,
    or the call's recipient and name, read by the tools spec's call pattern), ending with ``closer`` when
    all headers share one; the body runs to one of its kind's ``ends``.  A header that starts with
    ``roles`` but is not the assistant's is another role's message (not the model's text); ``ids`` is the
    attribute of a call's header in front of the call's id (``call_id=``).  ``escape``
    in front of a marker makes it text; between ``verbatim[0]`` and ``verbatim[1]`` nothing is a marker.
    """

    lead: str = _described("", "text every turn starts with that the prompt does not write")
    opener: str = _described("", "what every message header starts with")
    closer: str = _described("", "what every message header ends with (empty: headers end differently)")
    channel: str = _described("", "the literal in front of a header's channel word")
    roles: str = _described("", "a header of any role starts with it")
    ids: str = _described("", "in a call's header, the attribute in front of its id")
    messages: tuple[LayoutMessage, ...] = field(
        default=(),
        metadata={"description": "the kinds of reasoning and answer messages", "item_type": LayoutMessage},
    )
    escape: str = _described("", "in front of a marker, makes it text")
    verbatim: tuple[str, ...] = _described((), "opens and closes a block in which nothing is a marker")

    _enums: ClassVar[dict[str, tuple[str, ...]]]

    @property
    def headed(self) -> bool:
        """True when the turn is a sequence of headed messages."""
        return bool(self.messages)

    @property
    def defined(self) -> bool:
        return bool(self.messages or self.lead)

    def message(self, kind: str) -> LayoutMessage | None:
        """The first message kind ``kind`` (None when the layout has none)."""
        return next((m for m in self.messages if m.kind == kind), None)


@dataclass(frozen=True)
class EnvelopeMember:
    """One member of a reply envelope: its key, what its value holds, and how the template writes it
    when there is nothing to hold (``empty``: the JSON texts seen, such as ``""``, ``null`` or ``[]``; none:
    the member is left out).  An ``other`` member holds no part of the message (a status word, a role):
    ``values`` are the JSON texts the template writes for it."""

    key: str = _described("", "the member's key")
    holds: EnvelopeSlot = field(default="other", metadata=_enum("what the value holds", ENVELOPE_SLOTS))
    empty: tuple[str, ...] = _described((), "the JSON written when there is nothing to hold (none: left out)")
    values: tuple[str, ...] = _described((), "the JSON values the template writes for an 'other' member")

    _enums: ClassVar[dict[str, tuple[str, ...]]]


@dataclass(frozen=True)
class ReplyEnvelope:
    """The reply written as one JSON object (spec v6): xLAM's ``{"thought": TEXT, "tool_calls": [...]}``,
    BlueLM's ``{"answer": TEXT, "function_calls": [...]}``.  Its ``members`` in the template's order say
    which key holds the answer's text, the reasoning's and the calls (a list of call objects written as
    the tools spec's JSON objects, or one such object when ``calls_list`` is false; with ``flat_calls``
    the arguments are the call object's members beside the name, Holo's ``{"action": NAME, "x": 1}``);
    texts are JSON strings, so they carry JSON escapes.  The object may start in the generation prompt
    (``prompt.output_prefix``); reasoning may also come before it, in the reasoning spec's markers."""

    members: tuple[EnvelopeMember, ...] = field(
        default=(), metadata={"description": "the object's members, in order", "item_type": EnvelopeMember}
    )
    calls_list: bool = _described(
        True, "the calls member holds a list of calls (false: one call object, several in a list)"
    )
    flat_calls: bool = _described(False, "a call's arguments are members of its object, beside its name")
    key_sep: str = _described(": ", "between a key and its value, as the template writes it")
    item_sep: str = _described(", ", "between two members, as the template writes it")

    _enums: ClassVar[dict[str, tuple[str, ...]]]

    @property
    def defined(self) -> bool:
        return bool(self.members)

    def key(self, holds: str) -> str:
        """The key of the member that holds ``holds`` ("" when none does)."""
        return next((m.key for m in self.members if m.holds == holds), "")


# Derived once from the field metadata: the one list of closed sets ``_from_dict`` checks.
ReasoningSpec._enums = _static_enums_of(ReasoningSpec)
ContentSpec._enums = _static_enums_of(ContentSpec)
ToolsSpec._enums = _static_enums_of(ToolsSpec)
ValueEncoding._enums = _static_enums_of(ValueEncoding)
ArgVariant._enums = _static_enums_of(ArgVariant)
CallPattern._enums = _static_enums_of(CallPattern)
LayoutMessage._enums = _static_enums_of(LayoutMessage)
TurnLayout._enums = _static_enums_of(TurnLayout)
EnvelopeMember._enums = _static_enums_of(EnvelopeMember)
ReplyEnvelope._enums = _static_enums_of(ReplyEnvelope)


@dataclass(frozen=True)
class PromptSpec:
    """Facts about the generation prompt that change how output must be parsed.

    ``thinking_opened`` is True when the prompt (with thinking enabled) already ends inside an open reasoning
    block, e.g. ``...<|im_start|>assistant\\n<think>\\n``: the model's first token is reasoning.
    ``thinking_closed_when_disabled`` is True when the prompt with thinking disabled already contains a
    closed, empty reasoning block (Qwen3's ``<think>\\n\\n</think>\\n\\n``).
    ``output_prefix`` is output-format text the generation prompt already wrote on the model's behalf, other
    than reasoning (functionary v3.2 ends its prompt with ``>>>``, the start of a recipient): parsers treat
    the output as if it began with it.
    """

    generation_prompt: str = ""
    thinking_opened: bool = False
    thinking_closed_when_disabled: bool = False
    supports_thinking_toggle: bool = False
    suffix_when_thinking: str = ""
    suffix_when_not_thinking: str = ""
    output_prefix: str = ""
    switches: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_switches(self.switches)


#: Where the model's output starts, as the prompt left it (:meth:`FormatSpec.output_start_stage`).
StartStage = Literal["start", "reasoning", "content", "answer"]
START_STAGES: tuple[StartStage, ...] = get_args(StartStage)
#: The keys of one recorded switch value (``PromptSpec.switches[name]["effects"][i]``).
SWITCH_EFFECT_KEYS = frozenset(
    {"value", "generation_prompt", "start", "renders_reasoning", "keeps_history_reasoning", "changes"}
)


def _with_opener(opener: str, header: str) -> str:
    """A message's header with the layout's opener in front (trimmed), unless it has one already."""
    whole = header if header.strip().startswith(opener.strip()) else opener + header
    return whole.strip()


def _covers(text: str, marker: str, at: int, n: int) -> bool:
    """Does an occurrence of ``marker`` in ``text`` hold the ``n`` characters at ``at``?"""
    start = max(0, at + n - len(marker))
    found = text.find(marker, start, at + len(marker))
    while 0 <= found <= at:
        if found + len(marker) >= at + n:
            return True
        found = text.find(marker, found + 1, at + len(marker))
    return False


def check_switches(switches: Any) -> None:
    """``PromptSpec.switches``: template variable -> ``{"kind", "values", "effects"}`` (SpecError otherwise).

    ``kind`` is ``choice`` or ``flag``; ``values`` the JSON values tried; ``effects`` one object per value:
    ``value``, the ``generation_prompt`` it gives (measured from the end of the user text), the ``start``
    stage that prompt leaves the output in, whether the assistant turn ``renders_reasoning``, whether
    earlier turns keep theirs (``keeps_history_reasoning``), and ``changes``: what differs from the default
    render, in words.
    """
    where = "spec.prompt.switches"
    if not isinstance(switches, dict):
        raise SpecError(f"{where}: expected an object")
    for name, info in switches.items():
        at = f"{where}.{name}"
        if not isinstance(name, str) or not name.isidentifier():
            raise SpecError(f"{where}: {name!r} is not a variable name")
        if not isinstance(info, dict) or set(info) != {"kind", "values", "effects"}:
            raise SpecError(f"{at}: expected an object with kind, values and effects")
        if info["kind"] not in ("choice", "flag"):
            raise SpecError(f"{at}.kind: {info['kind']!r} is not one of choice, flag")
        if not isinstance(info["values"], list) or not isinstance(info["effects"], list):
            raise SpecError(f"{at}: values and effects must be lists")
        for effect in info["effects"]:
            if not isinstance(effect, dict) or not set(effect) <= SWITCH_EFFECT_KEYS or "value" not in effect:
                raise SpecError(f"{at}.effects: each effect is an object with a value and known keys")
            if "start" in effect and effect["start"] not in START_STAGES:
                raise SpecError(
                    f"{at}.effects: start {effect['start']!r} is not one of {', '.join(START_STAGES)}"
                )


@dataclass(frozen=True)
class Provenance:
    """Where a spec came from: lets an importer check it still matches its template."""

    template_sha256: str = ""
    template_name: str = ""
    workbench_version: str = ""
    edited: bool = False
    validation: dict[str, Any] | None = None


@dataclass(frozen=True)
class FormatSpec:
    """The complete parser configuration for one chat template."""

    reasoning: ReasoningSpec = field(default_factory=ReasoningSpec)
    content: ContentSpec = field(default_factory=ContentSpec)
    tools: ToolsSpec = field(default_factory=ToolsSpec)
    prompt: PromptSpec = field(default_factory=PromptSpec)
    preserved_tokens: tuple[str, ...] = field(
        default=(), metadata={"description": "special tokens the parser must see in the text (not skipped)"}
    )
    bos_token: str = field(default="", metadata={"description": "the tokenizer's begin-of-sequence token"})
    eos_token: str = field(default="", metadata={"description": "the tokenizer's end-of-sequence token"})
    end_markers: tuple[str, ...] = field(
        default=(), metadata={"markers": True, "description": "what ends an assistant turn (trimmed)"}
    )
    layout: TurnLayout = field(
        default_factory=TurnLayout, metadata={"description": "the turn as headed messages (spec v3)"}
    )
    envelope: ReplyEnvelope = field(
        default_factory=ReplyEnvelope, metadata={"description": "the reply as one JSON object (spec v6)"}
    )
    provenance: Provenance = field(default_factory=Provenance)
    version: int = SPEC_VERSION

    # ----------------------------------------------------------------------------------------- helpers
    @classmethod
    def marker_field_names(cls) -> tuple[str, ...]:
        """The dotted path of every single-marker field (``reasoning.start``, ``tools.call_start``, ...).

        Read from the field metadata, so this is the one list of marker fields: a new marker field is one
        ``_marker(...)`` line in its dataclass.  Does not depend on any instance.
        """
        return tuple(path for path, _ in _marker_field_defs())

    def marker_fields(self) -> tuple[MarkerField, ...]:
        """(dotted path, value, description) for every marker field, empty ones included, in field order.

        ``end_markers`` is a list of markers, not one field, and is not included (see :meth:`all_markers`).
        Made once per spec (the parts it reads are frozen): a validation asks for them at every case.
        """
        kept: tuple[MarkerField, ...] | None = self.__dict__.get("_marker_fields")
        if kept is None:
            out = []
            for path, f in _marker_field_defs():
                part, name = path.split(".")
                out.append(MarkerField(path, getattr(getattr(self, part), name), f.metadata["description"]))
            kept = tuple(out)
            object.__setattr__(self, "_marker_fields", kept)  # not a field: eq, repr, replace ignore it
        return kept

    def iter_markers(self) -> Iterator[str]:
        """Every non-empty marker value (marker fields, then marker lists such as ``end_markers``),
        duplicates included."""
        yield from (m.value for m in self.marker_fields() if m.value)
        for f in fields(self):
            if f.metadata.get("markers"):
                yield from (m for m in getattr(self, f.name) if m)
        lay = self.layout
        headers = (lay.opener + m.header for m in lay.messages)
        ends = (e for m in lay.messages for e in m.ends)
        texts = (lay.lead, lay.opener, lay.closer, *headers, *ends, *lay.verbatim)
        yield from (m for m in texts if m.strip())

    def all_markers(self) -> tuple[str, ...]:
        """Every non-empty marker string the spec names, longest first (used to hold back partial text).
        Made once per spec, as :meth:`marker_fields`."""
        kept: tuple[str, ...] | None = self.__dict__.get("_all_markers")
        if kept is None:
            kept = tuple(sorted(set(self.iter_markers()), key=lambda s: (-len(s), s)))
            object.__setattr__(self, "_all_markers", kept)
        return kept

    def may_reason(self, *, enable_thinking: bool = True) -> bool:
        """Whether the model may write reasoning at all on a request with this thinking setting: the format
        reasons (a mode and an end marker), and thinking is on or the template does not control it (with
        thinking disabled, ``forced_open`` / ``forced_closed`` reasoning and any mode of a template with a
        thinking switch are off: the prompt closed or left out the block).  Pure."""
        r = self.reasoning
        if r.mode == "none" or not r.end.strip():
            return False
        return enable_thinking or not (
            r.mode in _TEMPLATE_CONTROLLED_MODES or self.prompt.supports_thinking_toggle
        )

    def output_starts_in_reasoning(
        self, *, enable_thinking: bool = True, generation_prompt: str | None = None
    ) -> bool:
        """Whether the model's first output token is reasoning (the block is open before the output).

        The rule, in order:

        1. No reasoning to be inside: mode ``none`` or no end marker -> False.
        2. Thinking disabled on a template that controls reasoning (``forced_open`` / ``forced_closed``, or
           any mode of a template with a thinking switch) -> False: the model does not reason.
        3. With the rendered ``generation_prompt`` and a start marker: read it off the prompt -- True when
           the prompt's last start marker is followed by no end marker (``...assistant\\n<think>\\n``).
        4. Otherwise the spec's facts: ``forced_open`` and ``delimiter`` modes (the prompt opened the block,
           or reasoning has no start marker), or ``prompt.thinking_opened``; and only with thinking enabled.

        Pure: reads the spec and the arguments only.
        """
        r = self.reasoning
        start, end = r.start.strip(), r.end.strip()
        if not self.may_reason(enable_thinking=enable_thinking):  # rules 1 and 2
            return False
        if generation_prompt is not None and start:
            at = generation_prompt.rfind(start)
            return at >= 0 and end not in generation_prompt[at + len(start) :]
        return enable_thinking and (r.mode in _OPENED_MODES or self.prompt.thinking_opened)

    def _inside_envelope_text(self, tail: str) -> StartStage | None:
        """``answer`` or ``reasoning`` when ``tail`` (the prompt's current turn) ends inside the reply
        envelope's answer or reasoning string (a continued message); None otherwise.  Pure."""
        env = self.envelope
        for holds, stage in (("content", "answer"), ("reasoning", "reasoning")):
            key = env.key(holds)
            if not key:
                continue
            head = json.dumps(key, ensure_ascii=False) + env.key_sep.strip()
            at = tail.rfind(head)
            if at < 0:
                continue
            rest = tail[at + len(head) :].lstrip()
            if rest.startswith('"') and _open_json_string(rest[1:]):
                return stage  # type: ignore[return-value]
        return None

    def output_start_stage(
        self, *, enable_thinking: bool = True, generation_prompt: str | None = None
    ) -> StartStage:
        """Where the model's output starts, as the prompt left it (the DeepSeek RFC's "stage detection from
        the prompt"): the one rule behind parsers starting mid-turn, for generation prompts and for
        ``continue_final_message`` prompts alike.

        * ``reasoning``: inside an open reasoning block: the prompt's last start marker is not closed (the
          prompt wins over ``enable_thinking``); without a start marker, :meth:`output_starts_in_reasoning`;
        * ``answer``: inside the open answer wrapper (``content.start`` with no ``content.end`` after it:
          ``...<answer>\n`` or a partial answer being continued);
        * ``content``: the prompt already closed reasoning (``<think></think>``, a thinking switch that is
          off, a continued answer after its reasoning): whatever the output says is the answer, so a
          reasoning start marker in it is text;
        * ``start``: nothing opened or closed; the output may begin with reasoning where the format allows.

        Only the prompt's current turn is read: the text after the last end-of-turn marker (earlier turns
        hold closed blocks of their own).  Without a prompt the spec's facts decide between ``reasoning``
        and ``start``.  Pure.
        """
        if generation_prompt is None:
            opened = self.output_starts_in_reasoning(enable_thinking=enable_thinking)
            return "reasoning" if opened else "start"
        tail = generation_prompt
        # an end marker inside a longer marker of the spec (':::' of ':::reasoning') ends no turn
        longer = [
            m.strip()
            for m in (self.reasoning.start, self.reasoning.end, self.content.start, self.content.end)
            if m.strip()
        ]
        opener = self.layout.opener.strip() if self.layout.headed else ""
        if opener:  # (the headers with the opener in front: ':::' ends no turn inside '::: thinking')
            headers = (self.reasoning.start, self.content.start)
            longer += [_with_opener(self.layout.opener, m) for m in headers]
        for marker in self.end_markers:
            end = marker.strip()
            at = tail.rfind(end) if end else -1
            while at >= 0 and any(len(m) > len(end) and _covers(tail, m, at, len(end)) for m in longer):
                at = tail.rfind(end, 0, at)
            if at >= 0:
                tail = tail[at + len(end) :]
        inside = self._inside_envelope_text(tail)
        if inside:
            return inside
        r_start, r_end = self.reasoning.start.strip(), self.reasoning.end.strip()
        c_start, c_end = self.content.start.strip(), self.content.end.strip()
        if opener:
            # a message header the prompt's opener begins is found in a prompt with that opener in front
            # (': ' of 'ASSISTANT: ' is in every 'USER: ' turn too)
            r_start = _with_opener(self.layout.opener, self.reasoning.start) if r_start else ""
            c_start = _with_opener(self.layout.opener, self.content.start) if c_start else ""
        reasons = self.reasoning.mode != "none" and bool(r_end)
        if self.reasoning.mode != "none" and not r_end and r_start and self.layout.headed:
            # a reasoning message of headed messages runs to the next header: open while none follows
            at = tail.rfind(r_start)
            if at >= 0 and not (opener and opener in tail[at + len(r_start) :]):
                return "reasoning"
        if reasons and not r_start and r_end in tail:
            return "content"  # the delimiter that ends reasoning is behind us
        if reasons and r_start:  # an open block is read off the prompt, whatever the switches say
            at = tail.rfind(r_start)
            while at >= 0 and any(
                len(m) > len(r_start) and _covers(tail, m, at, len(r_start)) for m in longer
            ):
                at = tail.rfind(r_start, 0, at)  # inside a longer marker (an answer's header): no start
            rest = tail[at + len(r_start) :] if at >= 0 else ""
            # a later message's header closes a headed reasoning message too ('%%to=user ch=final%%')
            if at >= 0 and r_end not in rest and not (opener and opener in rest):
                return "reasoning"
        elif self.output_starts_in_reasoning(enable_thinking=enable_thinking):
            return "reasoning"
        c_open = self.content.mode != "plain" and bool(c_start) and c_start in tail
        if c_open and (not c_end or c_end not in tail[tail.rfind(c_start) + len(c_start) :]):
            return "answer"
        if reasons and r_end in tail[max(tail.rfind(r_start), 0) if r_start else 0 :]:
            return "content"
        return "start"

    def with_edit(self, **changes: Any) -> FormatSpec:
        """Return a copy with changes applied to nested parts, flagged as edited by a person.

        Keys are dotted paths: ``spec.with_edit(**{"tools.call_start": "<tool_call>"})``; a number selects an
        item of a list (``tools.pattern.arguments.0.parts``).  A value may be given in its JSON form (a
        dict for a part, a list for a tuple): it is checked exactly as :meth:`from_dict` checks a file.
        """
        spec = self
        for path, value in changes.items():
            spec = _replace_path(spec, path.split("."), value)
        return replace(spec, provenance=replace(spec.provenance, edited=True))

    def value_at(self, path: str) -> Any:
        """The value at a dotted path (as :meth:`with_edit` takes it; numbers index lists).  Pure.

        Raises:
            SpecError: the path names no field or item.
        """
        obj: Any = self
        for head in path.split("."):
            obj = _step_into(obj, head)
        return obj

    # ----------------------------------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, sort_keys=False) + (
            "\n" if indent is not None else ""
        )

    @classmethod
    def from_dict(cls, data: Any) -> FormatSpec:
        if not isinstance(data, dict):
            raise SpecError("spec: expected a JSON object")
        version = data.get("version", SPEC_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise SpecError(f"spec.version: expected an integer, got {version!r}")
        if version < 1:
            raise SpecError(f"spec.version: {version} is impossible (versions start at 1)")
        if version > SPEC_VERSION:
            raise SpecError(
                f"spec: version {version!r} is newer than this workbench understands ({SPEC_VERSION})"
            )
        check_spec_sizes(data)
        return _from_dict(cls, data, "spec")

    @classmethod
    def from_json(cls, text: str) -> FormatSpec:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}"
            raise SpecError(f"spec: not valid JSON ({exc.msg} at {where})") from None
        return cls.from_dict(data)


def _open_json_string(body: str) -> bool:
    """True when ``body`` (after a string's opening quote) holds no unescaped closing quote."""
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        if body[i] == '"':
            return False
        i += 1
    return True


# --- size limits: a spec is a shared file; every builder and parser is linear in it, not in what it holds ---
#: Characters of a marker, pattern literal, field name or value delimiter (the longest in the real templates
#: here: 43).  Parsers hold back partial markers and grammars spell each one out: a 1 MB marker used to end a
#: parse in MemoryError and keep grammar builders busy for minutes.
MAX_SPEC_TEXT = 256
#: Characters of a prompt fact (a generation prompt, a switch's effect: the longest here is 203).
MAX_PROMPT_TEXT = 4096
#: Items of one list (end markers, preserved tokens, a pattern's parts or argument variants, ...).
MAX_SPEC_ITEMS = 256
#: Values in the whole spec outside its provenance (a real one has about a hundred).
MAX_SPEC_VALUES = 20_000


def check_spec_sizes(data: dict[str, Any]) -> None:
    """Refuse, with one :class:`SpecError` naming the path, a spec (as decoded JSON) holding a string, a
    list or a number of values past the limits above.  The provenance is free-form (its validation report
    may be large) except its names, which exports write out; iterative, so depth cannot exhaust the stack."""
    stack: list[tuple[Any, str, int]] = []
    for key, value in data.items():
        if key == "provenance" and isinstance(value, dict):
            for name in ("template_name", "template_sha256", "workbench_version"):
                stack.append((value.get(name, ""), f"spec.provenance.{name}", MAX_PROMPT_TEXT))
        else:
            stack.append((value, f"spec.{key}", MAX_PROMPT_TEXT if key == "prompt" else MAX_SPEC_TEXT))
    values = 0
    while stack:
        node, path, longest = stack.pop()
        values += 1
        if values > MAX_SPEC_VALUES:
            raise SpecError(f"spec: more than {MAX_SPEC_VALUES:,} values (a real spec holds about a hundred)")
        if isinstance(node, str) and len(node) > longest:
            raise SpecError(
                f"{path}: {len(node):,} characters; a spec string here holds at most {longest:,} (real "
                "markers are under 50)"
            )
        if isinstance(node, (list, dict)) and len(node) > MAX_SPEC_ITEMS:
            raise SpecError(
                f"{path}: {len(node):,} items; a spec list or object holds at most {MAX_SPEC_ITEMS}"
            )
        if isinstance(node, list):
            stack.extend((v, f"{path}[{i}]", longest) for i, v in enumerate(node))
        elif isinstance(node, dict):
            stack.extend((v, f"{path}.{k}", longest) for k, v in node.items())


@cache
def _marker_field_defs() -> tuple[tuple[str, Field[Any]], ...]:
    """(dotted path, field) of every single-marker field, from the metadata of the spec's parts (read once:
    the parts' fields are fixed, and every parse and validation case asks)."""
    return tuple(
        (f"{part}.{f.name}", f)
        for part, cls in (("reasoning", ReasoningSpec), ("content", ContentSpec), ("tools", ToolsSpec))
        for f in fields(cls)
        if _is_marker(f)
    )


def to_plain(value: Any) -> Any:
    """Any spec value (a part, a call pattern, a tuple of variants, a marker) in its JSON form: what the spec
    file holds for it, and what :meth:`FormatSpec.with_edit` accepts back.  Pure."""
    return _to_dict(value)


def _to_dict(obj: Any) -> Any:
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: _to_dict(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, tuple):
        return [_to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _to_dict(v) for k, v in obj.items()}
    return obj


def _from_dict(cls: Any, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise SpecError(f"{where}: expected an object")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise SpecError(f"{where}: unknown field(s) {', '.join(unknown)}")
    kwargs: dict[str, Any] = {}
    enums = _enums_of(cls)
    defaults = cls()
    for name, value in data.items():
        path = f"{where}.{name}"
        default = getattr(defaults, name)
        if hasattr(default, "__dataclass_fields__"):
            kwargs[name] = _from_dict(type(default), value, path)
        elif known[name].metadata.get("item_type") is not None:
            item_type = known[name].metadata["item_type"]
            if not isinstance(value, list):
                raise SpecError(f"{path}: expected a list of objects")
            kwargs[name] = tuple(_from_dict(item_type, v, f"{path}[{i}]") for i, v in enumerate(value))
        elif isinstance(default, tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SpecError(f"{path}: expected a list of strings")
            kwargs[name] = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise SpecError(f"{path}: expected true or false")
            kwargs[name] = value
        elif isinstance(default, int):
            if not isinstance(value, int) or isinstance(value, bool):
                raise SpecError(f"{path}: expected an integer")
            kwargs[name] = value
        elif isinstance(default, str):
            if not isinstance(value, str):
                raise SpecError(f"{path}: expected a string")
            if name in enums and value not in enums[name]:
                raise SpecError(f"{path}: {value!r} is not one of {', '.join(enums[name])}")
            kwargs[name] = value
        else:  # free-form (validation report)
            if value is not None and not isinstance(value, dict):
                raise SpecError(f"{path}: expected an object or null")
            kwargs[name] = value
    return cls(**kwargs)


def _step_into(obj: Any, head: str) -> Any:
    """One step of a dotted path: a dataclass field, or (a number) an item of a tuple."""
    if isinstance(obj, tuple):
        if not head.isdigit() or int(head) >= len(obj):
            raise SpecError(f"spec: no item {head!r} (the list has {len(obj)})")
        return obj[int(head)]
    if not hasattr(obj, "__dataclass_fields__") or head not in obj.__dataclass_fields__:
        raise SpecError(f"spec: no field {head!r}")
    return getattr(obj, head)


def _replace_path(obj: Any, path: list[str], value: Any) -> Any:
    head, rest = path[0], path[1:]
    current = _step_into(obj, head)
    if isinstance(obj, tuple):
        i = int(head)
        if rest:
            item = _replace_path(current, rest, value)
        elif hasattr(current, "__dataclass_fields__"):
            item = _from_dict(type(current), _to_dict(value), head)
        elif isinstance(value, str):
            item = value
        else:
            raise SpecError(f"spec: item {head}: expected a string")
        return (*obj[:i], item, *obj[i + 1 :])
    if rest:
        return replace(obj, **{head: _replace_path(current, rest, value)})
    probe = _from_dict(type(obj), {head: _to_dict(value)}, head)
    return replace(obj, **{head: getattr(probe, head)})
