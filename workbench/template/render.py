"""Render chat templates exactly as ``transformers``' ``apply_chat_template(..., tokenize=False)`` does.

Same Jinja environment (``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``, loop
controls and the ``{% generation %}`` tag), same globals (``raise_exception``, ``strftime_now``, ``dict``,
``namespace``), same ``tojson`` filter, and the same input preprocessing: keys whose value is ``None`` are
dropped from every message, inputs are rebuilt from plain JSON types, and reasoning is copied into
``reasoning_content``, ``thinking`` and ``reasoning`` as transformers 5.x does.  Parity is pinned by
``tests/test_render_parity.py``, which compares with transformers byte for byte (docs/render-parity.md).

Templates are untrusted code.  Besides the sandbox, every render runs against a deadline that is checked
where a template can repeat work: at the start of every ``{% for %}`` loop and at every step of a long
one, and at the start of every macro, call block and recursive-loop body (checks inserted into the parsed
template before it is compiled).  So a template that loops forever, even with an empty loop body, ends
with a :class:`RenderTimeout` instead of hanging the analyzer or the TUI.  The one-step resource bombs that no
loop check can interrupt (``'x' * 10**10``, ``10 ** 10 ** 10``) are refused by size checks on ``*`` and
``**``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from workbench.chat import Message, Tool
from workbench.errors import WorkbenchError

DEFAULT_TIME_LIMIT = 2.0
# Largest str/list a single ``*`` may build, and largest integer (in bits) ``*`` or ``**`` may build.
MAX_REPEAT_ITEMS = 10_000_000
MAX_INT_BITS = 1 << 20
# Loops over at most this many items skip the per-item deadline check (see ``_loop_guard``).
SMALL_LOOP = 1000
_SIZED_TYPES = (list, tuple, dict, str, range)
_LOOP_GUARD = "__workbench_loop_guard"
_TICK = "__workbench_tick"


class TemplateError(WorkbenchError):
    """A template failed to compile or render.

    ``line`` is the template line when known, ``kind`` one of syntax | raised | undefined | security | limit
    | timeout | recursion | usage | render, ``detail`` the message without the line suffix.  ``str()`` is
    always a single line, because the CLI prints it as its one line on stderr.
    """

    def __init__(self, message: str, *, line: int | None = None, kind: str = "render") -> None:
        self.line = line
        self.kind = kind
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        flat = " ".join(str(self.detail).split())
        return f"{flat} (template line {self.line})" if self.line is not None else flat

    def with_line(self, line: int | None) -> TemplateError:
        """Fill in the line once the traceback has been walked (deadline errors are raised deep inside)."""
        if self.line is None and line is not None:
            self.line = line
            self.args = (self._format(),)
        return self


class RenderTimeout(TemplateError):
    """The render ran past its time limit (the template probably loops forever)."""


class _TemplateRaised(jinja2.exceptions.TemplateError):
    """``raise_exception(...)`` was called by the template itself."""


class _LimitExceeded(jinja2.exceptions.TemplateError):
    """An operation would build a value too large to be a chat prompt."""


# The deadline of the render running in this thread.  Thread-local because compiled templates (and their
# environment) are cached and shared, and the analyzer, the TUI and tests render from several threads.
_deadline = threading.local()
_NEVER = float("inf")


def _current_deadline() -> float:
    return getattr(_deadline, "at", _NEVER)


def _check_deadline() -> None:
    if time.monotonic() > getattr(_deadline, "at", _NEVER):
        raise RenderTimeout("render timed out (the template may loop forever)", kind="timeout")


class _GuardedIterable:
    """A loop's iterable that checks the render deadline at every step.

    Transparent to templates: ``len()`` is the underlying ``len()`` (a ``TypeError`` for unsized values,
    as before, so jinja's ``LoopContext`` behaves the same) and iteration yields the same items.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Any) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        deadline = _current_deadline()
        clock = time.monotonic
        for item in self._items:
            if clock() > deadline:
                raise RenderTimeout("render timed out (the template may loop forever)", kind="timeout")
            yield item


@jinja2.pass_context
def _tick(context: Any, _: Any) -> bool:
    """The deadline check placed at the top of every macro, call block and recursive loop body."""
    _check_deadline()
    return False


@jinja2.pass_context
def _loop_guard(context: Any, items: Any) -> Any:
    """Check the deadline as a loop starts; wrap the iterable only when the loop may be long.

    A loop over at most ``SMALL_LOOP`` items runs unchecked: its body can only do bounded work unless it
    starts another loop or makes a call, and both check the deadline.  So nested loops over small lists
    are still caught (each inner loop start checks), while the common case, a loop over a handful of
    messages, costs one clock read.  (``pass_context`` keeps the compiler from constant-folding the
    filter on literal lists.)
    """
    _check_deadline()
    if type(items) in _SIZED_TYPES and len(items) <= SMALL_LOOP:
        return items
    if isinstance(items, jinja2.Undefined):
        return items
    return _GuardedIterable(items)


class _GenerationTag(Extension):
    """``{% generation %}...{% endgeneration %}``: renders its body unchanged, as transformers does when
    no assistant mask is requested."""

    tags = {"generation"}  # noqa: RUF012 - jinja API

    def parse(self, parser: jinja2.parser.Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Any) -> str:
        return str(caller())


class _GuardedEnvironment(ImmutableSandboxedEnvironment):
    """The transformers sandbox plus size limits on ``*`` and ``**`` (the deadline lives in the AST)."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_binop_size(operator, left, right)
        return super().call_binop(context, operator, left, right)


def _check_binop_size(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``/``**`` results too large to build: C-level work that no deadline can interrupt."""
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "**":
        if ints and right > 0 and abs(left) > 1 and right * abs(left).bit_length() > MAX_INT_BITS:
            raise _LimitExceeded(f"'**' result too large ({left} ** {right})")
        return
    if ints:
        if abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
            raise _LimitExceeded("'*' result too large (integer of more than a million bits)")
        return
    for seq, count in ((left, right), (right, left)):
        if (
            isinstance(seq, (str, list, tuple))
            and isinstance(count, int)
            and len(seq) * count > MAX_REPEAT_ITEMS
        ):
            raise _LimitExceeded(
                f"'*' result too large ({len(seq) * count:,} items; limit {MAX_REPEAT_ITEMS:,})"
            )


def _raise_exception(message: str) -> None:
    raise _TemplateRaised(message)


def _tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: Any = None,
    sort_keys: bool = False,
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

    def __init__(*args: Any, **kwargs: Any) -> None:
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


def _make_environment() -> _GuardedEnvironment:
    env = _GuardedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, loopcontrols])
    env.filters["tojson"] = _tojson
    env.filters[_LOOP_GUARD] = _loop_guard
    env.filters[_TICK] = _tick
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


def _guard_template(ast: nodes.Template) -> nodes.Template:
    """Put the deadline checks into the parsed template, before it is compiled.

    A Jinja template can only repeat work through ``{% for %}`` loops and through calls of template code
    (macros, ``caller()`` of call blocks, ``loop(...)`` of recursive loops): every loop's iterable goes
    through ``_loop_guard`` and every such body starts with ``{% if None|_tick %}{% endif %}``.  Calls of
    Python callables (``str.strip``, filters) need no check: they cannot run template code.
    """
    for loop in ast.find_all(nodes.For):
        loop.iter = nodes.Filter(loop.iter, _LOOP_GUARD, [], [], None, None, lineno=loop.iter.lineno)
        if loop.recursive:
            loop.body.insert(0, _tick_node(loop.lineno))
    for body_owner in ast.find_all((nodes.Macro, nodes.CallBlock)):
        assert isinstance(body_owner, (nodes.Macro, nodes.CallBlock))
        body_owner.body.insert(0, _tick_node(body_owner.lineno))
    return ast


def _tick_node(lineno: int) -> nodes.Node:
    test = nodes.Filter(nodes.Const(None), _TICK, [], [], None, None, lineno=lineno)
    return nodes.If(test, [], [], [], lineno=lineno)


@dataclass
class CompiledTemplate:
    """A template compiled once and rendered many times (the analyzer renders ~30 variants)."""

    source: str
    env: ImmutableSandboxedEnvironment
    template: jinja2.Template


@lru_cache(maxsize=64)
def compile_template(source: str) -> CompiledTemplate:
    """Compile (and cache) a template; syntax errors become :class:`TemplateError` with the line."""
    env = _make_environment()
    try:
        ast = env.parse(source)
        template = env.from_string(_guard_template(ast))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}", line=exc.lineno, kind="syntax") from None
    except RecursionError:
        raise TemplateError("template nests too deeply to compile", kind="syntax") from None
    return CompiledTemplate(source=source, env=env, template=template)


REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def normalize_messages(messages: Sequence[Message | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped dicts exactly as transformers hands them to templates.

    Three steps, in transformers' order: keys whose value is ``None`` are dropped (so a tool-call message
    without text has no ``content`` key at all, and templates test ``is defined``); everything is rebuilt
    from plain JSON types; reasoning is aliased.  Key order matters (templates ``tojson`` whole messages):
    ``thinking`` goes first unless present, ``reasoning_content`` last unless present.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        raw = m.to_openai() if isinstance(m, Message) else m
        if not isinstance(raw, Mapping):
            raise TemplateError(f"each message must be an object, got {type(raw).__name__}", kind="usage")
        d = _plain({k: v for k, v in raw.items() if v is not None})
        reasoning = next((d[k] for k in REASONING_FIELDS if d.get(k) is not None), None)
        if reasoning is not None:
            d = {"thinking": reasoning, **d, "reasoning_content": reasoning}
        out.append(d)
    return out


def _plain(value: Any) -> Any:
    """A deep copy made of plain JSON types, so templates never see caller objects (or mutate them).

    Mirrors transformers' ``_plain_template_data``: subclasses of scalars are cut back to the base type,
    dataclasses become dicts, and anything else becomes an inert ``<TypeName>`` placeholder.
    """
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and type(value).__module__ == "numpy":
        return _plain(item())
    return f"<{type(value).__name__}>"


def normalize_tools(tools: Iterable[Tool | Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    return [_plain(t.to_openai() if isinstance(t, Tool) else t) for t in tools]


def render(
    source: str,
    messages: Sequence[Message | Mapping[str, Any]],
    *,
    tools: Sequence[Tool | Mapping[str, Any]] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    time_limit: float = DEFAULT_TIME_LIMIT,
    **kwargs: Any,
) -> str:
    """Render ``messages`` through the template ``source``, as ``apply_chat_template(tokenize=False)``.

    Extra kwargs (``enable_thinking``, ``reasoning_effort``, ``bos_token``, ...) are passed to the template
    as transformers does; transformers also passes the tokenizer's special tokens, which is what
    :meth:`TemplateSource.render_kwargs` supplies.  ``continue_final_message`` is ``True`` (continue the
    content) or the name of the field to continue (e.g. ``"reasoning_content"``).

    Raises:
        TemplateError: syntax error, ``raise_exception``, undefined call, time-out, oversized value, a
            usage error transformers also refuses (empty conversation, continue + generation prompt), or
            any other failure; the message names the template line when it can be found.
    """
    compiled = compile_template(source)
    if not messages:
        raise TemplateError("cannot render an empty conversation (give at least one message)", kind="usage")
    if continue_final_message and add_generation_prompt:
        raise TemplateError(
            "continue_final_message and add_generation_prompt cannot be used together", kind="usage"
        )
    msgs = normalize_messages(messages)
    continued = _tag_final_message(msgs, source, continue_final_message) if continue_final_message else None
    context = _plain(dict(kwargs))
    context.update(
        messages=msgs,
        tools=normalize_tools(tools),
        documents=_plain(list(documents)) if documents is not None else None,
        add_generation_prompt=add_generation_prompt,
    )
    text = _render_with_deadline(compiled, context, time_limit)
    if continued is not None:
        text = _cut_at_tag(text, continued)
    return text


_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _render_with_deadline(compiled: CompiledTemplate, context: dict[str, Any], time_limit: float) -> str:
    outer = getattr(_deadline, "at", None)
    _deadline.at = time.monotonic() + time_limit
    try:
        return compiled.template.render(**context)
    except TemplateError as exc:
        raise exc.with_line(_template_line_of(exc)) from None
    except _TemplateRaised as exc:
        raise TemplateError(
            f"template raised: {exc.message}", line=_template_line_of(exc), kind="raised"
        ) from None
    except _LimitExceeded as exc:
        raise TemplateError(f"refused: {exc.message}", line=_template_line_of(exc), kind="limit") from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(
            f"unsafe operation blocked: {exc}", line=_template_line_of(exc), kind="security"
        ) from None
    except jinja2.exceptions.UndefinedError as exc:
        raise TemplateError(
            f"undefined value: {exc.message}", line=_template_line_of(exc), kind="undefined"
        ) from None
    except RecursionError:
        raise TemplateError("render recursed too deeply", kind="recursion") from None
    except MemoryError:
        raise TemplateError("render ran out of memory", kind="limit") from None
    except Exception as exc:  # templates are untrusted: any failure becomes a TemplateError
        raise TemplateError(
            f"render failed: {type(exc).__name__}: {exc}", line=_template_line_of(exc), kind="render"
        ) from None
    finally:
        if outer is None:
            del _deadline.at
        else:
            _deadline.at = outer


def _template_line_of(exc: BaseException) -> int | None:
    """The template line where ``exc`` was raised.

    Jinja rewrites tracebacks so that template frames carry the file name ``<template>`` and the template
    line number; raw compiled frames (not rewritten) are mapped with the template's debug info.  The
    innermost template frame wins (a macro's line rather than the line that called the macro).
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


def _tag_final_message(msgs: list[dict[str, Any]], source: str, field: bool | str) -> str:
    """Mark the final message's text so the render can be cut right after it (transformers' method)."""
    name = field if isinstance(field, str) else "content"
    final = msgs[-1].get(name)
    if final is None:
        raise TemplateError(
            f"continue_final_message: the final message has no {name!r} to continue", kind="usage"
        )
    fields = [name]
    if name in REASONING_FIELDS:  # reasoning is copied under several names: tag every copy
        fields = [f for f in REASONING_FIELDS if msgs[-1].get(f) == final]
    if not any(f in source for f in fields):
        raise TemplateError(f"continue_final_message: the template never reads {name!r}", kind="usage")
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if isinstance(block, dict) and "text" in block:
                text = str(block["text"])
                block["text"] = text + _CONTINUE_TAG
                return text
        raise TemplateError("continue_final_message: no text block in the final message", kind="usage")
    for f in fields:
        msgs[-1][f] = msgs[-1][f] + _CONTINUE_TAG
    return str(final)


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
