"""Render chat templates exactly as ``transformers``' ``apply_chat_template(..., tokenize=False)`` does.

Same Jinja environment (``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``, loop
controls and the ``{% generation %}`` tag), same globals (``raise_exception``, ``strftime_now``), same
``tojson`` filter, and the same message preprocessing (reasoning copied into ``reasoning_content``,
``thinking`` and ``reasoning``).  Parity is pinned by tests that compare with transformers byte for byte.

Templates are untrusted code.  Besides the sandbox, every render runs against a deadline: the sandbox's
attribute/call hooks and each chunk of output check it, so a template that loops forever ends with a
:class:`TemplateError` instead of hanging the analyzer or the TUI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from workbench.chat import Message, Tool

DEFAULT_TIME_LIMIT = 2.0


class TemplateError(Exception):
    """A template failed to compile or render; ``line`` is the template line when known."""

    def __init__(self, message: str, *, line: int | None = None, kind: str = "render") -> None:
        self.line = line
        self.kind = kind
        self.detail = message
        where = f" (template line {line})" if line is not None else ""
        super().__init__(f"{message}{where}")


class RenderTimeout(TemplateError):
    """The render ran past its time limit (the template probably loops forever)."""


class _TemplateRaised(jinja2.exceptions.TemplateError):
    """``raise_exception(...)`` was called by the template itself."""


class _GenerationTag(Extension):
    """``{% generation %}...{% endgeneration %}``: renders its body unchanged, as transformers does when
    no assistant mask is requested."""

    tags = {"generation"}  # noqa: RUF012 - jinja API

    def parse(self, parser: jinja2.parser.Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Any) -> str:
        return caller()


class _DeadlineEnvironment(ImmutableSandboxedEnvironment):
    """The transformers sandbox plus a deadline checked on every attribute access and call."""

    deadline: float = float("inf")

    def _check(self) -> None:
        if time.monotonic() > self.deadline:
            raise RenderTimeout("render timed out (the template may loop forever)", kind="timeout")

    def getattr(self, obj: Any, attribute: str) -> Any:
        self._check()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        self._check()
        return super().getitem(obj, argument)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        __self._check()
        return super().call(__context, __obj, *args, **kwargs)


def _raise_exception(message: str) -> None:
    raise _TemplateRaised(message)


def _tojson(
    x: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class _TemplateDict:
    """``dict(...)`` for templates without exposing the ``dict`` type itself (as transformers)."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """``namespace(...)`` that refuses underscore attributes (CPython internals), as transformers."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - same signature trick as jinja's Namespace
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"namespace attribute {name!r} may not start with '_'")


def _make_environment() -> _DeadlineEnvironment:
    env = _DeadlineEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


@dataclass
class CompiledTemplate:
    """A template compiled once and rendered many times (the analyzer renders ~30 variants)."""

    source: str
    env: _DeadlineEnvironment
    template: jinja2.Template


@lru_cache(maxsize=64)
def compile_template(source: str) -> CompiledTemplate:
    """Compile (and cache) a template; syntax errors become :class:`TemplateError` with the line."""
    env = _make_environment()
    try:
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}", line=exc.lineno, kind="syntax") from None
    return CompiledTemplate(source=source, env=env, template=template)


def normalize_messages(messages: Sequence[Message | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped dicts as templates expect them, with reasoning aliased as transformers 5.x does.

    Key order matters (templates ``tojson`` whole messages): ``thinking`` goes first unless present,
    ``reasoning_content`` last unless present, exactly like transformers' ``_alias_reasoning_fields``.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        d = m.to_openai() if isinstance(m, Message) else _plain(m)
        reasoning = next((d[k] for k in REASONING_FIELDS if d.get(k) is not None), None)
        if reasoning is not None:
            d = {"thinking": reasoning, **d, "reasoning_content": reasoning}
        out.append(d)
    return out


REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def _plain(value: Any) -> Any:
    """A deep copy made of plain JSON types, so templates never see caller objects (or mutate them)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def normalize_tools(tools: Sequence[Tool | Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    return [t.to_openai() if isinstance(t, Tool) else _plain(t) for t in tools]


def render(
    source: str,
    messages: Sequence[Message | Mapping[str, Any]],
    *,
    tools: Sequence[Tool | Mapping[str, Any]] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool = False,
    time_limit: float = DEFAULT_TIME_LIMIT,
    **kwargs: Any,
) -> str:
    """Render ``messages`` through the template ``source``; extra kwargs (``enable_thinking``,
    ``reasoning_effort``, ``bos_token``, ...) are passed to the template as transformers does.

    Raises:
        TemplateError: syntax error, ``raise_exception``, undefined call, time-out, or any other failure;
            the message names the template line when it can be found.
    """
    compiled = compile_template(source)
    msgs = normalize_messages(messages)
    final = None
    if continue_final_message:
        final = _tag_final_message(msgs, source)
    context = dict(kwargs)
    context.update(
        messages=msgs,
        tools=normalize_tools(tools),
        documents=_plain(list(documents)) if documents is not None else None,
        add_generation_prompt=add_generation_prompt,
    )
    text = _render_with_deadline(compiled, context, time_limit)
    if final is not None:
        text = _cut_at_tag(text, final)
    return text


_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _render_with_deadline(compiled: CompiledTemplate, context: dict[str, Any], time_limit: float) -> str:
    env = compiled.env
    env.deadline = time.monotonic() + time_limit
    parts: list[str] = []
    try:
        for chunk in _generate(compiled.template, context):
            parts.append(chunk)
            if time.monotonic() > env.deadline:
                raise RenderTimeout("render timed out (the template may loop forever)", kind="timeout")
    except TemplateError as exc:
        if exc.line is None:
            exc.line = _template_line_of(exc)
            exc.args = (f"{exc.detail} (template line {exc.line})" if exc.line else exc.detail,)
        raise
    except _TemplateRaised as exc:
        raise TemplateError(f"template raised: {exc.message}", line=_template_line_of(exc), kind="raised") from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(f"unsafe operation blocked: {exc}", line=_template_line_of(exc), kind="security") from None
    except jinja2.exceptions.UndefinedError as exc:
        raise TemplateError(f"undefined value: {exc.message}", line=_template_line_of(exc), kind="undefined") from None
    except RecursionError:
        raise TemplateError("render recursed too deeply", kind="recursion") from None
    except Exception as exc:  # templates are untrusted: any failure becomes a TemplateError
        raise TemplateError(
            f"render failed: {type(exc).__name__}: {exc}", line=_template_line_of(exc), kind="render"
        ) from None
    finally:
        env.deadline = float("inf")
    return "".join(parts)


def _generate(template: jinja2.Template, context: dict[str, Any]) -> Iterator[str]:
    yield from template.generate(**context)


def _template_line_of(exc: BaseException) -> int | None:
    """The template line where ``exc`` was raised.

    Jinja rewrites tracebacks so that template frames carry the file name ``<template>`` and the template
    line number; raw compiled frames (not rewritten) are mapped with the template's debug info.
    """
    tb = exc.__traceback__
    line = None
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == "<template>":
            template = frame.f_globals.get("__jinja_template__")
            line = template.get_corresponding_lineno(tb.tb_lineno) if template is not None else tb.tb_lineno
        tb = tb.tb_next
    return line


def _tag_final_message(msgs: list[dict[str, Any]], source: str) -> str:
    """Mark the final message's text so the render can be cut right after it (transformers' method)."""
    if not msgs or msgs[-1].get("content") is None:
        raise TemplateError("continue_final_message needs a final message with content", kind="usage")
    if "content" not in source:
        raise TemplateError("continue_final_message: the template never reads message content", kind="usage")
    content = msgs[-1]["content"]
    if isinstance(content, list):
        for block in reversed(content):
            if isinstance(block, dict) and "text" in block:
                final = block["text"]
                block["text"] = final + _CONTINUE_TAG
                return str(final)
        raise TemplateError("continue_final_message: no text block in the final message", kind="usage")
    msgs[-1]["content"] = content + _CONTINUE_TAG
    return str(content)


def _cut_at_tag(text: str, final: str) -> str:
    tag = _CONTINUE_TAG.strip()
    if final.strip() not in text or tag not in text:
        raise TemplateError(
            "continue_final_message: the template dropped part of the final message", kind="usage"
        )
    loc = text.rindex(tag)
    if text[loc : loc + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return text[:loc]
    return text[:loc].rstrip()
