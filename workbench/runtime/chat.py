"""OpenAI-shaped chat data: messages, tool calls, tools, conversations.

These are the values that go *into* a template render and come *out of* a parse, so the same classes serve
both directions.  ``ToolCall.arguments`` is kept as JSON text (as in the OpenAI API) because streaming
builds it by concatenation and key order must survive; :meth:`ToolCall.arguments_value` decodes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.runtime.errors import WorkbenchError


class ChatDataError(WorkbenchError, ValueError):
    """Messages or tools JSON is not in the expected OpenAI shape."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:20]} is not a finite number")
    return value


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str = "{}"
    id: str = ""

    def arguments_value(self) -> Any:
        """The decoded arguments; the raw text when it is not strict JSON (e.g. a cut-off stream).

        Strict means what every JSON consumer accepts: no ``NaN``/``Infinity`` (nor numbers that overflow
        to them, ``1e999999``), integers Python can convert (4,300 digits), nesting within the recursion
        limit.  Anything else stays text, so the ``--json`` contract is always valid JSON.
        """
        try:
            return json.loads(self.arguments, parse_constant=_refuse_constant, parse_float=_finite_float)
        except (ValueError, TypeError, RecursionError):
            return self.arguments

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI request form (``function.arguments`` as a string), as templates expect it."""
        function = {"name": self.name, "arguments": self.arguments}
        out: dict[str, Any] = {"type": "function", "function": function}
        if self.id:
            out["id"] = self.id
        return out

    def to_contract(self) -> dict[str, Any]:
        """The CLI contract form: ``{"id", "name", "arguments"}`` with arguments as a JSON value."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments_value()}


def parse_contract(content: str | None, reasoning: str | None, calls: Iterable[Any]) -> dict[str, Any]:
    """The parse contract of ARCHITECTURE.md (without diagnostics) of a message: what a parser gives back
    for it, and what a round-trip case expects back; ``calls`` each have ``to_contract()``."""
    return {
        "content": content or "",
        "reasoning_content": reasoning or "",
        "tool_calls": [c.to_contract() for c in calls],
    }


@dataclass(frozen=True)
class Message:
    role: str
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.reasoning_content is not None:
            out["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            out["tool_calls"] = [c.to_openai() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    def to_contract(self) -> dict[str, Any]:
        """The parse contract of ARCHITECTURE.md (without diagnostics)."""
        return parse_contract(self.content, self.reasoning_content, self.tool_calls)

    @classmethod
    def from_openai(cls, data: Any, where: str = "message") -> Message:
        """A message from its OpenAI JSON form; a field of the wrong type is refused, named by its path."""
        if not isinstance(data, dict) or "role" not in data:
            raise ChatDataError(f"{where}: expected an object with a 'role'")
        role = _optional_str(data, "role", where)
        raw_calls = data.get("tool_calls")
        if raw_calls is None:
            raw_calls = []
        if not isinstance(raw_calls, list):
            raise ChatDataError(f"{where}.tool_calls: expected a list")
        calls = [_tool_call(raw, f"{where}.tool_calls[{i}]") for i, raw in enumerate(raw_calls)]
        content = data.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise ChatDataError(f"{where}.content: must be a string, a list of parts, or null")
        if isinstance(content, list):
            content = "".join(_part_text(part, f"{where}.content[{i}]") for i, part in enumerate(content))
        return cls(
            role=role or "",
            content=content,
            reasoning_content=_optional_str(data, "reasoning_content", where),
            tool_calls=tuple(calls),
            tool_call_id=_optional_str(data, "tool_call_id", where),
            name=_optional_str(data, "name", where),
        )


def _optional_str(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ChatDataError(f"{where}.{key}: expected a string, got {type(value).__name__}")
    return value


def _part_text(part: Any, where: str) -> str:
    """The text of one content part; parts without text (images) contribute nothing."""
    if not isinstance(part, dict):
        raise ChatDataError(f"{where}: expected an object")
    text = part.get("text", "")
    if not isinstance(text, str):
        raise ChatDataError(f"{where}.text: expected a string, got {type(text).__name__}")
    return text


def _tool_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, dict):
        raise ChatDataError(f"{where}: expected an object")
    fn = raw.get("function", raw)
    if not isinstance(fn, dict):
        raise ChatDataError(f"{where}.function: expected an object with 'name' and 'arguments'")
    name = fn.get("name", "")
    if not isinstance(name, str):
        raise ChatDataError(f"{where}.function.name: expected a string, got {type(name).__name__}")
    args = fn.get("arguments", {})
    if not isinstance(args, (str, dict, list)):
        raise ChatDataError(f"{where}.function.arguments: expected a JSON string or object")
    call_id = raw.get("id")
    if call_id is not None and not isinstance(call_id, (str, int)):
        raise ChatDataError(f"{where}.id: expected a string")
    return ToolCall(
        name=name,
        arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
        id=str(call_id or ""),
    )


@dataclass(frozen=True)
class Tool:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    @classmethod
    def from_openai(cls, data: Any, where: str = "tool") -> Tool:
        """A tool from its OpenAI JSON form; a field of the wrong type is refused, named by its path."""
        if not isinstance(data, dict):
            raise ChatDataError(f"{where}: expected an object")
        fn = data.get("function", data)
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ChatDataError(f"{where}: expected {{'type': 'function', 'function': {{'name': ...}}}}")
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(params, dict):
            raise ChatDataError(f"{where}.function.parameters: expected a JSON schema object")
        description = fn.get("description", "")
        if not isinstance(description, str):
            raise ChatDataError(f"{where}.function.description: expected a string")
        if len(fn["name"]) > MAX_LITERAL_CHARS:
            size = len(fn["name"])
            raise ChatDataError(f"{where}.function.name: {size:,} characters (at most {MAX_LITERAL_CHARS:,})")
        check_tool_schema(params, f"{where}.function.parameters")
        return cls(name=fn["name"], description=description, parameters=params)


# --- tool schemas: untrusted input, checked for shape and size before anything reads them ----------------
#: Nesting of a tool's schema (JSON objects and lists inside each other); real schemas stay under 20.
MAX_SCHEMA_DEPTH = 64
#: JSON values in one tool's schema (a real one has tens to hundreds).
MAX_SCHEMA_VALUES = 100_000
#: Characters of one ``const`` or ``enum`` value (as JSON): each becomes a literal of the grammar.
MAX_LITERAL_CHARS = 10_000

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = (
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
)


def check_tool_schema(schema: Any, where: str = "parameters") -> None:
    """Refuse, with one :class:`ChatDataError` naming the path, a tool schema whose structural keywords
    have the wrong shape (``properties`` a list, ``anyOf`` an object, ``required`` a string, ...), or which
    is nested deeper than :data:`MAX_SCHEMA_DEPTH`, holds more than :data:`MAX_SCHEMA_VALUES` values, or an
    ``enum``/``const`` value longer than :data:`MAX_LITERAL_CHARS`.

    Only the keywords the parser and the grammar read are checked: a sloppy value elsewhere (``"type":
    "float"`` in a real test suite) is not refused.  Iterative: a hostile schema cannot exhaust the stack.
    """
    stack: list[tuple[Any, str, int, bool]] = [(schema, where, 1, True)]  # value, path, depth, is a schema
    values = 0
    while stack:
        node, path, depth, is_schema = stack.pop()
        values += 1
        if values > MAX_SCHEMA_VALUES:
            raise ChatDataError(f"{where}: the schema holds more than {MAX_SCHEMA_VALUES:,} values")
        if depth > MAX_SCHEMA_DEPTH:
            raise ChatDataError(f"{path}: the schema nests more than {MAX_SCHEMA_DEPTH} levels deep")
        if is_schema and not isinstance(node, (dict, bool)):
            raise ChatDataError(f"{path}: expected a schema (an object), not {_kind(node)}")
        if isinstance(node, list):
            stack.extend((v, f"{path}[{i}]", depth + 1, False) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        if not is_schema:
            stack.extend((v, f"{path}.{k}", depth + 1, False) for k, v in node.items())
            continue
        for key, value in node.items():
            at = f"{path}.{key}"
            if key in _SCHEMA_MAPS:
                if not isinstance(value, dict):
                    raise ChatDataError(f"{at}: expected an object of schemas, not {_kind(value)}")
                stack.extend((v, f"{at}.{k}", depth + 2, True) for k, v in value.items())
            elif key in _SCHEMA_LISTS:
                if not isinstance(value, list):
                    raise ChatDataError(f"{at}: expected a list of schemas, not {_kind(value)}")
                stack.extend((v, f"{at}[{i}]", depth + 2, True) for i, v in enumerate(value))
            elif key in _SCHEMA_ONE or (key == "items" and not isinstance(value, list)):
                stack.append((value, at, depth + 1, True))
            elif key == "items":  # the older tuple form: a list of schemas
                stack.extend((v, f"{at}[{i}]", depth + 2, True) for i, v in enumerate(value))
            elif key == "required" and not isinstance(value, bool):  # draft 3 wrote true on the property
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ChatDataError(f"{at}: expected a list of property names")
            elif key == "type":
                if not (isinstance(value, str) or (isinstance(value, list) and _all_str(value))):
                    raise ChatDataError(f"{at}: expected a type name or a list of them, not {_kind(value)}")
            elif key in ("enum", "const"):
                if key == "enum" and not isinstance(value, list):
                    raise ChatDataError(f"{at}: expected a list of values, not {_kind(value)}")
                for i, literal in enumerate(value if key == "enum" else [value]):
                    _check_literal(literal, f"{at}[{i}]" if key == "enum" else at)
                stack.append((value, at, depth + 1, False))
            else:
                stack.append((value, at, depth + 1, False))


def _check_literal(value: Any, where: str) -> None:
    if isinstance(value, str):
        size = len(value)
    elif isinstance(value, (dict, list)):
        try:
            size = len(json.dumps(value))
        except (TypeError, ValueError, RecursionError):
            raise ChatDataError(f"{where}: not a JSON value that can be written") from None
    else:
        return
    if size > MAX_LITERAL_CHARS:
        raise ChatDataError(
            f"{where}: a value of {size:,} characters (at most {MAX_LITERAL_CHARS:,}: it becomes a literal "
            "of the output grammar)"
        )


def _all_str(items: list[Any]) -> bool:
    return all(isinstance(item, str) for item in items)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false"}.get(
        type(value), type(value).__name__
    )


def _json_list(data: Any, key: str) -> list[Any]:
    """``data`` as a list of ``key``: the list itself, or the ``key`` list of an object (a request body
    holds both ``messages`` and ``tools``, so either loader can be handed the whole request)."""
    if isinstance(data, dict) and key in data:
        data = data[key]
    if not isinstance(data, list):
        raise ChatDataError(f"{key}: expected a JSON list of {key}")
    return data


def load_messages(data: Any) -> list[Message]:
    """Messages from decoded JSON: a list, or an object with a ``messages`` list."""
    return [Message.from_openai(m, f"messages[{i}]") for i, m in enumerate(_json_list(data, "messages"))]


def load_tools(data: Any) -> list[Tool]:
    """Tools from decoded JSON: a list, or an object with a ``tools`` list."""
    return [Tool.from_openai(t, f"tools[{i}]") for i, t in enumerate(_json_list(data, "tools"))]
