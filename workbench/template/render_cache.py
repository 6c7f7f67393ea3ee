"""Renders kept for the analysis and its self-check: the same template and inputs are never rendered twice.

The analysis renders ~30 conversations, the turn learner and the call pattern learner a few dozen more,
and the self-check (validation) renders its round-trip cases; many are the same conversation asked for
by different stages, and a process that analyses a template again (the TUI after an edit elsewhere, a
benchmark's warm runs) asks for all of them again.  Within :func:`cached_renders`, :func:`render` and
:func:`render_many` look a render up by the template's hash, the full render context and the clock it
sees, and keep what they rendered (texts, and errors other than running out of time: those depend on the
machine's load, not on the template).  Bounded: least recently used entries go first.

Outside the block nothing is cached, so a render that reads the real clock (``strftime_now``) is never
served stale to the CLI's ``render`` or the TUI's preview.
"""

from __future__ import annotations

import hashlib
import json
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

_ENABLED: ContextVar[bool] = ContextVar("cached_renders", default=False)
_STORE: OrderedDict[str, str | TemplateError] = OrderedDict()
_SIZE = [0]
_NOT_KEPT = ("timeout", "cancelled", "memory")


@contextmanager
def cached_renders() -> Iterator[None]:
    """Within the block, renders are looked up and kept (see the module docstring)."""
    token = _ENABLED.set(True)
    try:
        yield
    finally:
        _ENABLED.reset(token)


def enabled() -> bool:
    return _ENABLED.get()


@lru_cache(maxsize=64)
def source_key(source: str) -> str:
    """The hash a template's text is known by here."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def key(source_hash: str, context: dict[str, Any], limit: float, now: datetime | None, continued: Any) -> str:
    """The cache key of one render (pure)."""
    body = json.dumps(context, sort_keys=True, default=str, ensure_ascii=False)
    return f"{source_hash}|{limit}|{now}|{continued}|{body}"


def get(k: str) -> str | TemplateError | None:
    """The kept render for ``k`` (None when there is none); marks it recently used."""
    found = _STORE.get(k)
    if found is not None:
        _STORE.move_to_end(k)
    return found


def put(k: str, outcome: str | TemplateError) -> None:
    """Keep ``outcome`` under ``k`` (renders that ran out of time or memory are not kept)."""
    if isinstance(outcome, TemplateError) and outcome.kind in _NOT_KEPT:
        return
    if k in _STORE:
        return
    _STORE[k] = outcome
    _SIZE[0] += len(outcome) if isinstance(outcome, str) else 64
    while _STORE and (len(_STORE) > MAX_ENTRIES or _SIZE[0] > MAX_CHARS):
        _, old = _STORE.popitem(last=False)
        _SIZE[0] -= len(old) if isinstance(old, str) else 64


def clear() -> None:
    """Forget every kept render."""
    _STORE.clear()
    _SIZE[0] = 0
