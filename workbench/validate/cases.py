"""The round-trip cases: synthesized assistant messages, one per feature the spec may describe.

The cases are built from the spec alone (:func:`build_cases`), so the same list serves validation, the
recorded re-check and every export target that proves itself on the cases.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from workbench.runtime.chat import Tool, parse_contract
from workbench.runtime.spec import FormatSpec

FEATURES: dict[str, str] = {
    "content": "a plain answer",
    "reasoning": "reasoning before the answer",
    "tool_call": "one tool call",
    "content_with_call": "answer text before a tool call",
    "reasoning_with_call": "reasoning before a tool call",
    "parallel_calls": "two calls in one message",
    "string_escapes": "argument strings with newlines, quotes, backslashes, tabs and unicode",
    "marker_text": "argument strings that look like markup or like the format's own markers",
    "scalars": "integer, negative and fractional numbers, booleans and null as arguments",
    "nested": "nested objects and arrays as arguments",
    "call_ids": "call ids, where the format carries them",
    "null_values": "null as an argument, for a parameter typed integer or null",
    "any_of_schemas": "arguments whose schema is an `anyOf` instead of a `type`",
    "untyped_schemas": "an argument whose schema has no `type`",
    "nested_schemas": "an argument whose schema is a nested object with its own properties",
    "enum_schemas": "arguments whose schema is an `enum` (one without `type`)",
}


def _tool(name: str, description: str, properties: dict[str, Any]) -> Tool:
    """A tool whose parameters all carry a description (some templates print it unconditionally)."""
    props = {
        key: {**schema, "description": f"The {key.replace('_', ' ')}."} for key, schema in properties.items()
    }
    return Tool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": props, "required": list(props)},
    )


@dataclass(frozen=True)
class ToolSet:
    """Tool definitions a case is rendered with, and the words that name them when the template raises.

    The plain set comes first and decides the verdict: typed parameters only (``string`` with and without
    an ``enum``, ``integer``, ``number``, ``boolean``, ``object``, ``array``), what every template that
    renders tools should accept.  The harder sets each add one schema shape real tools use (``anyOf``, no
    ``type``, a nested object, an ``enum`` without ``type``, a parameter typed null); a template that raises
    on one gets that named as the reason (``describes``: "the template raises on a parameter without
    `type`") and the plain set still gives the verdict.
    """

    name: str
    describes: str
    tools: tuple[Tool, ...]

    def to_openai(self) -> list[dict[str, Any]]:
        return [t.to_openai() for t in self.tools]


PLAIN_TOOLS = ToolSet(
    "plain",
    "the plain typed tool definitions",
    (
        _tool(
            "get_weather",
            "Current weather for a city.",
            {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        ),
        _tool("get_time", "Current time in a time zone.", {"timezone": {"type": "string"}}),
        _tool(
            "save_note",
            "Save a note.",
            {"title": {"type": "string"}, "body": {"type": "string"}, "lang": {"type": "string"}},
        ),
        _tool(
            "set_values",
            "Set typed values.",
            {
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "zero": {"type": "integer"},
                "enabled": {"type": "boolean"},
                "disabled": {"type": "boolean"},
            },
        ),
        _tool(
            "configure",
            "Apply a nested configuration.",
            # Explicit `additionalProperties`/`items`: Command R+'s template reads them unconditionally.
            {
                "options": {"type": "object", "additionalProperties": {}},
                "items": {"type": "array", "items": {}},
            },
        ),
    ),
)

#: The harder schema shapes, one tool each (and one case each, after the plain cases).
HARDER_TOOLS: tuple[ToolSet, ...] = (
    ToolSet(
        "null",
        "a parameter typed null",
        (
            # integer or null, not string or null: a template that writes null as `None` (Jinja's print)
            # makes "None" a string as well, and no reader could tell the two apart.
            _tool(
                "set_optional",
                "Set an optional value.",
                {"label": {"type": "string"}, "nothing": {"type": ["integer", "null"]}},
            ),
        ),
    ),
    ToolSet(
        "any_of",
        "a parameter whose schema is an `anyOf`",
        (
            _tool(
                "lookup",
                "Look something up.",
                {
                    "query": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                    "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                },
            ),
        ),
    ),
    ToolSet(
        "untyped",
        "a parameter without `type`",
        (_tool("echo", "Echo a payload.", {"payload": {}}),),
    ),
    ToolSet(
        "nested",
        "a nested object parameter with its own properties",
        (
            _tool(
                "create_event",
                "Create an event.",
                {
                    "event": {
                        "type": "object",
                        "properties": {
                            "title": {"type": "string"},
                            "when": {
                                "type": "object",
                                "properties": {
                                    "day": {"type": "integer"},
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                },
                                "required": ["day", "tags"],
                            },
                        },
                        "required": ["title", "when"],
                    }
                },
            ),
        ),
    ),
    ToolSet(
        "enum",
        "an `enum` parameter without `type`",
        (
            _tool(
                "set_mode",
                "Set a mode.",
                {"mode": {"enum": ["fast", "slow"]}, "level": {"type": "integer", "enum": [1, 2, 3]}},
            ),
        ),
    ),
)

TOOL_SETS: dict[str, ToolSet] = {s.name: s for s in (PLAIN_TOOLS, *HARDER_TOOLS)}

#: Every tool of every set: what the cases' outputs are parsed with, and what exports prove them with
#: (tool names are unique across the sets, so a call's schema is always its own set's).
ROUND_TRIP_TOOLS: tuple[Tool, ...] = tuple(t for s in TOOL_SETS.values() for t in s.tools)

USER_TURN: dict[str, Any] = {"role": "user", "content": "Please help me with this task."}

# Call ids: nine alphanumerics, the strictest shape a shared template demands (Mistral's).
_IDS = ("Ab3dE5gH7", "Zy9xW8vU7")


@dataclass(frozen=True)
class CallInput:
    """A tool call as the case writes it into the conversation (arguments as a JSON object)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""

    def to_contract(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class Case:
    """One synthesized assistant message and the features it exercises."""

    id: str
    features: tuple[str, ...]
    description: str
    content: str | None = None
    reasoning: str | None = None
    calls: tuple[CallInput, ...] = ()
    tool_set: str = "plain"  # the key of :data:`TOOL_SETS` the case is rendered with

    @property
    def tools(self) -> ToolSet:
        return TOOL_SETS[self.tool_set]

    def message(self, *, string_arguments: bool, empty_content: bool = False) -> dict[str, Any]:
        """The OpenAI-shaped assistant message; arguments as a mapping (what most templates iterate) or as
        JSON text (what templates that concatenate strings need); missing content as null (the API form)
        or as ``""`` (for templates that apply string operations to it)."""
        content = "" if self.content is None and empty_content else self.content
        out: dict[str, Any] = {"role": "assistant", "content": content}
        if self.reasoning is not None:
            out["reasoning_content"] = self.reasoning
        if self.calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": json.dumps(c.arguments, ensure_ascii=False)
                        if string_arguments
                        else json.loads(json.dumps(c.arguments)),
                    },
                }
                for c in self.calls
            ]
        return out

    def expected(self) -> dict[str, Any]:
        """The parse contract the parser must give back."""
        return parse_contract(self.content, self.reasoning, self.calls)


def _own_marker_text(spec: FormatSpec, turn_end: str = "") -> str:
    """A string made of the spec's own multi-character markers: a parser that scans for markers without
    knowing it is inside a JSON string (or a value) gets this wrong."""
    # Markers holding an end-of-turn marker are left out: a model emitting one stops, so no argument can
    # hold it.  So are those holding the text the template ends a turn with (``turn_end``, read off a
    # render when the spec names no end marker): validation cuts the output there, as a server stops.
    ends = (*spec.end_markers, spec.eos_token, spec.bos_token, turn_end)
    stops = {m.strip() for m in ends if m.strip()}
    markers = [
        m
        for m in spec.all_markers()
        if len(m.strip()) >= 3 and not m.strip().isalnum() and not any(stop in m for stop in stops)
    ]
    return (
        "keep " + " | ".join(sorted({m.strip() for m in markers})[:8]) if markers else "keep </end> <start>"
    )


#: One case per harder tool set (:data:`HARDER_TOOLS`); values whose reading back does not depend on a
#: policy (an untyped raw value is read as a string, so the untyped case passes a string).
HARDER_CASES: tuple[Case, ...] = (
    Case(
        "null_argument",
        ("null_values",),
        "null for a parameter typed integer or null",
        calls=(CallInput("set_optional", {"label": "draft", "nothing": None}, _IDS[0]),),
        tool_set="null",
    ),
    Case(
        "any_of_arguments",
        ("any_of_schemas",),
        "values for `anyOf` parameters",
        calls=(CallInput("lookup", {"query": "cats and dogs", "limit": 5}, _IDS[0]),),
        tool_set="any_of",
    ),
    Case(
        "untyped_argument",
        ("untyped_schemas",),
        "a value for a parameter without `type`",
        calls=(CallInput("echo", {"payload": "hello world"}, _IDS[0]),),
        tool_set="untyped",
    ),
    Case(
        "nested_schema_arguments",
        ("nested_schemas",),
        "a nested object whose schema has its own properties",
        calls=(
            CallInput(
                "create_event",
                {"event": {"title": "Launch", "when": {"day": 3, "tags": ["a", "b"]}}},
                _IDS[0],
            ),
        ),
        tool_set="nested",
    ),
    Case(
        "enum_arguments",
        ("enum_schemas",),
        "values for `enum` parameters",
        calls=(CallInput("set_mode", {"mode": "fast", "level": 2}, _IDS[0]),),
        tool_set="enum",
    ),
)


def build_cases(spec: FormatSpec, turn_end: str = "") -> tuple[Case, ...]:
    """The round-trip cases for ``spec`` (the marker case quotes the spec's own markers, but none holding
    ``turn_end``, the text the template ends a turn with)."""
    weather = CallInput("get_weather", {"city": "Paris", "unit": "celsius"}, _IDS[0])
    return (
        Case("content_only", ("content",), "a plain answer", content="The capital of France is Paris."),
        Case(
            "reasoning_content",
            ("reasoning",),
            "reasoning, then the answer",
            content="It is 42.",
            reasoning="The user asks a question.\nI should answer with the number.",
        ),
        Case("one_call", ("tool_call",), "a single call, no text", calls=(weather,)),
        Case(
            "content_and_call",
            ("content_with_call",),
            "text, then a call",
            content="Let me check the weather.",
            calls=(weather,),
        ),
        Case(
            "reasoning_and_call",
            ("reasoning_with_call",),
            "reasoning, then a call",
            reasoning="The user wants the weather, so I call the tool.",
            calls=(weather,),
        ),
        Case(
            "parallel_calls",
            ("parallel_calls",),
            "two different calls in one message",
            calls=(weather, CallInput("get_time", {"timezone": "Europe/Paris"}, _IDS[1])),
        ),
        Case(
            "string_arguments",
            ("string_escapes",),
            "strings with newlines, quotes, backslashes, tabs and unicode",
            calls=(
                CallInput(
                    "save_note",
                    {
                        "title": "Line one\nLine two\n\nLine four",
                        "body": "He said \"hi\" \\ then left\ttab 'single'",
                        "lang": "日本語 — ünïcödé 🙂 ∑",
                    },
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "markup_arguments",
            ("marker_text",),
            "strings that look like markup and markers",
            calls=(
                CallInput(
                    "save_note",
                    {
                        "title": '<b>bold</b> [x] {"k": 1} <|fake|> </tag>',
                        "body": "a > b < c & d",
                        "lang": "[/INST]",
                    },
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "own_marker_arguments",
            ("marker_text",),
            "a string holding the format's own markers",
            calls=(
                CallInput(
                    "save_note",
                    {"title": "t", "body": _own_marker_text(spec, turn_end), "lang": "en"},
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "scalar_arguments",
            ("scalars",),
            "numbers and booleans",
            calls=(
                CallInput(
                    "set_values",
                    {"count": 42, "ratio": -3.25, "zero": 0, "enabled": True, "disabled": False},
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "nested_arguments",
            ("nested",),
            "nested objects and arrays",
            calls=(
                CallInput(
                    "configure",
                    {
                        "options": {
                            "depth": 2,
                            "flags": [True, None],
                            "inner": {"name": "x", "list": [1, 2.5, "s"]},
                        },
                        "items": [{"a": 1}, [], {}, "text"],
                    },
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "call_ids",
            ("call_ids",),
            "a call whose id must come back",
            calls=(CallInput("get_time", {"timezone": "UTC"}, _IDS[1]),),
        ),
        *HARDER_CASES,
    )
