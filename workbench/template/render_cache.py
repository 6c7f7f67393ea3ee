"""Renders kept for one command: the analysis and its self-check never render the same thing twice.

The analysis renders ~30 conversations, the turn learner and the call pattern learner a few dozen more,
and the self-check (validation) renders its round-trip cases; many are the same conversation asked for
by different stages.  Within :func:`cached_renders`, :func:`render` and :func:`render_many` look a render up
by the template's hash, the full render context and the clock it sees (a request of plain data first by
itself, before its context is copied: :func:`request_key`), and keep what they rendered (texts,
and errors other than running out of time, memory or the command's render budget: those depend on the
machine's load and on what ran before, not on the template).  Bounded: least recently used entries go first.

The outermost block owns the store: it is empty when the block begins and dropped when it ends, so one
command (``workbench analyze`` wraps the analysis and its self-check in one block) shares its renders, and
the next command renders afresh.  Outside a block nothing is cached, and renders that read the real clock
are never kept (the render functions cache only at a fixed instant).
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from functools import lru_cache
from typing import Any

from workbench.template.errors import TemplateError

#: At most this many renders, and this many characters in all, are kept.
MAX_ENTRIES = 8192
MAX_CHARS = 64 << 20

_NOT_KEPT = ("timeout", "cancelled", "memory", "limit")


class _Store:
    """One command's renders (least recently used first) and their size; a lock, for the renders a command
    makes in a second thread (:class:`workbench.selfcheck.EarlyRenders`)."""

    def __init__(self) -> None:
        self.kept: OrderedDict[Key | RequestKey, str | TemplateError] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()


_CURRENT: ContextVar[_Store | None] = ContextVar("cached_renders", default=None)


@contextmanager
def cached_renders() -> Iterator[None]:
    """Within the block, renders are looked up and kept (see the module docstring); a nested block shares
    the outer block's store."""
    store = _CURRENT.get()
    token = _CURRENT.set(store if store is not None else _Store())
    try:
        yield
    finally:
        _CURRENT.reset(token)


@contextmanager
def uncached_renders() -> Iterator[None]:
    """Within the block, renders are made afresh (validation's second render, which asks whether the
    template renders the same text twice)."""
    token = _CURRENT.set(None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def enabled() -> bool:
    return _CURRENT.get() is not None


@lru_cache(maxsize=64)
def source_key(source: str) -> str:
    """The hash a template's text is known by here."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def key(
    source_hash: str,
    context: dict[str, Any],
    limit: float,
    now: datetime | None,
    continued: Any,
    tools_print: bytes | None = None,
) -> Key:
    """The cache key of one render (pure).  ``tools_print`` is :func:`fingerprint` of ``context["tools"]``
    when the caller has it already (a batch offers one tools list to many calls)."""
    tools = context.get("tools")
    if tools is None:
        return (source_hash, limit, now, continued, fingerprint(context), b"")
    if tools_print is None:
        tools_print = fingerprint(tools)
    rest = {k: v for k, v in context.items() if k != "tools"}
    return (source_hash, limit, now, continued, fingerprint(rest), tools_print)


#: A render's key: template hash, time limit, clock, continued text, and the prints of the context
#: without its tools and of its tools.
Key = tuple[str, float, "datetime | None", Any, bytes, bytes]


def fingerprint(value: Any) -> bytes:
    """``value`` as bytes that tell apart any two values a template could tell apart (pure).

    Pickled: an exact record of types, key order (a template iterating a mapping, or ``tojson`` of one,
    renders it in its order) and values, five times cheaper than JSON, which would also confuse a tuple with
    a list and ``1`` with ``1.0`` in some spellings.  Two equal values may still get two prints (objects
    shared within one are recorded as shared): that costs a render, never a wrong one.  A value pickle cannot
    take is printed as JSON, with another first byte.
    """
    try:
        return b"p" + pickle.dumps(value, protocol=5)
    except Exception:  # any object pickle refuses is printed as JSON
        return b"j" + json.dumps(value, default=repr, ensure_ascii=False).encode("utf-8", "surrogatepass")


class _NotPlain(Exception):
    """Raised by :class:`_PlainPickler` at the first object that is not an exact plain type."""


class _PlainPickler(pickle.Pickler):
    """Pickles exact ``dict``, ``list``, ``tuple``, ``str``, ``int``, ``float``, ``bool`` and ``None`` only.

    The C pickler asks :meth:`reducer_override` about every object except exact instances of the built-in
    types, so plain data pickles at C speed and anything else (a subclass, a dataclass, an object with its
    own ``__reduce__``) stops the print: such a value's print need not tell apart what its plain copy would.
    """

    def reducer_override(self, obj: Any) -> Any:
        raise _NotPlain


def request_key(source_hash: str, request: Any, limit: float, now: datetime | None) -> RequestKey | None:
    """The cache key of a render *request* as the caller passed it, before the plain copy of its context
    is made (pure); None when the request holds anything but plain types.

    A request of plain data determines the context the render is made from (the copy and its aliases are a
    function of it), so a request seen before is answered without copying its context again: the
    self-check asks for the renders the analysis (or another thread) made, and copying a context costs more
    than looking it up.  Keys of this kind never equal a :data:`Key` (their first item is ``"request"``).
    """
    out = io.BytesIO()
    try:
        _PlainPickler(out, protocol=5).dump(request)
    except (_NotPlain, pickle.PicklingError, RecursionError, TypeError, ValueError):
        return None
    return ("request", source_hash, limit, now, out.getvalue())


#: A request's key: ``"request"``, template hash, time limit, clock, print of the request.
RequestKey = tuple[str, str, float, "datetime | None", bytes]


def get(k: Key | RequestKey) -> str | TemplateError | None:
    """The kept render for ``k`` (None when there is none, or outside a block); marks it recently used."""
    store = _CURRENT.get()
    if store is None:
        return None
    with store.lock:
        found = store.kept.get(k)
        if found is not None:
            store.kept.move_to_end(k)
    return found


def put(k: Key | RequestKey | None, outcome: str | TemplateError) -> None:
    """Keep ``outcome`` under ``k`` (renders that ran out of time, memory or budget are not kept; no key:
    nothing, as for a request that has no :func:`request_key`)."""
    store = _CURRENT.get()
    if store is None or k is None:
        return
    if isinstance(outcome, TemplateError) and outcome.kind in _NOT_KEPT:
        return
    with store.lock:
        if k in store.kept:
            return
        store.kept[k] = outcome
        store.size += len(outcome) if isinstance(outcome, str) else 64
        while store.kept and (len(store.kept) > MAX_ENTRIES or store.size > MAX_CHARS):
            _, old = store.kept.popitem(last=False)
            store.size -= len(old) if isinstance(old, str) else 64


def clear() -> None:
    """Forget every render the current block kept."""
    store = _CURRENT.get()
    if store is not None:
        with store.lock:
            store.kept.clear()
            store.size = 0
