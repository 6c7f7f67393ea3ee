"""Rendering the probe variants: once each, with documented fallbacks, never crashing.

Real templates are picky about their inputs in ways that say nothing about their output format: some
concatenate tool-call ``arguments`` as a string, some iterate ``tools`` even when none are given, some read
variables that only a particular serving stack passes (``functions``, ``datetime``), and a few use constructs
that Python's immutable Jinja sandbox refuses (``list.append``).  Each of these has one narrow fallback here;
every fallback taken is written down as a note so the analysis stays explainable.

The fallbacks that concern the template itself (a variable callers must pass, a construct the sandbox
refuses) are :class:`RenderLadder`, shared with validation (``workbench.validate.render.CaseRenderer``),
which must render the very text the spec was read from.  The fallbacks that concern the probe data
(arguments as JSON text, ``tools=[]``) stay here, with the probes.

A render that still fails is *not* an exception for the analysis: the variant is marked failed and every
probe that needs it reports the error on itself (``ProbeResult.error``) while the others carry on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from workbench.analysis.diff import DiffSplit, diff_split
from workbench.analysis.probes import (
    ARG_A,
    ARG_B,
    TOOLS,
    USER,
    USER_TEXT,
    VARIANTS,
    Probe,
    Variant,
    stringify_arguments,
    without_call_ids,
)
from workbench.analysis.workarounds import RENDER_PATCHES
from workbench.template.errors import SKIPPED_AFTER_TIMEOUTS
from workbench.template.render import (
    CONTENT_AS_PARTS,
    TemplateError,
    render,
    render_many,
)
from workbench.template.source import TemplateSource
from workbench.template.variables import undeclared_variables

_UNDEFINED_NAME = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)' is undefined")
_MAX_RETRIES = 6
#: A template that reads a typed part's text names it: ``.text``, ``['text']``, ``== 'text'``.
_NAMES_TEXT = re.compile(r"""\.text\b|['"]text['"]""")
_MAX_TIMEOUTS = 2


@dataclass
class ProbeResult:
    """One probe as run on one template: both renders, their diff, and what the analyzer read from it."""

    id: str
    question: str
    variant_a: Variant
    variant_b: Variant
    render_a: str | None
    render_b: str | None
    diff: DiffSplit | None
    outcome: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "variant_a": {"name": self.variant_a.name, "description": self.variant_a.description},
            "variant_b": {"name": self.variant_b.name, "description": self.variant_b.description},
            "render_a": self.render_a,
            "render_b": self.render_b,
            "diff": self.diff.to_dict() if self.diff is not None else None,
            "outcome": self.outcome,
            "error": self.error,
        }


class VariantFailed(Exception):
    """A variant could not be rendered even with the fallbacks; the message is the template's error."""


@dataclass(frozen=True)
class Fallback:
    """One fallback a :class:`RenderLadder` took: ``kind`` is ``variable`` (``name`` is the variable passed
    as ``''``), ``patch`` (``name`` is the :data:`~workbench.analysis.workarounds.RENDER_PATCHES` entry,
    ``summary`` what it rewrites) or ``content`` (text content passed as typed parts, ``summary`` why).
    Each stage words its own note from it."""

    kind: str
    name: str
    summary: str = ""


#: One render a :class:`RenderLadder` is asked for: messages, tools (None: rendered without), whether the
#: generation prompt is added, and the template variables beneath the ladder's own.
LadderRequest = tuple[Sequence[Any], list[Any] | None, bool, Mapping[str, Any] | None]


class RenderLadder:
    """One template rendered with its template-level fallbacks: the one copy of that ladder.

    Holds the template text with and without tools (patched in place when a render patch applies) and the
    variables passed on the template's behalf.  :meth:`adjust` tries one fallback for an error;
    :meth:`render` retries with fallbacks until the render succeeds or none applies.  ``fallbacks`` lists
    what was taken, in order.  Nothing is written anywhere.
    """

    def __init__(
        self,
        source: TemplateSource,
        *,
        time_limit: float,
        plain_text: str | None = None,
        call_ids: bool = True,
    ) -> None:
        self.source = source
        self.time_limit = time_limit
        # False: tool calls are rendered without ids (a template that writes a call's id in place of its
        # label, and the label with the name only when there is none: :func:`without_call_ids`)
        self.call_ids = call_ids
        # The text rendered without tools, and with them (a config may name a ``tool_use`` template).
        self.texts: dict[bool, str] = {
            False: source.for_tools(False).text if plain_text is None else plain_text,
            True: source.for_tools(True).text,
        }
        self.extra_kwargs: dict[str, Any] = {}
        self.patches: list[str] = []
        self.fallbacks: list[Fallback] = []
        self.render_count = 0
        self._settle_content()

    def _settle_content(self) -> None:
        """Pass text content as typed parts (every render after) when the template reads it only that way.

        A template that iterates message content gets it from vLLM and SGLang as a list of ``{"type":
        "text"}`` parts (their "openai" content format), and one written only for that (a vision model's
        processor template) writes nothing for a plain string: every probe's text would be missing.  One
        render of a user turn tells, by comparison: its text is absent when passed as a string and present
        when passed as a part.  The render is the analysis' own prompt render (shared through the render
        cache); a template that raises on it is left as it is (the probes report the error).  A template
        that never names a part's ``text`` cannot read one: it is not asked (no render)."""
        if not any(_NAMES_TEXT.search(t) for t in set(self.texts.values())):
            return
        user = [dict(USER)]
        try:
            text = self.render_once(user, None, with_tools=False, add_generation_prompt=True)
        except TemplateError:
            return
        if USER_TEXT in text:
            return
        try:
            parts = self.render_once(
                user, None, with_tools=False, add_generation_prompt=True, kwargs={CONTENT_AS_PARTS: True}
            )
        except TemplateError:
            return
        if USER_TEXT in parts:
            self.extra_kwargs[CONTENT_AS_PARTS] = True
            self._took(
                Fallback(
                    "content",
                    "content as parts",
                    "the template writes message text only when it comes as typed parts "
                    '([{"type": "text", "text": ...}], as vLLM and SGLang pass it to a template that '
                    "iterates content): every render passes it so",
                )
            )

    def render_once(
        self,
        messages: Sequence[Any],
        tools: list[Any] | None,
        *,
        with_tools: bool,
        add_generation_prompt: bool,
        base_kwargs: Mapping[str, Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
    ) -> str:
        """One render, no fallback.  Keyword arguments, later winning: the source's special tokens,
        ``base_kwargs``, the variables the ladder passes, ``kwargs``."""
        context = {
            **self.source.render_kwargs(),
            **(base_kwargs or {}),
            **self.extra_kwargs,
            **(kwargs or {}),
        }
        self.render_count += 1
        return render(
            self.texts[with_tools],
            list(messages) if self.call_ids else without_call_ids(messages),
            tools=tools,
            add_generation_prompt=add_generation_prompt,
            time_limit=self.time_limit,
            **context,
        )

    def render_batch(
        self, requests: Sequence[LadderRequest], *, stop_after_timeouts: int | None = None
    ) -> list[str | TemplateError]:
        """Render each request as :meth:`render_once` would (the same context, so the same render-cache
        entry), with one ``render_many`` call per template text instead of one worker round trip per render;
        no fallback is taken (a failure is returned in its slot).  Callers that know the renders they are
        about to ask :meth:`render` for (validation's cases) render them here first: :meth:`render` then
        finds each in the render cache, and takes its fallbacks as before where one failed.
        ``stop_after_timeouts``: see :func:`~workbench.template.render.render_many`."""
        outcomes: list[str | TemplateError | None] = [None] * len(requests)
        by_text: dict[bool, list[tuple[int, dict[str, Any]]]] = {False: [], True: []}
        for index, (messages, tools, generation, base_kwargs) in enumerate(requests):
            context = {**self.source.render_kwargs(), **(base_kwargs or {}), **self.extra_kwargs}
            listed = list(messages) if self.call_ids else without_call_ids(messages)
            call = {**context, "messages": listed, "tools": tools}
            call["add_generation_prompt"] = generation
            by_text[tools is not None].append((index, call))
        for with_tools, calls in by_text.items():
            if not calls:
                continue
            try:
                done = render_many(
                    self.texts[with_tools],
                    [c for _, c in calls],
                    time_limit=self.time_limit,
                    stop_after_timeouts=stop_after_timeouts,
                )
            except TemplateError as exc:  # the text does not compile: every request fails alike
                done = [exc] * len(calls)
            self.render_count += len(calls)
            for (index, _), outcome in zip(calls, done, strict=True):
                outcomes[index] = outcome
        return [o if o is not None else TemplateError("not rendered", kind="render") for o in outcomes]

    def render(
        self,
        messages: Sequence[Any],
        tools: list[Any] | None,
        *,
        add_generation_prompt: bool,
        base_kwargs: Mapping[str, Any] | None = None,
    ) -> str:
        """Render, taking fallbacks while one applies (at most :data:`_MAX_RETRIES`); raises the template's
        :class:`TemplateError` when none does."""
        with_tools = tools is not None
        for attempt in range(_MAX_RETRIES + 1):
            try:
                return self.render_once(
                    messages,
                    tools,
                    with_tools=with_tools,
                    add_generation_prompt=add_generation_prompt,
                    base_kwargs=base_kwargs,
                )
            except TemplateError as exc:
                # the last attempt takes no fallback: its error is the template's
                if attempt == _MAX_RETRIES or self.adjust(exc, with_tools=with_tools) is None:
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    def adjust(self, exc: TemplateError, *, with_tools: bool = False) -> Fallback | None:
        """Take one fallback for ``exc`` (changes the ladder); the fallback, or None when none applies.

        ``with_tools`` says which text raised: an undefined variable counts only when that text reads it
        (a variable set inside the template is a template bug, not something callers pass).
        """
        return self.adjust_variable(exc, with_tools=with_tools) or self.adjust_patch(
            exc, with_tools=with_tools
        )

    def adjust_variable(self, exc: TemplateError, *, with_tools: bool = False) -> Fallback | None:
        """Pass ``''`` for a variable the template reads that callers must pass (``functions``, ...)."""
        if exc.kind != "undefined":
            return None
        m = _UNDEFINED_NAME.search(exc.detail)
        name = m.group(1) if m else None
        if name and name not in self.extra_kwargs and name in undeclared_variables(self.texts[with_tools]):
            self.extra_kwargs[name] = ""
            return self._took(Fallback("variable", name))
        return None

    def adjust_patch(self, exc: TemplateError, *, with_tools: bool = False) -> Fallback | None:
        """Rewrite a construct the sandbox refuses (each patch once), in both texts."""
        for patch in RENDER_PATCHES:
            if patch.name in self.patches or not patch.matches(exc, self.texts[with_tools]):
                continue
            self.texts = {k: patch.apply(v) for k, v in self.texts.items()}
            self.patches.append(patch.name)
            return self._took(Fallback("patch", patch.name, patch.summary))
        return None

    def _took(self, fallback: Fallback) -> Fallback:
        self.fallbacks.append(fallback)
        return fallback


class ProbeRenderer:
    """Renders variants of one template on demand and caches them by variant name.

    Pure with respect to the template source: nothing is written anywhere; ``notes`` collects the
    fallbacks that were needed, ``failures`` the variants that could not be rendered.
    """

    def __init__(self, source: TemplateSource, *, time_limit: float, call_ids: bool = True) -> None:
        self.source = source
        self.time_limit = time_limit
        self._ladder = RenderLadder(source, time_limit=time_limit, plain_text=source.text, call_ids=call_ids)
        self._empty_tools = False
        self._cache: dict[str, str] = {}
        self._string_args: set[str] = set()
        self.failures: dict[str, str] = {}
        self.notes: list[str] = []
        self.notes.extend(f"render fallback: {f.summary}" for f in self._ladder.fallbacks)
        self._timeouts = 0
        self._switch_timeouts = 0  # renders with a switch set (render_with, prefetch) that timed out

    # ------------------------------------------------------------------------------------------- public
    @property
    def patched_source(self) -> str:
        """The (possibly patched) template text actually rendered."""
        return self._ladder.texts[False]

    @property
    def render_count(self) -> int:
        """Template renders made so far (fallback retries included)."""
        return self._ladder.render_count

    @property
    def timed_out(self) -> bool:
        """Has any render of this template run out of time (probes or switch values)?"""
        return bool(self._timeouts or self._switch_timeouts)

    @property
    def args_as_text(self) -> bool:
        """True when tool-call arguments had to be passed as JSON text (the template concatenates them)."""
        return bool(self._string_args)

    def get(self, name: str) -> str | None:
        """The render of variant ``name``, or None when it failed (see ``failures``)."""
        try:
            return self.render(name)
        except VariantFailed:
            return None

    def render(self, name: str) -> str:
        if name in self._cache:
            return self._cache[name]
        if name in self.failures:
            raise VariantFailed(self.failures[name])
        variant = VARIANTS[name]
        if self._timeouts >= _MAX_TIMEOUTS:
            # A template that ran out of time twice would only burn the time limit on every variant left.
            self.failures[name] = "skipped: the template already timed out twice"
            raise VariantFailed(self.failures[name])
        if variant.same_as and not self._reads_any(variant.kwargs):
            # A template cannot react to a variable it never names: reuse the render without it.
            try:
                text = self.render(variant.same_as)
            except VariantFailed as exc:
                self.failures[name] = str(exc)
                raise
            self._cache[name] = text
            return text
        try:
            text = self._render_with_fallbacks(variant)
        except TemplateError as exc:
            self.failures[name] = str(exc)
            if exc.kind in ("timeout", "cancelled"):
                self._timeouts += 1
            raise VariantFailed(str(exc)) from None
        self._cache[name] = text
        return text

    def prefetch_variants(self, names: Sequence[str]) -> None:
        """Render the variants ``names`` (which the phases are about to ask for, in that order) in one
        worker round trip instead of one each, and cache each exactly as :meth:`render`
        would have: a render that succeeds as it is (for a call, without printing the arguments' Python
        repr) is kept; any other failure is left to :meth:`render` and its fallbacks, which render it again.

        A timeout is what one render at a time would have met first: the batch stops at it
        (``stop_after_timeouts=1``) and it counts against the probes' :data:`_MAX_TIMEOUTS` as it would have,
        so a template that hangs costs the time limits it cost before, and the variants after it are
        rendered on demand.  Only the template text already compiled is rendered here (a config's separate
        ``tool_use`` text is compiled on demand, where a compile that times out is counted).
        """
        ladder = self._ladder
        variants = []
        for name in dict.fromkeys(names):
            variant = VARIANTS[name]
            if name in self._cache or name in self.failures:
                continue
            if variant.same_as and not self._reads_any(variant.kwargs):
                continue  # :meth:`render` reuses another variant's render
            if variant.tools and ladder.texts[True] != ladder.texts[False]:
                continue  # another text (a config's ``tool_use`` template), not compiled yet: on demand
            variants.append(variant)
        if not variants or self._timeouts >= _MAX_TIMEOUTS:
            return
        calls = [self._call_of(variant) for variant in variants]
        try:
            outcomes = render_many(
                ladder.texts[False], calls, time_limit=self.time_limit, stop_after_timeouts=1
            )
        except TemplateError:  # the text does not compile: :meth:`render` reports it per variant
            return
        for variant, outcome in zip(variants, outcomes, strict=True):
            if isinstance(outcome, str):
                ladder.render_count += 1
                if not (variant.has_calls and _ARGS_REPR.search(outcome)):
                    self._cache[variant.name] = outcome
            elif outcome.detail == SKIPPED_AFTER_TIMEOUTS:
                continue  # not rendered: :meth:`render` makes it when a phase asks
            else:
                ladder.render_count += 1
                if outcome.kind in ("timeout", "cancelled"):
                    self.failures[variant.name] = str(outcome)
                    self._timeouts += 1

    def prefetch(self, batches: Sequence[Sequence[tuple[Variant, Mapping[str, Any]]]]) -> None:
        """Render (variant, extra kwargs) pairs with one worker round trip per batch (``render_many``) and
        cache those that render as they are; the others are left to :meth:`render_with` and its fallbacks.

        Switch probing renders a few conversations per candidate value: a batch per candidate instead of
        one pipe round trip per render keeps the analysis' time close to what it was without switches.  A
        render that times out counts against a :data:`_MAX_TIMEOUTS` budget of its own and stops the
        batches after it, so a template that loops forever for one switch value costs at most one batch of
        time limits and leaves the probes proper their own budget.
        """
        for requests in batches:
            seen: set[str] = set()
            by_tools: dict[bool, list[tuple[str, Variant, dict[str, Any]]]] = {False: [], True: []}
            for variant, kwargs in requests:
                key = _switch_key(variant, kwargs)
                if variant.has_calls or key in self._cache or key in self.failures or key in seen:
                    continue
                seen.add(key)
                by_tools[bool(variant.tools)].append((key, variant, dict(kwargs)))
            for with_tools, batch in by_tools.items():
                if self._timeouts or self._switch_timeouts >= _MAX_TIMEOUTS:
                    return
                if batch:
                    self._render_batch(batch, with_tools)

    def _render_batch(self, batch: list[tuple[str, Variant, dict[str, Any]]], with_tools: bool) -> None:
        ladder = self._ladder
        calls = [self._call_of(variant, kwargs) for _, variant, kwargs in batch]
        try:
            outcomes = render_many(ladder.texts[with_tools], calls, time_limit=self.time_limit)
        except TemplateError:
            return
        ladder.render_count += len(calls)
        for (key, _, _), outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, str):
                self._cache[key] = outcome
            elif outcome.kind in ("timeout", "cancelled"):
                self.failures[key] = str(outcome)
                self._switch_timeouts += 1

    def _call_of(self, variant: Variant, kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The ``render_many`` call that renders ``variant`` (with extra ``kwargs``) as :meth:`_render_once`
        does without fallbacks: the same context, so the same render-cache entry."""
        tools = list(TOOLS) if variant.tools else ([] if self._empty_tools else None)
        context = {
            **self.source.render_kwargs(),
            **self._ladder.extra_kwargs,
            **variant.kwargs,
            **(kwargs or {}),
        }
        return {
            **context,
            "messages": list(variant.messages),
            "tools": tools,
            "add_generation_prompt": variant.add_generation_prompt,
        }

    def render_with(self, name: str, kwargs: Mapping[str, Any], variant: Variant | None = None) -> str | None:
        """The render of variant ``name`` (or of ``variant``, an ad-hoc one) with extra template ``kwargs``
        (a switch's value), cached; None when it fails.  Switch probing renders the same conversations with
        each candidate value; a failure only means that value is not probed."""
        base = variant if variant is not None else VARIANTS[name]
        key = _switch_key(base, kwargs)
        if key in self._cache:
            return self._cache[key]
        if key in self.failures or max(self._timeouts, self._switch_timeouts) >= _MAX_TIMEOUTS:
            return None
        try:
            text = self._render_with_fallbacks(replace(base, kwargs={**base.kwargs, **kwargs}))
        except TemplateError as exc:
            self.failures[key] = str(exc)
            if exc.kind in ("timeout", "cancelled"):
                self._switch_timeouts += 1  # a budget of its own: the probes proper keep theirs
            return None
        self._cache[key] = text
        return text

    def render_conversation(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: list[Any],
        *,
        add_generation_prompt: bool,
        kwargs: Mapping[str, Any] | None = None,
    ) -> str | None:
        """One render of an ad-hoc conversation with tools (the call-pattern learner's), under the settings
        the probes settled on (arguments as JSON text where the template needs it); None when it fails.
        Once renders have timed out twice, none is tried (a template that hangs on calls costs two time
        limits, whatever the learners ask for)."""
        if max(self._timeouts, self._switch_timeouts) >= _MAX_TIMEOUTS:
            return None
        msgs: list[Any] = stringify_arguments(tuple(messages)) if self.args_as_text else list(messages)
        try:
            return self._ladder.render_once(
                msgs,
                tools,
                with_tools=True,
                add_generation_prompt=add_generation_prompt,
                kwargs=dict(kwargs or {}),
            )
        except TemplateError as exc:
            if exc.kind in ("timeout", "cancelled"):
                self._timeouts += 1
            return None

    def render_conversations(
        self,
        requests: Sequence[tuple[Sequence[Mapping[str, Any]], list[Any], bool]],
        kwargs: Mapping[str, Any] | None = None,
    ) -> list[str | None]:
        """:meth:`render_conversation` of each (messages, tools, add_generation_prompt), in one worker
        round trip (``render_many``) instead of one each: the learners' read-backs know their
        conversations before they look at any."""
        if max(self._timeouts, self._switch_timeouts) >= _MAX_TIMEOUTS:
            return [None] * len(requests)
        if self._timeouts or self._switch_timeouts:
            # A template that has timed out once may hang on each of these: one at a time, so that the
            # second timeout stops the rest (a batch would spend a time limit on every one of them).
            return [
                self.render_conversation(m, t, add_generation_prompt=p, kwargs=kwargs) for m, t, p in requests
            ]
        calls: list[LadderRequest] = []
        for messages, tools, prompt in requests:
            msgs: list[Any] = stringify_arguments(tuple(messages)) if self.args_as_text else list(messages)
            calls.append((msgs, tools, prompt, dict(kwargs) if kwargs else None))
        out: list[str | None] = []
        # As one at a time: after the timeouts that stop :meth:`render_conversation`, nothing more is made.
        left = _MAX_TIMEOUTS - max(self._timeouts, self._switch_timeouts)
        for outcome in self._ladder.render_batch(calls, stop_after_timeouts=left):
            if isinstance(outcome, TemplateError):
                if outcome.kind in ("timeout", "cancelled"):
                    self._timeouts += 1
                out.append(None)
            else:
                out.append(outcome)
        return out

    def run(self, probe: Probe) -> ProbeResult:
        """Render both variants of ``probe`` and diff them; a failed render is recorded, not raised."""
        a = self.get(probe.a)
        b = self.get(probe.b)
        errors = [f"{n}: {self.failures[n]}" for n in (probe.a, probe.b) if n in self.failures]
        split = diff_split(a, b) if a is not None and b is not None else None
        return ProbeResult(
            id=probe.id,
            question=probe.question,
            variant_a=probe.variant_a,
            variant_b=probe.variant_b,
            render_a=a,
            render_b=b,
            diff=split,
            error="; ".join(errors) or None,
        )

    # ------------------------------------------------------------------------------------------- internals
    def _reads_any(self, kwargs: Mapping[str, Any]) -> bool:
        texts = self._ladder.texts
        return any(k in texts[False] or k in texts[True] for k in kwargs)

    def _render_once(self, variant: Variant, *, string_args: bool) -> str:
        # The renderer hands templates plain copies of messages and tools, so the probe data stays intact.
        messages: list[Any] = stringify_arguments(variant.messages) if string_args else list(variant.messages)
        if variant.tools:
            tools: list[Any] | None = list(TOOLS)
        else:
            tools = [] if self._empty_tools else None
        return self._ladder.render_once(
            messages,
            tools,
            with_tools=bool(variant.tools),
            add_generation_prompt=variant.add_generation_prompt,
            kwargs=variant.kwargs,
        )

    def _render_with_fallbacks(self, variant: Variant) -> str:
        last: TemplateError | None = None
        for _ in range(_MAX_RETRIES):
            try:
                text = self._render_once(variant, string_args=False)
            except TemplateError as exc:
                last = exc
                if exc.kind in ("timeout", "cancelled"):
                    raise
                if self._adjust_settings(variant, exc):
                    continue
                if variant.has_calls:
                    try:
                        text = self._render_once(variant, string_args=True)
                    except TemplateError:
                        raise exc from None
                    self._note_string_args(variant)
                    return text
                raise
            if variant.has_calls and _ARGS_REPR.search(text):
                # The template printed the arguments dict with Python's repr: it expects JSON text.
                try:
                    text = self._render_once(variant, string_args=True)
                    self._note_string_args(variant)
                except TemplateError:
                    pass
            return text
        assert last is not None
        raise last

    def _note_string_args(self, variant: Variant) -> None:
        if not self._string_args:
            self.notes.append(
                "tool-call arguments rendered as JSON text: the template concatenates them as strings"
            )
        self._string_args.add(variant.name)

    def _adjust_settings(self, variant: Variant, exc: TemplateError) -> bool:
        """Try one global fallback for ``exc``; True when something changed and a retry makes sense.

        The template-level fallbacks are the shared ladder's (checked against the text without tools, as
        the analysis always has); ``tools=[]`` is the probes' own, tried between the two.
        """
        ladder = self._ladder
        taken = ladder.adjust_variable(exc)
        iterates_none = "NoneType" in exc.detail and "iter" in exc.detail
        if taken is None and not variant.tools and not self._empty_tools and iterates_none:
            self._empty_tools = True
            self.notes.append("the template iterates 'tools' even without tools; analysed with tools=[]")
            self._cache.clear()
            return True
        taken = taken or ladder.adjust_patch(exc)
        if taken is None:
            return False
        if taken.kind == "variable":
            self.notes.append(
                f"the template reads variable {taken.name!r} that callers must pass; analysed with "
                f"{taken.name}=''"
            )
        else:
            self.notes.append(f"render workaround {taken.name!r} applied: {taken.summary}")
        self._cache.clear()
        return True


def _switch_key(variant: Variant, kwargs: Mapping[str, Any]) -> str:
    """The cache key of a variant rendered with extra kwargs (never a plain variant name: it has a ``|``)."""
    return f"{variant.name}|{json.dumps(dict(kwargs), sort_keys=True, default=str)}"


_ARGS_REPR = re.compile(r"\{'(?:" + ARG_A + "|" + ARG_B + r")': '")
