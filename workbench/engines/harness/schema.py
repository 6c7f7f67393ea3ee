"""The harness's requests and answers: dataclasses <-> JSON, standard library only (both sides import it).

``to_json(obj)`` gives the JSON object (``None`` fields left out, so optional keys stay optional);
``from_json(cls, data)`` reads one back, checking every field's type and naming the path of the first one
that is wrong (:class:`SchemaError`), so a malformed request or answer fails at the boundary, in words.
Per-case results (messages, verdicts) are engine-specific JSON and stay ``dict``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

T = TypeVar("T")
#: ``{"content", "reasoning_content", "tool_calls": [{"id", "name", "arguments"}]}`` or ``{"error": ...}``.
Message = dict[str, Any]


class SchemaError(ValueError):
    """A request or answer that does not have the schema's shape; the message names the field."""


# --------------------------------------------------------------------------------------------- shared
@dataclass
class Case:
    """One round-trip case: the output a template rendered, the prompt's tail before it, the tools."""

    id: str
    output: str
    prefix: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] | None = None  # plug-in harness: the names of the calls the case expects
    content: bool | None = None  # plug-in harness: whether the case expects content
    content_input: str | None = None  # recommend harness: what serving hands the tool parser


@dataclass
class Result:
    """One consumer (or one way of loading a plug-in) on one job: did it load, and its per-case results."""

    accepted: bool
    reason: str = ""
    cases: list[dict[str, Any]] = field(default_factory=list)
    trace: str | None = None


# --------------------------------------------------------------------------------------------- response
@dataclass
class ResponseJob:
    """One response template and the cases its consumers parse."""

    key: str
    template: dict[str, Any]
    tokenizer: str
    cases: list[Case]
    consumers: list[str] | None = None  # this job's own consumers (None: the request's)


@dataclass
class ResponseRequest:
    consumers: list[str]
    jobs: list[ResponseJob]


@dataclass
class ResponseJobAnswer:
    key: str
    consumers: dict[str, Result]


@dataclass
class ResponseAnswer:
    versions: dict[str, str]
    jobs: list[ResponseJobAnswer]


# --------------------------------------------------------------------------------------------- plug-ins
@dataclass
class PluginJob:
    """One exported plug-in folder: where each engine's form of it is, and the cases it must parse back."""

    key: str
    parser: str
    tokenizer: str
    cases: list[Case]
    runners: list[str] | None = None  # only these runners (the tag runners run only when named)
    vllm: dict[str, Any] | None = None
    sglang: dict[str, Any] | None = None


@dataclass
class PluginRequest:
    engines: list[str]
    jobs: list[PluginJob]


@dataclass
class PluginJobAnswer:
    key: str
    engines: dict[str, Result]


@dataclass
class PluginAnswer:
    versions: dict[str, str]
    jobs: list[PluginJobAnswer]


# --------------------------------------------------------------------------------------------- recommend
@dataclass
class RecommendJob:
    """One template's cases for every built-in parser of one engine."""

    key: str
    tokenizer: str
    cases: list[Case]
    special_tokens: list[str] = field(default_factory=list)
    harmony: bool = False  # a gpt_oss model: served through the engines' Harmony paths
    only: list[str] | None = None  # this job's own parsers


@dataclass
class RecommendRequest:
    engine: str
    jobs: list[RecommendJob]
    only: list[str] | None = None


@dataclass
class RecommendAnswer:
    engine: str
    version: str
    jobs: list[dict[str, Any]]


# --------------------------------------------------------------------------------------------- JSON
def to_json(obj: Any) -> Any:
    """The JSON form of a schema object (``None`` fields omitted); other values as they are."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        values = ((f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj))
        return {name: to_json(v) for name, v in values if v is not None}
    if isinstance(obj, list):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    return obj


def from_json(cls: type[T], data: Any, path: str = "") -> T:
    """``data`` (parsed JSON) as a ``cls`` object.

    Raises:
        SchemaError: a missing or unknown field, or a value of the wrong type, named by its path.
    """
    out: T = _read(cls, data, path or cls.__name__)
    return out


def _read(tp: Any, data: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if data is None and type(None) in options:
            return None
        errors = []
        for option in (o for o in options if o is not type(None)):
            try:
                return _read(option, data, path)
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError(errors[0] if errors else f"{path}: unexpected {type(data).__name__}")
    if dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise SchemaError(f"{path}: expected an object, got {type(data).__name__}")
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise SchemaError(f"{path}: unknown field {unknown[0]!r}")
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = _read(hints[f.name], data[f.name], f"{path}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise SchemaError(f"{path}: missing field {f.name!r}")
        constructor: Any = tp
        return constructor(**kwargs)
    if origin is list:
        if not isinstance(data, list):
            raise SchemaError(f"{path}: expected a list, got {type(data).__name__}")
        (item,) = typing.get_args(tp)
        return [_read(item, v, f"{path}[{i}]") for i, v in enumerate(data)]
    if origin is dict:
        if not isinstance(data, dict):
            raise SchemaError(f"{path}: expected an object, got {type(data).__name__}")
        _key, value = typing.get_args(tp)
        return {k: _read(value, v, f"{path}.{k}") for k, v in data.items()}
    if tp is Any:
        return data
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if not isinstance(data, tp) or (tp is int and isinstance(data, bool)):
        raise SchemaError(f"{path}: expected {tp.__name__}, got {type(data).__name__}")
    return data
