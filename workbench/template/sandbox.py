"""The sandboxed Jinja environment, its guards, and the in-process compile and render.

Same environment as transformers (``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``,
loop controls and the ``{% generation %}`` tag; globals ``raise_exception``, ``strftime_now``, ``dict``,
``namespace``; the same ``tojson``), plus guards that never change the output of a template that finishes:

* a **deadline**, checked where a template repeats work: at the start of every ``{% for %}`` loop and at
  every step of a long one, and at the start of every macro, call block and recursive-loop body (checks
  inserted into the parsed template before it is compiled);
* **size guards** on the one-step operations no deadline check can interrupt because they run in C:
  ``*`` and ``**``, ``+`` and ``~`` (string doubling), ``%`` and ``str.format`` widths, ``str.center``/
  ``ljust``/``rjust``/``zfill``/``expandtabs``/``replace``/``join``, and the filters and globals that
  take or build many items (``sort``, ``groupby``, ``map``, ``batch``, ``wordwrap``, ``lipsum``, ...).

These guards are the first line.  The guarantee is the render worker (:mod:`workbench.template.worker`):
it runs this module in a separate process under a memory cap and a wall-clock deadline it cannot escape.
"""

from __future__ import annotations

import functools
import json
import math
import re
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, cast

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from workbench.template import limits
from workbench.template.errors import (
    RenderLimitExceeded,
    RenderMemoryLimit,
    RenderOutputTooLarge,
    RenderTimeout,
    TemplateError,
)

# Loops over at most this many items skip the per-item deadline check (see ``_loop_guard``).
SMALL_LOOP = 1000
_SIZED_TYPES = (list, tuple, dict, str, range)
_LOOP_GUARD = "__workbench_loop_guard"
_TICK = "__workbench_tick"
_SIZE_GUARD = "__workbench_size_guard"


class _TemplateRaised(jinja2.exceptions.TemplateError):
    """``raise_exception(...)`` was called by the template itself."""


class _LimitExceeded(jinja2.exceptions.TemplateError):
    """An operation would build a value too large to be a chat prompt."""


# The deadline (and frozen clock) of the render running in this thread.  Thread-local because compiled
# templates (and their environment) are cached and shared, and callers render from several threads.
_state = threading.local()
_NEVER = float("inf")


def _current_deadline() -> float:
    return getattr(_state, "at", _NEVER)


def _check_deadline() -> None:
    if time.monotonic() > getattr(_state, "at", _NEVER):
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


def _size_guard(value: Any) -> Any:
    """Refuse a ``~`` result or a ``{% set %}`` value that outgrew the size limit (stops doubling)."""
    if type(value) in (str, list, tuple) and len(value) > limits.MAX_STRING_ITEMS:
        raise _LimitExceeded(f"value too large ({len(value):,} items; limit {limits.MAX_STRING_ITEMS:,})")
    return value


# ------------------------------------------------------------------------------------------ size checks
def _refuse_size(what: str, size: int, limit: int, unit: str = "items") -> None:
    if size > limit:
        raise _LimitExceeded(f"{what} result too large ({size:,} {unit}; limit {limit:,})")


def _check_binop_size(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``/``**``/``+``/``%`` results too large to build: C-level work no deadline can interrupt."""
    if operator == "%":
        if isinstance(left, str):
            _check_percent_format(left, right)
        return
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "+":
        if not ints and isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
            _refuse_size("'+'", len(left) + len(right), limits.MAX_STRING_ITEMS)
        return
    if operator == "**":
        if ints and right > 0 and abs(left) > 1 and right * abs(left).bit_length() > limits.MAX_INT_BITS:
            raise _LimitExceeded(f"'**' result too large ({left} ** {right})")
        return
    if ints:
        if abs(left).bit_length() + abs(right).bit_length() > limits.MAX_INT_BITS:
            raise _LimitExceeded("'*' result too large (integer of more than a million bits)")
        return
    for seq, count in ((left, right), (right, left)):
        if (
            isinstance(seq, (str, list, tuple))
            and isinstance(count, int)
            and len(seq) * count > limits.MAX_REPEAT_ITEMS
        ):
            raise _LimitExceeded(
                f"'*' result too large ({len(seq) * count:,} items; limit {limits.MAX_REPEAT_ITEMS:,})"
            )


# A printf-style conversion: flags, width (digits or *), precision (digits or *).
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([a-zA-Z%])")
# A str.format replacement field's spec: the numbers after ':' (width, precision).
_FORMAT_NUMBER = re.compile(r"\d+")


def _check_percent_format(fmt: str, args: Any) -> None:
    """Refuse ``'%0999999999d' % 1`` and ``'%*d' % (10**9, 1)``: one C call building a gigabyte."""
    if "%" not in fmt:
        return
    star = False
    for m in _PERCENT_SPEC.finditer(fmt):
        for number in (m.group(1), m.group(2)):
            if number == "*":
                star = True
            elif number and (len(number) > 9 or int(number) > limits.MAX_FORMAT_WIDTH):
                raise _LimitExceeded(
                    f"'%' format width too large ({number}; limit {limits.MAX_FORMAT_WIDTH:,})"
                )
    if star:
        values = args if isinstance(args, tuple) else (args,)
        for v in values:
            if isinstance(v, int) and abs(v) > limits.MAX_FORMAT_WIDTH:
                raise _LimitExceeded(f"'%' format width too large ({v}; limit {limits.MAX_FORMAT_WIDTH:,})")


def _check_format_string(fmt: str) -> None:
    """Refuse ``'{:>999999999}'.format(x)``: the width in a replacement field's spec."""
    for field in fmt.split("{")[1:]:
        spec = field.split("}", 1)[0]
        if ":" not in spec:
            continue
        for number in _FORMAT_NUMBER.findall(spec.split(":", 1)[1]):
            if len(number) > 9 or int(number) > limits.MAX_FORMAT_WIDTH:
                raise _LimitExceeded(f"format width too large ({number}; limit {limits.MAX_FORMAT_WIDTH:,})")


def _width(value: Any) -> int:
    """A width or count argument as an int (0 for anything that is not a finite number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if math.isfinite(value) else 0


def _check_str_method(name: str, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Pre-check the str methods whose one C call can build a huge string."""
    if name in ("format", "format_map"):
        _check_format_string(text)
    elif name in ("center", "ljust", "rjust", "zfill"):
        width = _width(args[0] if args else kwargs.get("width", 0))
        _refuse_size(f"str.{name}", width, limits.MAX_STRING_ITEMS, "characters")
    elif name == "expandtabs":
        size = _width(args[0] if args else kwargs.get("tabsize", 8))
        _refuse_size(
            "str.expandtabs", len(text) + text.count("\t") * size, limits.MAX_STRING_ITEMS, "characters"
        )
    elif name == "replace" and len(args) >= 2:
        _check_replace(text, args[0], args[1], args[2] if len(args) > 2 else -1)
    elif name == "join" and args and hasattr(args[0], "__len__"):
        _refuse_size("str.join", len(text) * len(args[0]), limits.MAX_STRING_ITEMS, "characters")


def _check_replace(text: Any, old: Any, new: Any, count: Any) -> None:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)) or len(new) <= len(old):
        return
    hits = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    _refuse_size("replace", len(text) + hits * (len(new) - len(old)), limits.MAX_STRING_ITEMS, "characters")


_GUARDED_STR_METHODS = frozenset(
    {"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "format", "format_map"}
)


# ----------------------------------------------------------------------------------- filters and globals
def _sized(value: Any, what: str) -> None:
    if (
        isinstance(value, (str, list, tuple, dict, set, frozenset, range))
        and len(value) > limits.MAX_FILTER_ITEMS
    ):
        raise _LimitExceeded(
            f"'{what}' input too large ({len(value):,} items; limit {limits.MAX_FILTER_ITEMS:,})"
        )


def _cap_items(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """Wrap a collection filter so its input may hold at most ``MAX_FILTER_ITEMS`` items.

    Inputs of unknown size (generators) come from other filters, which are capped themselves.  The
    wrapper keeps jinja's ``pass_context``/``pass_environment`` marker, so the call is unchanged.
    """
    index = 0 if getattr(fn, "jinja_pass_arg", None) is None else 1

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if len(args) > index:
            _sized(args[index], name)
        return fn(*args, **kwargs)

    return guarded


_CAPPED_FILTERS = (
    "sort", "dictsort", "groupby", "unique", "map", "select", "reject", "selectattr", "rejectattr",
    "list", "batch", "slice", "sum", "min", "max",
)  # fmt: skip


def _guard_filters(env: jinja2.Environment) -> None:
    """Install the size-checked versions of the filters and globals that can build huge values."""
    for name in _CAPPED_FILTERS:
        env.filters[name] = _cap_items(env.filters[name], name)
    _with_check(
        env,
        "batch",
        lambda a, k: _refuse_size("batch", _width(_arg(a, k, 2, "linecount")), limits.MAX_FILTER_ITEMS),
    )
    _with_check(
        env,
        "slice",
        lambda a, k: _refuse_size("slice", _width(_arg(a, k, 2, "slices")), limits.MAX_FILTER_ITEMS),
    )
    _with_check(
        env,
        "center",
        lambda a, k: _refuse_size(
            "center", _width(_arg(a, k, 2, "width")), limits.MAX_STRING_ITEMS, "characters"
        ),
    )
    env.filters["join"] = _checked_result(env.filters["join"], "join")
    _with_check(env, "indent", _check_indent)
    _with_check(env, "wordwrap", _check_wordwrap)
    _with_check(
        env,
        "replace",
        lambda a, k: _check_replace(
            _arg(a, k, 1, "s"), _arg(a, k, 2, "old"), _arg(a, k, 3, "new"), _arg(a, k, 4, "count")
        ),
    )
    _with_check(env, "format", _check_format_filter)
    lipsum = cast(Callable[..., Any], env.globals["lipsum"])

    def guarded_lipsum(n: Any = 5, html: bool = True, min: Any = 20, max: Any = 100) -> Any:
        _refuse_size("lipsum", _width(n) * _width(max), limits.MAX_LIPSUM_WORDS, "words")
        return lipsum(n, html, min, max)

    env.globals["lipsum"] = guarded_lipsum


def _checked_result(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """Refuse a string result over the limit (``[s, s]|join`` doubling in a loop stops there)."""

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if isinstance(result, str) and len(result) > limits.MAX_STRING_ITEMS:
            raise _LimitExceeded(
                f"'{name}' result too large ({len(result):,} characters; limit {limits.MAX_STRING_ITEMS:,})"
            )
        return result

    return checked


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str) -> Any:
    """A filter argument by position (after the environment/context, which is position 0) or name."""
    if len(args) > index:
        return args[index]
    return kwargs.get(name)


def _with_check(
    env: jinja2.Environment, name: str, check: Callable[[tuple[Any, ...], dict[str, Any]], None]
) -> None:
    fn = env.filters[name]
    shift = 0 if getattr(fn, "jinja_pass_arg", None) is not None else 1

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        check(((None,) * shift) + args, kwargs)
        return fn(*args, **kwargs)

    env.filters[name] = checked


def _check_indent(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    text, width = _arg(args, kwargs, 1, "s"), _arg(args, kwargs, 2, "width")
    if not isinstance(text, str):
        return
    pad = len(width) if isinstance(width, str) else _width(width)
    _refuse_size("indent", len(text) + (text.count("\n") + 1) * pad, limits.MAX_STRING_ITEMS, "characters")


def _check_wordwrap(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    text = _arg(args, kwargs, 1, "s")
    if isinstance(text, str):
        _refuse_size("wordwrap", len(text), limits.MAX_WRAP_CHARS, "characters")


def _check_format_filter(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    value = _arg(args, kwargs, 1, "value")
    if isinstance(value, str):
        rest = tuple(args[2:]) if not kwargs else ()
        _check_percent_format(value, rest)


# ------------------------------------------------------------------------------------------ environment
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
    """The transformers sandbox plus size limits on ``*``, ``**``, ``%`` and the risky ``str`` methods.

    ``+`` is not intercepted: it is the most common operator in templates and a hook on it cost ~15 % of
    render time; a ``+`` doubling is stopped where its result is stored (``{% set %}``, see
    :func:`guard_template`) and, in any case, by the worker's memory cap.
    """

    intercepted_binops = frozenset({"*", "**", "%"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_binop_size(operator, left, right)
        return self.binop_table[operator](left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """The sandbox's call, plus a size check of the ``str`` methods that can build a huge string.

        Checked per call rather than per attribute access (calls are far rarer), and written out instead
        of calling ``super().call`` so a call costs no extra stack frame: deep macro recursion must reach
        its deadline before Python's recursion limit, as it does without the guard.
        """
        if not __self.is_safe_callable(__obj):
            raise jinja2.exceptions.SecurityError(f"{__obj!r} is not safely callable")
        target = getattr(__obj, "__wrapped__", __obj)  # str.format comes wrapped by the sandbox
        text = getattr(target, "__self__", None)
        if type(text) is str and getattr(target, "__name__", None) in _GUARDED_STR_METHODS:
            _check_str_method(target.__name__, text, args, kwargs)
            result = __context.call(__obj, *args, **kwargs)
            if type(result) is str and len(result) > limits.MAX_STRING_ITEMS:
                raise _LimitExceeded(f"str.{target.__name__} result too large ({len(result):,} characters)")
            return result
        return __context.call(__obj, *args, **kwargs)

    def getattr(self, obj: Any, attribute: str) -> Any:
        """The sandbox's ``obj.attribute``, with the same answers, at a fraction of the cost.

        ``message.role`` is most of what a chat template looks up.  The sandbox first asks the dict for an
        attribute of that name, which raises, then subscripts: a plain ``dict`` has no attribute but those
        of its type, so the item is read directly.  Whether an attribute found is safe depends only on the
        type of ``obj`` and the attribute's name (:func:`jinja2.sandbox.is_internal_attribute` and
        :func:`~jinja2.sandbox.modifies_known_mutable` test nothing else), so the answer is kept per pair.
        """
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except LookupError:
                return self.undefined(obj=obj, name=attribute)
        try:
            value = getattr(obj, attribute)
        except AttributeError:
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                return self.undefined(obj=obj, name=attribute)
        fmt = self.wrap_str_format(value)
        if fmt is not None:
            return fmt
        pair = (type(obj), attribute)
        safe = _SAFE_ATTRIBUTES.get(pair)
        if safe is None:
            safe = self.is_safe_attribute(obj, attribute, value)
            if len(_SAFE_ATTRIBUTES) < _MAX_SAFE_ATTRIBUTES:
                _SAFE_ATTRIBUTES[pair] = safe
        return value if safe else self.unsafe_undefined(obj, attribute)


#: The attributes a plain ``dict`` has (those of its type: instances have no ``__dict__``).
_DICT_ATTRIBUTES = frozenset(dir(dict))
#: Whether the sandbox allows an attribute, by (type, name); bounded (a template names few).
_SAFE_ATTRIBUTES: dict[tuple[type, str], bool] = {}
_MAX_SAFE_ATTRIBUTES = 4096


def _raise_exception(message: str) -> None:
    raise _TemplateRaised(message)


def _tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: Any = None,
    sort_keys: bool = False,
) -> str:
    """transformers' ``tojson``; the text of a mapping or list is kept while the object lives.

    A batch of renders shares one copy of its tools (:class:`workbench.template.render._ToolCopies`), and
    templates write every tool's schema as JSON in every render.  Mappings and lists a template sees cannot
    change (the immutable sandbox refuses every mutating method, and no caller object reaches a template:
    the context is a copy), so the same object with the same options always gives the same text.  The kept
    entry holds the object, so its ``id`` cannot be reused while the entry exists.  Only short texts are kept
    (a tool schema, not a template's big structure), and few: what is kept holds its objects alive, and a
    worker runs under a memory cap.
    """
    kind = type(x)
    if (kind is not dict and kind is not list) or type(separators) is list:
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )
    key = (id(x), ensure_ascii, indent, separators, sort_keys)
    kept = _TOJSON_KEPT.get(key)
    if kept is not None and kept[0] is x:
        return kept[1]
    text = json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    if len(text) <= _MAX_TOJSON_TEXT:
        if len(_TOJSON_KEPT) >= _MAX_TOJSON_KEPT:
            _TOJSON_KEPT.clear()
        _TOJSON_KEPT[key] = (x, text)
    return text


#: ``tojson`` texts by (object id, options), each with its object (see :func:`_tojson`): at most this many,
#: each of at most this many characters (so at most a few MB held).
_TOJSON_KEPT: dict[tuple[Any, ...], tuple[Any, str]] = {}
_MAX_TOJSON_KEPT = 256
_MAX_TOJSON_TEXT = 8192


def _strftime_now(fmt: str) -> str:
    frozen = getattr(_state, "now", None)
    return (frozen if frozen is not None else datetime.now()).strftime(fmt)


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


def make_environment() -> ImmutableSandboxedEnvironment:
    """A fresh guarded environment (one per compiled template: they are cached, never mutated)."""
    env = _GuardedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, loopcontrols])
    env.filters["tojson"] = _tojson
    env.filters[_LOOP_GUARD] = _loop_guard
    env.filters[_TICK] = _tick
    env.filters[_SIZE_GUARD] = _size_guard
    _guard_filters(env)
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


class _WrapConcat(NodeTransformer):
    """Route every ``~`` result and every ``{% set %}`` value through the size guard.

    A doubling (``s ~ s``, ``s + s``, ``[s, s]|join``, ``{% set s %}{{ s }}{{ s }}{% endset %}``) must store
    its result to double again, so it stops at the string limit after a few steps.
    """

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _size_checked(node)

    def visit_Assign(self, node: nodes.Assign) -> nodes.Node:
        self.generic_visit(node)
        node.node = _size_checked(node.node)
        return node

    def visit_AssignBlock(self, node: nodes.AssignBlock) -> nodes.Node:
        self.generic_visit(node)
        guard = nodes.Filter(None, _SIZE_GUARD, [], [], None, None, lineno=node.lineno)
        if node.filter is None:
            node.filter = guard
        else:  # the block's own filter first, then the guard
            inner: nodes.Filter = node.filter
            while isinstance(inner.node, nodes.Filter):
                inner = inner.node
            inner.node = guard
        return node


def _size_checked(node: nodes.Node) -> nodes.Expr:
    return nodes.Filter(node, _SIZE_GUARD, [], [], None, None, lineno=node.lineno)


def guard_template(ast: nodes.Template) -> nodes.Template:
    """Put the deadline checks and the ``~`` size guard into the parsed template, before it is compiled.

    A Jinja template can only repeat work through ``{% for %}`` loops and through calls of template code
    (macros, ``caller()`` of call blocks, ``loop(...)`` of recursive loops): every loop's iterable goes
    through ``_loop_guard`` and every such body starts with ``{% if None|_tick %}{% endif %}``.  Calls of
    Python callables (``str.strip``, filters) need no deadline check: they cannot run template code.
    """
    for loop in ast.find_all(nodes.For):
        loop.iter = nodes.Filter(loop.iter, _LOOP_GUARD, [], [], None, None, lineno=loop.iter.lineno)
        if loop.recursive:
            loop.body.insert(0, _tick_node(loop.lineno))
    for body_owner in ast.find_all((nodes.Macro, nodes.CallBlock)):
        assert isinstance(body_owner, (nodes.Macro, nodes.CallBlock))
        body_owner.body.insert(0, _tick_node(body_owner.lineno))
    result = _WrapConcat().visit(ast)
    assert isinstance(result, nodes.Template)
    return result


def _tick_node(lineno: int) -> nodes.Node:
    test = nodes.Filter(nodes.Const(None), _TICK, [], [], None, None, lineno=lineno)
    return nodes.If(test, [], [], [], lineno=lineno)


@dataclass
class CompiledTemplate:
    """A template compiled once and rendered many times (the analyzer renders ~30 variants).

    ``template`` is compiled on first use: when renders go to the worker, the calling process only needs
    ``env`` (to parse the source, e.g. for its undeclared variables) and never pays for a second compile.
    """

    source: str
    env: ImmutableSandboxedEnvironment
    _template: jinja2.Template | None = None

    @property
    def template(self) -> jinja2.Template:
        if self._template is None:
            self._template = compile_in_process(self.source).template
        return self._template


@lru_cache(maxsize=64)
def compile_in_process(source: str) -> CompiledTemplate:
    """Compile (and cache) a template here; syntax errors become :class:`TemplateError` with the line."""
    limits.check_source_size(source)
    env = make_environment()
    try:
        ast = env.parse(source)
        template = env.from_string(guard_template(ast))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}", line=exc.lineno, kind="syntax") from None
    except RecursionError:
        raise TemplateError("template nests too deeply to compile", kind="syntax") from None
    except MemoryError:
        raise RenderMemoryLimit("template needs too much memory to compile", kind="limit") from None
    return CompiledTemplate(source=source, env=env, _template=template)


def _pieces(template: jinja2.Template, context: dict[str, Any]) -> Iterator[str]:
    """The template's output pieces, its failures raised as they are.

    What ``Template.render``/``generate`` do minus their ``handle_exception``: jinja rewrites the traceback
    of every failure into fake template frames (compiling code per frame), about 2 ms a failure, and the
    analysis renders many conversations a template refuses on purpose.  :func:`_template_line_of` reads the
    template line off the raw frames with the template's debug info instead.
    """
    return template.root_render_func(template.new_context(dict(context)))


def _capped(compiled: CompiledTemplate, context: dict[str, Any], max_output: int) -> str:
    parts: list[str] = []
    size = 0
    pieces = cast(Generator[str, None, None], _pieces(compiled.template, context))
    try:
        for piece in pieces:
            size += len(piece)
            if size > max_output:
                raise RenderOutputTooLarge(
                    f"render output passed {max(max_output, 0):,} characters, the most allowed here",
                    kind="limit",
                )
            parts.append(piece)
    finally:
        pieces.close()  # stop the template where it is (its loops, its deadline checks)
    return "".join(parts)


def render_in_process(
    compiled: CompiledTemplate,
    context: dict[str, Any],
    time_limit: float,
    now: datetime | None = None,
    max_output: int | None = None,
) -> str:
    """Render with the deadline set for this thread; every failure becomes a :class:`TemplateError`.

    ``max_output``: the most characters the render may produce; the output is built piece by piece
    (jinja's ``generate``, the same text ``render`` joins) and the render stops as soon as it passes the cap
    (:class:`RenderOutputTooLarge`), before the oversized text exists.
    """
    outer_at, outer_now = getattr(_state, "at", None), getattr(_state, "now", None)
    _state.at = time.monotonic() + time_limit
    _state.now = now
    try:
        if max_output is None:
            return "".join(_pieces(compiled.template, context))
        return _capped(compiled, context, max_output)
    except RenderOutputTooLarge:
        raise
    except TemplateError as exc:
        raise exc.with_line(_template_line_of(exc)) from None
    except _TemplateRaised as exc:
        raise TemplateError(
            f"template raised: {exc.message}", line=_template_line_of(exc), kind="raised"
        ) from None
    except _LimitExceeded as exc:
        raise RenderLimitExceeded(
            f"refused: {exc.message}", line=_template_line_of(exc), kind="limit"
        ) from None
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
        raise RenderMemoryLimit("render ran out of memory (memory limit reached)", kind="limit") from None
    except Exception as exc:  # templates are untrusted: any failure becomes a TemplateError
        raise TemplateError(
            f"render failed: {type(exc).__name__}: {exc}", line=_template_line_of(exc), kind="render"
        ) from None
    finally:
        if outer_at is None:
            del _state.at
        else:
            _state.at = outer_at
        _state.now = outer_now


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
