"""OpenAI-shaped chat data: messages, tool calls, tools, conversations.

These are the values that go *into* a template render and come *out of* a parse, so the same classes serve
both directions.  ``ToolCall.arguments`` is kept as JSON text (as in the OpenAI API) because streaming
builds it by concatenation and key order must survive; :meth:`ToolCall.arguments_value` decodes it.
"""

from __future__ import annotations

import json
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
        return {
            "content": self.content or "",
            "reasoning_content": self.reasoning_content or "",
            "tool_calls": [c.to_contract() for c in self.tool_calls],
        }

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
        return cls(name=fn["name"], description=description, parameters=params)


def load_messages(data: Any) -> list[Message]:
    """Messages from decoded JSON: a list, or an object with a ``messages`` list."""
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    if not isinstance(data, list):
        raise ChatDataError("messages: expected a JSON list of messages")
    return [Message.from_openai(m, f"messages[{i}]") for i, m in enumerate(data)]


def load_tools(data: Any) -> list[Tool]:
    """Tools from decoded JSON: a list, or an object with a ``tools`` list."""
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise ChatDataError("tools: expected a JSON list of tools")
    return [Tool.from_openai(t, f"tools[{i}]") for i, t in enumerate(data)]
