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
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from workbench.errors import WorkbenchError

SPEC_VERSION = 1

REASONING_MODES = ("none", "tag_based", "delimiter", "forced_open", "forced_closed", "tools_only")
CONTENT_MODES = ("plain", "always_wrapped", "wrapped_with_reasoning")
TOOL_FORMATS = (
    "none",
    "json_native",
    "tag_with_json",
    "tag_with_tagged",
    # Dedicated kinds: formats the differential diffs cannot express.
    "harmony",  # gpt-oss / OpenChatML channels
    "pythonic",  # [f(a=1), g()]  (Llama 3.2, LFM2)
    "recipient",  # functionary v3.2: ">>>name\n{json}"
)
ID_POSITIONS = ("none", "pre_func_name", "between_func_and_args", "post_args")


class SpecError(WorkbenchError, ValueError):
    """A spec (or its JSON) is malformed; the message names the field."""


@dataclass(frozen=True)
class ReasoningSpec:
    """How reasoning is delimited in the assistant output."""

    mode: str = "none"
    start: str = ""
    end: str = ""

    _enums: ClassVar[dict[str, tuple[str, ...]]] = {"mode": REASONING_MODES}


@dataclass(frozen=True)
class ContentSpec:
    """Markers that wrap the visible answer, if any (e.g. Granite's ``<response>``)."""

    mode: str = "plain"
    start: str = ""
    end: str = ""

    _enums: ClassVar[dict[str, tuple[str, ...]]] = {"mode": CONTENT_MODES}


@dataclass(frozen=True)
class ToolsSpec:
    """Everything needed to find and decode tool calls in model output.

    Markers that a format does not use stay empty strings.  ``parameter_order`` lists the JSON fields of a
    call object in the order the template writes them (e.g. ``("name", "arguments")``).
    """

    format: str = "none"
    # Section and per-call wrappers.
    section_start: str = ""
    section_end: str = ""
    call_start: str = ""
    call_end: str = ""
    call_separator: str = ""
    # Function name and arguments container.
    name_prefix: str = ""
    name_suffix: str = ""
    func_close: str = ""
    args_start: str = ""
    args_end: str = ""
    # Tagged arguments (tag_with_tagged).
    arg_name_prefix: str = ""
    arg_name_suffix: str = ""
    arg_value_prefix: str = ""
    arg_value_suffix: str = ""
    arg_separator: str = ""
    # Call ids outside JSON.
    id_position: str = "none"
    id_prefix: str = ""
    id_suffix: str = ""
    # JSON field names (json_native).
    name_field: str = "name"
    args_field: str = "arguments"
    id_field: str = ""
    gen_id_field: str = ""
    function_field: str = ""
    fun_name_is_key: bool = False
    array_wrapped: bool = False
    parameter_order: tuple[str, ...] = ()
    # Special wrappers.
    code_block_marker: str = ""
    code_block_language: str = ""
    function_namespace: str = ""
    args_python_dict: bool = False
    # Capabilities.
    parallel: bool = False

    _enums: ClassVar[dict[str, tuple[str, ...]]] = {"format": TOOL_FORMATS, "id_position": ID_POSITIONS}

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
    preserved_tokens: tuple[str, ...] = ()
    bos_token: str = ""
    eos_token: str = ""
    end_markers: tuple[str, ...] = ()
    provenance: Provenance = field(default_factory=Provenance)
    version: int = SPEC_VERSION

    # ----------------------------------------------------------------------------------------- helpers
    def all_markers(self) -> tuple[str, ...]:
        """Every non-empty marker string the spec names, longest first (used to hold back partial text)."""
        found: set[str] = set()
        for part in (self.reasoning, self.content, self.tools):
            for f in fields(part):
                value = getattr(part, f.name)
                if isinstance(value, str) and value and f.name not in _NON_MARKER_FIELDS:
                    found.add(value)
        found.update(m for m in self.end_markers if m)
        return tuple(sorted(found, key=lambda s: (-len(s), s)))

    def with_edit(self, **changes: Any) -> FormatSpec:
        """Return a copy with changes applied to nested parts, flagged as edited by a person.

        Keys are dotted paths: ``spec.with_edit(**{"tools.call_start": "<tool_call>"})``.
        """
        spec = self
        for path, value in changes.items():
            spec = _replace_path(spec, path.split("."), value)
        return replace(spec, provenance=replace(spec.provenance, edited=True))

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
        if not isinstance(version, int) or version > SPEC_VERSION:
            raise SpecError(
                f"spec: version {version!r} is newer than this workbench understands ({SPEC_VERSION})"
            )
        return _from_dict(cls, data, "spec")

    @classmethod
    def from_json(cls, text: str) -> FormatSpec:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}"
            raise SpecError(f"spec: not valid JSON ({exc.msg} at {where})") from None
        return cls.from_dict(data)


_NON_MARKER_FIELDS = frozenset(
    {
        "mode",
        "format",
        "id_position",
        "name_field",
        "args_field",
        "id_field",
        "gen_id_field",
        "function_field",
        "code_block_language",
        "function_namespace",
    }
)


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
    enums: dict[str, tuple[str, ...]] = getattr(cls, "_enums", {})
    defaults = cls()
    for name, value in data.items():
        path = f"{where}.{name}"
        default = getattr(defaults, name)
        if hasattr(default, "__dataclass_fields__"):
            kwargs[name] = _from_dict(type(default), value, path)
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


def _replace_path(obj: Any, path: list[str], value: Any) -> Any:
    head, rest = path[0], path[1:]
    if not hasattr(obj, "__dataclass_fields__") or head not in obj.__dataclass_fields__:
        raise SpecError(f"spec: no field {head!r}")
    if rest:
        return replace(obj, **{head: _replace_path(getattr(obj, head), rest, value)})
    probe = _from_dict(type(obj), {head: list(value) if isinstance(value, tuple) else value}, head)
    return replace(obj, **{head: getattr(probe, head)})
