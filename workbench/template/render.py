"""Render chat templates exactly as ``transformers``' ``apply_chat_template(..., tokenize=False)`` does.

Same Jinja environment, globals and ``tojson`` filter (:mod:`workbench.template.sandbox`), and the same
input preprocessing: keys whose value is ``None`` are dropped from every message, inputs are rebuilt from
plain JSON types, and reasoning is copied into ``reasoning_content``, ``thinking`` and ``reasoning`` as
transformers 5.x does.  Parity is pinned by ``tests/test_render_parity.py``, which compares with
transformers byte for byte (docs/render-parity.md).

Templates are untrusted code, so every compile and render is bounded (docs/hostile.md):

* sources larger than ``MAX_SOURCE_BYTES`` (1 MiB) are refused before compiling (:class:`TemplateTooLarge`);
* the time limit is validated (:func:`check_time_limit`: finite, positive) and covers the compile and the
  render; in-template checks stop loops and recursion with :class:`RenderTimeout` naming the line;
* size guards refuse one-step bombs (``'x' * 10**10``, ``'%0999999999d' % 1``, ``sort`` of a million
  items, ``lipsum(10**6)``) with :class:`RenderLimitExceeded`;
* and the guarantee: compile and render run in a worker process (:mod:`workbench.template.worker`) with an
  address-space cap (:class:`RenderMemoryLimit`) that is killed when it overruns its deadline, so even one
  C call inside a filter cannot hold the caller.  :func:`cancel_renders` kills renders in flight.

``WORKBENCH_RENDER_WORKER=0`` (or :func:`use_worker`) renders in-process instead: same output, same
guards, but no memory cap and no way to interrupt a single C call.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from functools import lru_cache
from typing import Any

from workbench.inputs import unencodable_at
from workbench.runtime.chat import Message, Tool
from workbench.template import render_cache, worker
from workbench.template.budget import BudgetExhausted, RenderBudget, current_budget
from workbench.template.errors import (
    CompileTimeout,
    RenderCancelled,
    RenderLimitExceeded,
    RenderMemoryLimit,
    RenderOutputTooLarge,
    RenderTimeout,
    TemplateError,
    TemplateTooLarge,
    TimeLimitError,
    until_timeouts,
)
from workbench.template.limits import (
    DEFAULT_COMPILE_LIMIT,
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIME_LIMIT,
    MAX_INT_BITS,
    MAX_RENDER_OUTPUT,
    MAX_REPEAT_ITEMS,
    MAX_SOURCE_BYTES,
    check_source_size,
    check_time_limit,
)
from workbench.template.sandbox import (
    SMALL_LOOP,
    CompiledTemplate,
    compile_in_process,
    make_environment,
    render_in_process,
)

__all__ = [
    "ANALYSIS_INSTANT",
    "DEFAULT_COMPILE_LIMIT",
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_TIME_LIMIT",
    "MAX_INT_BITS",
    "MAX_RENDER_OUTPUT",
    "MAX_REPEAT_ITEMS",
    "MAX_SOURCE_BYTES",
    "REASONING_FIELDS",
    "RENDER_ARGUMENTS",
    "SMALL_LOOP",
    "BudgetExhausted",
    "CompileTimeout",
    "CompiledTemplate",
    "RenderBudget",
    "RenderCancelled",
    "RenderLimitExceeded",
    "RenderMemoryLimit",
    "RenderOutputTooLarge",
    "RenderTimeout",
    "TemplateError",
    "TemplateTooLarge",
    "TimeLimitError",
    "cancel_renders",
    "check_template_kwargs",
    "check_time_limit",
    "compile_template",
    "content_as_parts",
    "fixed_clock",
    "normalize_messages",
    "normalize_tools",
    "render",
    "render_many",
    "stop_render_workers",
    "use_worker",
]

# The clock ``strftime_now`` reads.  Tests freeze it by replacing this name (as transformers' own module
# is patched); a replaced clock is read here and handed to the renderer, in-process or in the worker.
_REAL_DATETIME = datetime
# The worker needs POSIX (rlimits, poll on pipes); elsewhere renders stay in-process with the guards only.
_OFF = {"0", "no", "false", "off"}
_use_worker = (
    os.name == "posix" and os.environ.get("WORKBENCH_RENDER_WORKER", "1").strip().lower() not in _OFF
)


#: The instant the analysis and validation render at (:func:`fixed_clock`): a constant, so that the same
#: template gives the same renders, the same spec and byte-identical ``analyze --json`` on every run.
ANALYSIS_INSTANT = _REAL_DATETIME(2026, 1, 15, 9, 30, 0)

_clock: ContextVar[datetime | None] = ContextVar("workbench_render_clock", default=None)


@contextmanager
def fixed_clock(now: datetime | None = None) -> Iterator[datetime]:
    """Every render made inside the block sees one instant (``strftime_now``, the sandbox's one clock).

    Differential rendering compares renders made at different moments; a template that prints the time
    (``strftime_now('%H:%M:%S')``) would otherwise differ where the probes did not vary anything, and a
    second run would read other digits.  The analysis, its self-check and validation render inside
    ``fixed_clock()``, which holds :data:`ANALYSIS_INSTANT`.  Nested blocks keep the outer instant unless
    given one of their own, so validation inside an analysis reads the analysis' clock.  The setting is a
    context variable: renders in other threads are not affected.
    """
    outer = _clock.get()
    instant = now if now is not None else outer if outer is not None else ANALYSIS_INSTANT
    token = _clock.set(instant)
    try:
        yield instant
    finally:
        _clock.reset(token)


def clock_is_fixed() -> bool:
    """Do renders made here see one instant (inside :func:`fixed_clock`)?"""
    return _clock.get() is not None


def _frozen_now() -> datetime | None:
    """The fixed clock's instant, else the replaced clock's time as a plain ``datetime`` (it crosses to the
    worker), else None (the real clock, read inside the render)."""
    fixed = _clock.get()
    if fixed is not None:
        return fixed
    if datetime is _REAL_DATETIME:
        return None
    now = datetime.now()
    return _REAL_DATETIME(
        now.year, now.month, now.day, now.hour, now.minute, now.second, now.microsecond, now.tzinfo
    )


def use_worker(enabled: bool) -> bool:
    """Render in worker processes (the default) or in this process; returns the previous setting."""
    global _use_worker
    previous, _use_worker = _use_worker, bool(enabled)
    return previous


def spare_worker_ready(*, start: bool = True) -> bool:
    """Can renders run alongside this thread's now, in a render worker of their own?  True when a second
    worker is idle (one for this thread, one for the other); otherwise, with ``start``, one is started for
    next time (its interpreter boots meanwhile, on the other core) and the answer is no.  Always no when
    rendering in-process: two threads of this process would only take turns."""
    return _use_worker and worker.get_pool().has_spare(start=start)


def cancel_renders() -> int:
    """Stop every render running in a worker now; their callers get :class:`RenderCancelled`.

    For the TUI: call it when the user cancels an analysis or quits, so no thread waits on a template.
    Returns the number of renders cancelled.
    """
    return worker.get_pool().cancel() if _use_worker else 0


def stop_render_workers() -> None:
    """Kill every render worker process, idle or busy (the process is leaving without running its atexit
    handlers, e.g. the TUI after ``ctrl+q``).  The pool starts new workers if it is used again."""
    if worker.pool_started():
        worker.get_pool().shutdown()


def compile_template(source: str, *, time_limit: float | None = None) -> CompiledTemplate:
    """Check that ``source`` compiles (within the compile limit) and return it, cached.

    With the worker, the compile runs there (bounded in time and memory) and the returned object compiles
    in this process only if its ``template`` attribute is used; ``env`` is ready for parsing.  Syntax
    errors become :class:`TemplateError` with the line; oversized sources :class:`TemplateTooLarge`; a
    compile that overruns :class:`CompileTimeout`.
    """
    check_source_size(source)
    limit = DEFAULT_COMPILE_LIMIT if time_limit is None else check_time_limit(time_limit)
    if not _use_worker:
        return compile_in_process(source)
    return _compiled_in_worker(source, limit)


@lru_cache(maxsize=64)
def _compiled_in_worker(source: str, limit: float) -> CompiledTemplate:
    worker.get_pool().compile(source, limit)
    return CompiledTemplate(source=source, env=make_environment())


REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

#: The render argument that hands every message's text content to the template as typed parts
#: (:func:`content_as_parts`): what vLLM and SGLang pass a template that iterates content.
CONTENT_AS_PARTS = "content_as_parts"


def content_as_parts(messages: Sequence[Message | Mapping[str, Any]]) -> list[Any]:
    """``messages`` with each text ``content`` as one typed part, ``[{"type": "text", "text": ...}]`` (pure).

    vLLM and SGLang render with the "openai" content format when a template iterates message content
    (their chat-template content-format detection), handing it every string content in that shape; a
    template written for it (a vision model's processor template) writes nothing for a plain string.
    Content that is already a list, or missing, is left as it is."""
    out: list[Any] = []
    for m in messages:
        raw = m.to_openai() if isinstance(m, Message) else m
        if isinstance(raw, Mapping) and isinstance(raw.get("content"), str):
            raw = {**raw, "content": [{"type": "text", "text": raw["content"]}]}
        out.append(raw)
    return out


def normalize_messages(messages: Sequence[Message | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped dicts exactly as transformers hands them to templates.

    Three steps, in transformers' order: keys whose value is ``None`` are dropped (so a tool-call message
    without text has no ``content`` key at all, and templates test ``is defined``); everything is rebuilt
    from plain JSON types; reasoning is aliased under each name templates read it by
    (:data:`REASONING_FIELDS`: ``reasoning_content``, gpt-oss's ``thinking``, and ``reasoning``, the name
    vLLM's responses carry and Nemotron 3's template reads).  Key order matters (templates ``tojson`` whole
    messages): ``thinking`` goes first unless present, ``reasoning_content`` then ``reasoning`` last unless
    present.
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
            d.setdefault("reasoning", reasoning)
        out.append(d)
    return out


_as_parts = content_as_parts  # the name the render functions use (their argument of that name shadows it)


#: The exact types :func:`_plain` keeps as they are (``None`` is ``NoneType``).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """A deep copy made of plain JSON types, so templates never see caller objects (or mutate them).

    Mirrors transformers' ``_plain_template_data``: subclasses of scalars are cut back to the base type,
    dataclasses become dicts, and anything else becomes an inert ``<TypeName>`` placeholder.
    """
    kind = type(value)
    if value is None or kind is str or kind is int or kind is float or kind is bool:
        return value
    # exact containers first: the ABC check of ``Mapping`` below costs more than the copy itself; their
    # plain scalar items are taken as they are, without a call each (most of a tool schema's items)
    if kind is dict:
        return {
            (k if type(k) is str else _plain(k)): (v if type(v) in _SCALARS else _plain(v))
            for k, v in value.items()
        }
    if kind is list:
        return [v if type(v) in _SCALARS else _plain(v) for v in value]
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


#: The names :func:`render` takes itself (and transformers' ``apply_chat_template`` beside them): a template
#: variable of one of these names would either collide with the argument (``TypeError: got multiple
#: values``) or, worse, set it (``time_limit`` from a shared session file would raise the sandbox's limit).
#: Template variables from files and ``--kw`` are checked against it (:func:`check_template_kwargs`).
RENDER_ARGUMENTS = frozenset(
    {
        "source",
        "messages",
        "conversation",
        "tools",
        "documents",
        "add_generation_prompt",
        "continue_final_message",
        "time_limit",
        CONTENT_AS_PARTS,
        "chat_template",
        "tokenize",
        "return_dict",
        "return_tensors",
        "return_assistant_tokens_mask",
        "padding",
        "truncation",
        "max_length",
    }
)


def check_template_kwargs(kwargs: Any, where: str = "template kwargs") -> dict[str, Any]:
    """``kwargs`` as template variables, or one :class:`TemplateError` (kind ``usage``) naming the problem.

    Render limits are the running command's own settings: a file (a session, a conformance case) may set
    template variables, never ``time_limit`` or another render argument (:data:`RENDER_ARGUMENTS`).
    """
    if not isinstance(kwargs, Mapping):
        raise TemplateError(
            f"{where} must be an object of name: value, not {type(kwargs).__name__}", kind="usage"
        )
    for key in kwargs:
        if not isinstance(key, str) or not key.isidentifier():
            raise TemplateError(f"{where}: {key!r} is not a variable name", kind="usage")
        if key in RENDER_ARGUMENTS:
            raise TemplateError(
                f"{where}: {key!r} is a render argument set by the command itself, not a template variable",
                kind="usage",
            )
    return dict(kwargs)


def render(
    source: str,
    messages: Sequence[Message | Mapping[str, Any]],
    *,
    tools: Sequence[Tool | Mapping[str, Any]] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    time_limit: float = DEFAULT_TIME_LIMIT,
    content_as_parts: bool = False,
    **kwargs: Any,
) -> str:
    """Render ``messages`` through the template ``source``, as ``apply_chat_template(tokenize=False)``.

    Extra kwargs (``enable_thinking``, ``reasoning_effort``, ``bos_token``, ...) are passed to the template
    as transformers does; transformers also passes the tokenizer's special tokens, which is what
    :meth:`TemplateSource.render_kwargs` supplies.  ``continue_final_message`` is ``True`` (continue the
    content) or the name of the field to continue (e.g. ``"reasoning_content"``).  ``time_limit`` bounds
    the compile and the render together.  ``content_as_parts``: text content is passed as typed parts
    (:func:`content_as_parts`), as servers pass it to a template that reads content only that way.

    Raises:
        TemplateError: syntax error, ``raise_exception``, undefined call, a usage error transformers also
            refuses (empty conversation, continue + generation prompt), or any other failure; the message
            names the template line when it can be found.  Limits raise subclasses: :class:`RenderTimeout`
            (and :class:`CompileTimeout`), :class:`RenderMemoryLimit`, :class:`RenderLimitExceeded`
            (:class:`RenderOutputTooLarge` past :data:`MAX_RENDER_OUTPUT` characters),
            :class:`TemplateTooLarge`, :class:`TimeLimitError`, :class:`RenderCancelled`, and
            :class:`BudgetExhausted` when the active :class:`RenderBudget` is spent.
    """
    limit = check_time_limit(time_limit)
    check_source_size(source)
    if content_as_parts:
        messages = _as_parts(messages)
    now = _frozen_now()
    # Renders are kept only at a fixed instant (the analysis and validation): a render that reads the real
    # clock is never served from the cache.
    caching = render_cache.enabled() and now is not None
    request_key = None
    if caching:
        request = (messages, tools, documents, add_generation_prompt, continue_final_message, kwargs)
        request_key = render_cache.request_key(render_cache.source_key(source), request, limit, now)
        kept = render_cache.get(request_key) if request_key is not None else None
        if isinstance(kept, TemplateError):
            raise kept
        if kept is not None:
            return kept
    try:
        context, continued = _prepare(
            messages, source, tools, documents, add_generation_prompt, continue_final_message, kwargs
        )
    except TemplateError:
        compile_template(source, time_limit=limit)  # a syntax error is reported before a usage error
        raise
    cache_key = (
        render_cache.key(render_cache.source_key(source), context, limit, now, continued) if caching else None
    )
    if cache_key is not None:
        kept = render_cache.get(cache_key)
        if isinstance(kept, TemplateError):
            raise kept
        if kept is not None:
            render_cache.put(request_key, kept)
            return kept
    try:
        with _Accounted(limit) as run:
            if _use_worker:
                text = worker.get_pool().render(source, context, run.limit, now, run.max_output)
            else:
                text = render_in_process(compile_in_process(source), context, run.limit, now, run.max_output)
            run.returned(len(text))
        _check_encodable(text)
        if continued is not None:
            text = _cut_at_tag(text, continued)
    except TemplateError as exc:
        render_cache.put(cache_key, exc)
        render_cache.put(request_key, exc)
        raise
    render_cache.put(cache_key, text)
    render_cache.put(request_key, text)
    return text


def render_many(
    source: str,
    calls: Sequence[Mapping[str, Any]],
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    stop_after_timeouts: int | None = None,
) -> list[str | TemplateError]:
    """Render several calls of one template, in one worker round trip: the analyzer's fast path.

    Each call is a mapping of :func:`render`'s keyword arguments (``messages``, ``tools``,
    ``add_generation_prompt``, ``continue_final_message``, template kwargs, ...), rendered under its own
    ``time_limit``.  Returns, per call, the text or the :class:`TemplateError` that :func:`render` would
    raise; the outputs are exactly :func:`render`'s.  A source that does not compile raises.
    ``stop_after_timeouts``: once that many renders of the batch have run out of time, the rest are not made
    (each gets a :class:`RenderTimeout` saying so): a batch costs what rendering one at a time and stopping
    after that many timeouts costs.
    """
    limit = check_time_limit(time_limit)
    check_source_size(source)
    results: list[str | TemplateError | None] = [None] * len(calls)
    contexts: list[dict[str, Any]] = []
    slots: list[tuple[int, str | None]] = []
    request_keys: list[render_cache.RequestKey | None] = []
    tool_copies = _ToolCopies()
    now = _frozen_now()
    caching = render_cache.enabled() and now is not None
    source_hash = render_cache.source_key(source) if caching else ""
    answered = 0
    for index, call in enumerate(calls):
        kw = dict(call)
        messages = kw.pop("messages", ())
        if kw.pop(CONTENT_AS_PARTS, False):
            messages = _as_parts(messages)
        request = (
            messages,
            kw.pop("tools", None),
            kw.pop("documents", None),
            bool(kw.pop("add_generation_prompt", False)),
            kw.pop("continue_final_message", False),
            kw,
        )
        request_key = render_cache.request_key(source_hash, request, limit, now) if caching else None
        kept = render_cache.get(request_key) if request_key is not None else None
        if kept is not None:  # asked for before: no copy of its context is made
            results[index] = kept
            answered += 1
            continue
        messages, tools, documents, generation, continued_field, kw = request
        try:
            context, continued = _prepare(
                messages, source, tools, documents, generation, continued_field, kw, tool_copies
            )
        except TemplateError as exc:
            results[index] = exc
            continue
        contexts.append(context)
        slots.append((index, continued))
        request_keys.append(request_key)
    if not contexts:
        if not answered:  # every call failed: a syntax error is reported before a usage error
            compile_template(source, time_limit=limit)
        return [r for r in results if r is not None]
    keys = (
        [
            render_cache.key(source_hash, c, limit, now, s[1], tool_copies.print_of(c["tools"]))
            for c, s in zip(contexts, slots, strict=True)
        ]
        if caching
        else []
    )
    outcomes_by: dict[int, str | TemplateError] = {}
    if caching:
        for i, k in enumerate(keys):
            kept = render_cache.get(k)
            if kept is not None:
                outcomes_by[i] = kept
                render_cache.put(request_keys[i], kept)
    todo = [i for i in range(len(contexts)) if i not in outcomes_by]
    if todo:
        batch = [contexts[i] for i in todo]
        with _Accounted(limit) as run:
            total = run.limit_total(limit * len(batch))
            if _use_worker:
                pool = worker.get_pool()
                outcomes = pool.render_batch(
                    source, batch, run.limit, now, run.max_output, total, stop_after_timeouts
                )
            else:
                compiled = compile_in_process(source)
                outcomes = until_timeouts(
                    lambda context: _inline(compiled, context, run.limit, now, run.max_output),
                    batch,
                    stop_after_timeouts,
                )
            outcomes = [_encodable_or_error(run.settle(outcome)) for outcome in outcomes]
            run.returned(sum(len(o) for o in outcomes if isinstance(o, str)))
        for i, outcome in zip(todo, outcomes, strict=True):
            continued = slots[i][1]
            if isinstance(outcome, str) and continued is not None:
                try:
                    outcome = _cut_at_tag(outcome, continued)
                except TemplateError as exc:
                    outcome = exc
            outcomes_by[i] = outcome
            if caching:
                render_cache.put(keys[i], outcome)
                render_cache.put(request_keys[i], outcome)
    for i, (index, _) in enumerate(slots):
        results[index] = outcomes_by[i]
    return [r for r in results if r is not None]


def _check_encodable(text: str) -> None:
    """A render holding a lone surrogate (a template can write ``"\\ud800"``) is refused: the one policy
    for text that cannot be encoded, which no tokenizer, terminal or file could take."""
    at = unencodable_at(text)
    if at is not None:
        raise TemplateError(
            f"the template's output holds a lone surrogate ({ascii(text[at])[1:-1]}) at character {at}: "
            "not text that can be encoded",
            kind="render",
        )


def _encodable_or_error(outcome: str | TemplateError) -> str | TemplateError:
    if isinstance(outcome, str):
        try:
            _check_encodable(outcome)
        except TemplateError as exc:
            return exc
    return outcome


def _inline(
    compiled: CompiledTemplate,
    context: dict[str, Any],
    limit: float,
    now: datetime | None,
    max_output: int | None = None,
) -> str | TemplateError:
    try:
        return render_in_process(compiled, context, limit, now, max_output)
    except TemplateError as exc:
        return exc


class _Accounted:
    """One render (or batch) under the active :class:`RenderBudget`, if any: the limits it runs under, and
    its time (worker start-ups excluded) and output charged to the budget.  A timeout or an oversized output
    that only the budget's rest caused becomes the budget's :class:`BudgetExhausted`."""

    def __init__(self, limit: float) -> None:
        self.own_limit = limit
        self.budget = current_budget()
        self.limit = limit if self.budget is None else self.budget.limit_for(limit)
        cap = MAX_RENDER_OUTPUT
        self.max_output = cap if self.budget is None else self.budget.output_for(cap)
        self.characters = 0

    def limit_total(self, wanted: float) -> float | None:
        """The whole batch's time under a budget (``wanted``, or the budget's rest when that is less); None
        without one (each call, retries included, has its own limit)."""
        return None if self.budget is None else self.budget.limit_for(wanted)

    def returned(self, characters: int) -> None:
        self.characters += characters

    def settle(self, outcome: str | TemplateError) -> str | TemplateError:
        """A batch slot: a limit the budget caused becomes the budget's error."""
        if isinstance(outcome, TemplateError):
            converted = self._budget_error(outcome)
            return converted if converted is not None else outcome
        return outcome

    def _budget_error(self, exc: TemplateError) -> BudgetExhausted | None:
        budget = self.budget
        if budget is None or isinstance(exc, BudgetExhausted):
            return None
        if isinstance(exc, RenderOutputTooLarge) and budget.bound_by_output(MAX_RENDER_OUTPUT):
            return budget.spend_output()
        if isinstance(exc, RenderTimeout) and self.limit < self.own_limit:
            return budget.spend_time()
        return None

    def __enter__(self) -> _Accounted:
        self._started = time.monotonic()
        self._boot = worker.get_pool().startup_seconds() if _use_worker else 0.0
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if self.budget is None:
            return
        boot = (worker.get_pool().startup_seconds() if _use_worker else 0.0) - self._boot
        self.budget.charge(time.monotonic() - self._started - boot, self.characters)
        if isinstance(exc, TemplateError):
            converted = self._budget_error(exc)
            if converted is not None:
                raise converted from None


def _prepare(
    messages: Sequence[Message | Mapping[str, Any]],
    source: str,
    tools: Sequence[Tool | Mapping[str, Any]] | None,
    documents: Sequence[Mapping[str, Any]] | None,
    add_generation_prompt: bool,
    continue_final_message: bool | str,
    kwargs: dict[str, Any],
    tool_copies: _ToolCopies | None = None,
) -> tuple[dict[str, Any], str | None]:
    """The render context transformers builds (plain copies), and the tagged final text when continuing.
    ``tool_copies`` shares one plain copy of a tools list among the calls of one batch."""
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
        tools=tool_copies.copy_of(tools) if tool_copies is not None else normalize_tools(tools),
        documents=_plain(list(documents)) if documents is not None else None,
        add_generation_prompt=add_generation_prompt,
    )
    return context, continued


class _ToolCopies:
    """The plain copy of each tools list the calls of one :func:`render_many` batch pass, and its print.

    A batch offers the same tools list to many of its calls (every case of a validation set, both prompts);
    copying a tool schema costs more than rendering a small template, so each list is copied once, by
    identity.  Sound within one batch only: the lists are held here (their ids stay theirs) and nothing runs
    between the calls' preparation; templates cannot change the shared copy (the immutable sandbox refuses
    every mutating method), and the worker receives it pickled once.
    """

    def __init__(self) -> None:
        self._copies: dict[int, tuple[Any, list[dict[str, Any]] | None]] = {}
        self._prints: dict[int, tuple[Any, bytes]] = {}

    def copy_of(self, tools: Sequence[Tool | Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
        if tools is None:
            return None
        kept = self._copies.get(id(tools))
        if kept is None:
            kept = self._copies[id(tools)] = (tools, normalize_tools(tools))
        return kept[1]

    def print_of(self, copy: list[dict[str, Any]] | None) -> bytes | None:
        """The render cache's print of a copy this batch made (None for one it did not: no tools)."""
        if copy is None:
            return None
        kept = self._prints.get(id(copy))
        if kept is None:
            kept = self._prints[id(copy)] = (copy, render_cache.fingerprint(copy))
        return kept[1]


_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _reads_field(source: str, name: str) -> bool:
    """Does ``source`` read a message field ``name`` (``.name``, ``['name']``, ``get('name')``)?  The word
    alone says nothing: a comment saying "no reasoning" reads no ``reasoning``."""
    return re.search(rf"\.{re.escape(name)}\b|['\"]{re.escape(name)}['\"]", source) is not None


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
    if not any(_reads_field(source, f) for f in fields):
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
