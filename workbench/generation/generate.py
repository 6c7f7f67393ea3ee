"""``Generator``: a token loop you can step through, with the grammar's mask recorded at every step.

One step is: logits (one forward with the KV cache) -> the grammar's bitmask (``fill_next_token_bitmask``)
-> masked logits -> sampling -> ``accept`` -> parser events.  Every step yields a :class:`Step` that says
what the grammar allowed (count, a coarse heat strip, the top candidates *before* masking and whether each
was allowed), what it forced next (jump-forward string), which phase the answer was in, and where the time
went (forward, mask, sample, record, parse).

Controls (all callable from a worker thread): :meth:`step`, :meth:`run`, :meth:`run_to_end`, :meth:`pause`,
:meth:`rewind` (matcher rollback + KV-cache crop + parser state restored), :meth:`force` (refused with the
reason when the grammar masks the token), :meth:`set_constrained`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.generation.bitmask import STRIP_BUCKETS, full_summary, is_allowed, summarize, unpack
from workbench.generation.detok import IncrementalText
from workbench.generation.kv import cache_name, forward_with_cache
from workbench.generation.loaded import LoadedModel
from workbench.generation.matcher import ConstrainedMatcher
from workbench.generation.sampling import SamplingConfig, sample_token, top_k
from workbench.generation.step import Candidate, Step
from workbench.runtime.chat import Message, Tool, ToolCall
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.events import Diagnostic, Event
from workbench.runtime.formats import family
from workbench.runtime.grammar import GrammarPlan, build_grammar
from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource

MAX_RESAMPLES = 16
#: The session settings that are parse options (:func:`parse_settings`), read back on replay.
PARSE_SETTINGS = ("enable_thinking", "thinking_opened", "parallel_tool_calls")
#: Longest prompt, in tokens, a generation accepts when the model does not state its own context length.
#: Prefill memory grows with the prompt (the KV cache and one layer's activations; the logits are computed
#: for the last position only), so an unbounded prompt could take all memory.
DEFAULT_MAX_PROMPT_TOKENS = 32768
# Parser snapshots are taken every this many steps; a rewind restores the nearest one at or before the
# target and re-feeds the few steps after it (feeding is ~10 us a chunk, a snapshot costs milliseconds).
PARSER_CHECKPOINT_EVERY = 32


class ForceRefused(WorkbenchError):
    """A forced token is not allowed here; the message says why (grammar phase, what it expects)."""


class GenerationError(WorkbenchError):
    """Generation cannot start or continue (no template, prompt too long, finished...)."""


@dataclass(frozen=True)
class GenerationResult:
    """What :meth:`Generator.message` returns when the parsers are unavailable (same shape as ParseResult)."""

    message: Message
    diagnostics: list[Diagnostic]

    def to_contract(self) -> dict[str, Any]:
        out = self.message.to_contract()
        out["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        return out


@dataclass(frozen=True)
class PastPosition:
    """A generator's grammar at an earlier step (:meth:`Generator.position_before`): the same attributes
    the "why" questions (:mod:`workbench.generation.why`) read from a live generator."""

    matcher: ConstrainedMatcher
    text: str
    plan: GrammarPlan
    vocab_size: int
    loaded: LoadedModel
    index: int


def render_prompt(
    loaded: LoadedModel,
    messages: Sequence[Message | Mapping[str, Any]],
    tools: Sequence[Tool],
    template: TemplateSource | str | None,
    *,
    reasoning: bool,
    template_kwargs: Mapping[str, Any] | None = None,
) -> str:
    """The prompt text: the given template (or the tokenizer's own) with the generation prompt added;
    ``template_kwargs`` are template switches (``reasoning_effort``, ...) passed to the render."""
    from workbench.template.render import check_template_kwargs, render

    switches = check_template_kwargs(template_kwargs or {})  # never a render argument (``time_limit``)
    if isinstance(template, TemplateSource):
        src = template.for_tools(bool(tools))
        text, kwargs = src.text, src.render_kwargs()
    else:
        own = getattr(loaded.tokenizer, "chat_template", None)
        text = template if isinstance(template, str) else (own if isinstance(own, str) else "")
        kwargs = {
            "bos_token": loaded.tokenizer.bos_token or "",
            "eos_token": loaded.tokenizer.eos_token or "",
        }
    if not text or not isinstance(text, str):
        raise GenerationError(f"{loaded.name} has no chat template: pass one with --template")
    return render(
        text,
        list(messages),
        tools=list(tools) or None,
        add_generation_prompt=True,
        **{**kwargs, "enable_thinking": reasoning, **switches},
    )


class Generator:
    """Step-wise constrained generation for one conversation (see the module docstring).

    Args:
        loaded: model + tokenizer (:func:`workbench.generation.model.load_model`).
        spec: the output format; the grammar and the parser both come from it.
        messages: the conversation so far (the prompt); OpenAI dicts are passed to the template as they are
            (tool-call arguments as dicts, as transformers does).
        tools: tools offered; their schemas constrain the arguments.
        tool_choice: ``auto`` | ``required`` | ``none`` | a tool name.
        constrain: apply the grammar's mask (can be toggled with :meth:`set_constrained`).
        sampling: greedy by default.
        template: renders the prompt; default the tokenizer's own chat template.
        reasoning: the model may think (``enable_thinking``); thinking is never masked.
        parallel: allow several tool calls when the spec supports them.
        max_new_tokens: the answer's length limit.
        top_candidates: how many pre-mask candidates each step records.
        template_kwargs: template switches the prompt is rendered with (``--kw``); whether the output starts
            inside reasoning is read off that prompt.
    """

    def __init__(
        self,
        loaded: LoadedModel,
        spec: FormatSpec,
        *,
        messages: Sequence[Message | Mapping[str, Any]],
        tools: Sequence[Tool] = (),
        tool_choice: Any = "auto",
        constrain: bool = True,
        sampling: SamplingConfig | None = None,
        template: TemplateSource | str | None = None,
        reasoning: bool = True,
        parallel: bool = True,
        max_new_tokens: int = 256,
        top_candidates: int = 8,
        any_whitespace: bool = False,
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        import torch
        import xgrammar as xgr

        self.loaded = loaded
        self.spec = spec
        self.tools = list(tools)
        self.sampling = sampling or SamplingConfig()
        self.max_new_tokens = max_new_tokens
        self.top_candidates = top_candidates
        self.reasoning = reasoning and (spec.reasoning.mode != "none" or _reasons_in_format(spec))
        # reasoning off on a template whose thinking switch is its own (``thinking``) sets that switch too
        from workbench.analysis.switches import with_thinking_switch

        template_kwargs = with_thinking_switch(spec, reasoning, template_kwargs)
        self.template_kwargs: dict[str, Any] = dict(template_kwargs)  # what the prompt was rendered with
        self.prompt = render_prompt(
            loaded, messages, self.tools, template, reasoning=reasoning, template_kwargs=template_kwargs
        )
        _check_prompt_length(loaded, self.prompt)
        if template_kwargs and spec.output_start_stage(generation_prompt=self.prompt) in (
            "content",
            "answer",
        ):
            self.reasoning = False  # a switch closed reasoning in the prompt (reasoning_effort=none)
        opened = self.reasoning and spec.output_starts_in_reasoning(generation_prompt=self.prompt)
        self.plan: GrammarPlan = build_grammar(
            spec,
            self.tools,
            tool_choice=tool_choice,
            parallel=parallel,
            reasoning=self.reasoning,
            thinking_opened=opened,
            any_whitespace=any_whitespace,
        )
        self.vocab_size = loaded.vocab_size
        self._token_bytes = loaded.token_bytes()
        self.stop_ids = self._stop_token_ids()
        marker_ids = {i for m in self.plan.markers if (i := loaded.single_token_id(m)) is not None}
        grammar_stops = [i for i in self.stop_ids if i not in marker_ids] or list(self.stop_ids)
        self._grammar_stops = grammar_stops
        self.matcher = ConstrainedMatcher(
            self.plan, loaded.compile_structural_tag, self._token_bytes, stop_token_ids=grammar_stops
        )
        self.constrain = constrain
        self.matcher.set_enabled(constrain)
        self._bitmask = xgr.allocate_token_bitmask(1, self.vocab_size)
        self._full = full_summary(self.vocab_size)
        ids = loaded.tokenizer.encode(self.prompt, add_special_tokens=False)
        if not ids:
            raise GenerationError("the rendered prompt is empty")
        limit = max_prompt_tokens(loaded)
        if len(ids) > limit:
            raise GenerationError(
                f"the rendered prompt has {len(ids)} tokens, more than this model's limit of {limit}"
            )
        self.prompt_ids: list[int] = list(ids)
        self.token_ids: list[int] = []
        self.steps: list[Step] = []
        self._text = IncrementalText()
        self._cache: Any = None
        self._cache_name = cache_name(loaded.model)  # "cache" on transformers 5.2x (no deprecation warning)
        self._logits: Any = None
        self._pending: list[int] = list(self.prompt_ids)  # tokens to feed before the next logits
        self._parser = self._make_parser()
        self._parser_snaps: dict[int, Any] = {}  # step index -> parser snapshot taken before that step
        self._pause = threading.Event()
        self._lock = threading.RLock()
        self.finished = False
        self.finish_reason = ""
        self._torch = torch

    # ------------------------------------------------------------------------------ setup helpers
    def _stop_token_ids(self) -> list[int]:
        """End-of-turn tokens, minus the reasoning markers (Harmony's ``<|end|>`` ends the analysis message,
        not the turn, although the template lists it as an end marker)."""
        ids = list(self.loaded.eos_token_ids())
        for marker in (*self.spec.end_markers, self.spec.eos_token):
            i = self.loaded.single_token_id(marker)
            if i is not None:
                ids.append(i)
        gate = self.plan.reasoning
        keep_going = {self.loaded.single_token_id(m) for m in ((gate.start, gate.end) if gate else ())}
        return [i for i in dict.fromkeys(ids) if i not in keep_going]

    def parse_settings(self) -> dict[str, bool]:
        """:func:`parse_settings` of this generator (pure)."""
        return parse_settings(self)

    def _make_parser(self) -> Any:
        try:
            from workbench.runtime.parsing import ParseOptions, StreamParser
        except ImportError:
            return None
        settings: dict[str, Any] = self.parse_settings()
        return StreamParser(self.spec, self.tools, options=ParseOptions(**settings))

    # ------------------------------------------------------------------------------ the model
    def _next_logits(self) -> Any:
        if self._logits is None:
            torch = self._torch
            with torch.inference_mode():
                logits, self._cache = forward_with_cache(
                    self.loaded.model,
                    self._cache_name,
                    torch.tensor([self._pending], dtype=torch.long),
                    self._cache,
                    logits_to_keep=1,  # prefill: the vocabulary-sized logits of the last position only
                )
            self._logits = logits[0, -1].float()
            self._pending = []
        return self._logits

    def _crop_cache(self, length: int) -> None:
        cache = self._cache
        current = cache.get_seq_length()
        if current > length:
            try:
                cache.crop(length - current)  # transformers >= 5: a negative count removes tokens
            except ValueError:
                cache.crop(length)  # older transformers: the absolute length to keep

    # ------------------------------------------------------------------------------ controls
    def step(self) -> Step:
        """Generate one token.  Raises GenerationError when generation has finished."""
        return self._step(None)

    def force(self, token_id: int) -> Step:
        """Make the next token ``token_id``; ForceRefused (state unchanged) when the grammar masks it."""
        if not 0 <= token_id < self.vocab_size:
            raise ForceRefused(f"token id {token_id} is outside the vocabulary (0..{self.vocab_size - 1})")
        return self._step(token_id)

    def prefill(self) -> None:
        """Read the prompt (the first forward) now, so a caller can pause between it and the first token."""
        with self._lock:
            if not self.finished:
                self._next_logits()

    def apply_jump_forward(self) -> list[Step]:
        """Force the tokens of the grammar's jump-forward string (the text it allows and nothing else).

        The string is tokenized as the model's tokenizer would write it; each token is forced, so the usual
        refusal applies if the grammar disagrees with the tokenization (the tokens forced before it are
        rewound).  GenerationError when the grammar forces nothing here.
        """
        with self._lock:
            jump = self.matcher.jump_forward()
            if not jump:
                where = (
                    "outside the grammar" if not self.matcher.constrained else f"in the {self.phase} grammar"
                )
                raise GenerationError(
                    f"no jump-forward string at step {len(self.steps)}: nothing is forced {where}"
                )
            ids = self.loaded.tokenizer.encode(jump, add_special_tokens=False)
            steps: list[Step] = []
            try:
                for token in ids:
                    if self.finished:
                        break
                    steps.append(self._step(int(token)))
            except Exception:
                self.rewind(len(steps))  # all or nothing: a refused token leaves no half-written string
                raise
            return steps

    @property
    def phase(self) -> str:
        """The matcher's phase for the next token (``lead|reasoning|text|tool|answer``)."""
        return self.matcher.phase

    def position_before(self, index: int) -> PastPosition:
        """The grammar as it was when step ``index`` chose its token, for asking "why" about a past step.

        A fresh matcher is fed the tokens before it (microseconds a token; the compiled grammars come from
        the model's compiler cache), so the live matcher, the KV cache and the parser are untouched.  A
        token the grammar rejects was generated with the constraint off: it is followed the way the live
        matcher followed it then (unconstrained, the grammar may lose track).
        """
        with self._lock:
            index = max(0, min(index, len(self.steps)))
            matcher = ConstrainedMatcher(
                self.plan,
                self.loaded.compile_structural_tag,
                self._token_bytes,
                stop_token_ids=self._grammar_stops,
            )
            for token in self.token_ids[:index]:
                if not matcher.accept(token):
                    matcher.set_enabled(False)
                    matcher.accept(token)
                    matcher.set_enabled(True)
            constrained = self.steps[index].constrained if index < len(self.steps) else self.constrain
            matcher.set_enabled(constrained or matcher.active is None)
            text = "".join(self._text.parts[:index])
            return PastPosition(matcher, text, self.plan, self.vocab_size, self.loaded, index)

    def run(self, n: int) -> list[Step]:
        """Up to ``n`` steps; stops early when finished or paused."""
        self._pause.clear()
        out: list[Step] = []
        while len(out) < n and not self.finished and not self._pause.is_set():
            out.append(self.step())
        return out

    def run_to_end(self) -> list[Step]:
        return self.run(self.max_new_tokens - len(self.steps) + 1)

    def pause(self) -> None:
        """Ask a running :meth:`run` to stop after its current step (thread-safe)."""
        self._pause.set()

    def set_constrained(self, on: bool) -> None:
        """Switch the mask on or off; the grammar keeps following either way (see ConstrainedMatcher)."""
        with self._lock:
            self.constrain = on
            self.matcher.set_enabled(on)

    def rewind(self, k: int) -> int:
        """Undo the last ``k`` steps (matcher, KV cache, text and parser); returns the steps left."""
        with self._lock:
            k = max(0, min(k, len(self.steps)))
            if k == 0:
                return len(self.steps)
            keep = len(self.steps) - k
            self.matcher.rollback(k)
            self._text.rewind(k)
            self._restore_parser(keep)
            del self.steps[keep:]
            del self.token_ids[keep:]
            self._logits = None
            if keep == 0:
                self._cache, self._pending = None, list(self.prompt_ids)  # same prefill as the first time
            else:
                self._crop_cache(len(self.prompt_ids) + keep - 1)
                self._pending = [self.token_ids[-1]]
            self.finished, self.finish_reason = False, ""
            return keep

    def _restore_parser(self, keep: int) -> None:
        """Parser state as it was before step ``keep``: nearest checkpoint, then re-feed the text after it."""
        for i in [i for i in self._parser_snaps if i > keep]:
            del self._parser_snaps[i]
        if self._parser is None:
            return
        base = max((i for i in self._parser_snaps if i <= keep), default=None)
        if base is None:
            self._parser = self._make_parser()
            base = 0
        else:
            self._parser.restore(self._parser_snaps[base])
        for text in self._text.parts[base:keep]:
            if text:
                self._parser.feed(text)

    # ------------------------------------------------------------------------------ one step
    def _step(self, forced: int | None) -> Step:
        with self._lock:
            if self.finished:
                raise GenerationError(f"generation has finished ({self.finish_reason}); rewind to continue")
            index = len(self.steps)
            t0 = time.perf_counter()
            logits = self._next_logits()
            t1 = time.perf_counter()
            phase = self.matcher.phase
            masked_now = self.matcher.fill_bitmask(self._bitmask)
            row = self._bitmask[0]
            t2 = time.perf_counter()
            # record: what the step looked like before a token was chosen
            bits = unpack(row.numpy(), self.vocab_size) if masked_now else None
            summary = summarize(bits, STRIP_BUCKETS) if bits is not None else self._full
            jump = self.matcher.jump_forward() if masked_now else ""
            candidates, log_z = self._candidates(logits, row if masked_now else None)
            t3 = time.perf_counter()
            apply_s = 0.0
            allowed: np.ndarray | None = None
            support: np.ndarray | None = None  # the mask's allowed ids, once sampling has listed them
            if forced is not None:
                if masked_now and not is_allowed(row, forced):
                    raise ForceRefused(self._refusal(forced, phase, summary.allowed_count, jump))
                token = forced
            elif masked_now and self.sampling.greedy and any(c.allowed for c in candidates):
                # The best allowed token is the first allowed one among the top candidates (sorted by
                # logit): the argmax of the masked logits, without looking at 150k logits.
                token = next(c.token_id for c in candidates if c.allowed)
            else:
                ta = time.perf_counter()
                support = np.flatnonzero(bits) if bits is not None else None  # the masked logits' support
                allowed = support
                apply_s = time.perf_counter() - ta
                token = sample_token(logits, self.sampling, index, allowed)
            accept_s = 0.0
            for _ in range(MAX_RESAMPLES):
                ta = time.perf_counter()
                ok = self.matcher.accept(token)
                accept_s += time.perf_counter() - ta
                if ok:
                    break
                if forced is not None:
                    raise ForceRefused(
                        f"token {forced} {self._text_of(forced)!r} cannot be written here: "
                        f"{self.matcher.last_rejection}"
                    )
                # The gate rejected what followed a marker inside this token: draw again without it.
                if allowed is None:
                    allowed = np.flatnonzero(bits) if bits is not None else np.arange(self.vocab_size)
                allowed = allowed[allowed != token]
                token = sample_token(logits, self.sampling, index, allowed)
            else:
                raise GenerationError(
                    f"no token the grammar accepts at step {index}: {self.matcher.last_rejection}"
                )
            t5 = time.perf_counter()
            # parse
            is_stop = token in self.stop_ids
            terminated = self.matcher.is_terminated()
            as_text = not is_stop or (masked_now and not terminated)  # a stop token is not part of the answer
            text = self._text.feed(self._token_bytes[token] if as_text else b"")
            if self._parser is not None:
                if index % PARSER_CHECKPOINT_EVERY == 0:
                    self._parser_snaps[index] = self._parser.snapshot()
                events = tuple(self._parser.feed(text)) if text else ()
            else:
                events = (Event("content", text),) if text else ()
            t6 = time.perf_counter()
            chosen, allowed_top = self._chosen_and_allowed(
                logits, log_z, token, candidates, bits, row, masked_now, support
            )
            t7 = time.perf_counter()
            self.token_ids.append(token)
            self._pending = [token]
            self._logits = None
            note = ""
            if is_stop or terminated:
                self.finished, self.finish_reason = True, "stop token" if is_stop else "grammar complete"
            elif len(self.steps) + 1 >= self.max_new_tokens:
                self.finished, self.finish_reason = True, "max_new_tokens"
                note = "max_new_tokens reached"
            if self.matcher.lost:
                note = (note + "; " if note else "") + "grammar lost track (constraint was off)"
            step = Step(
                index=index,
                token_id=token,
                token_text=self._text_of(token),
                allowed_count=summary.allowed_count,
                vocab_size=self.vocab_size,
                candidates=candidates,
                forced=forced is not None,
                constrained=masked_now,
                region="constrained" if masked_now else "free",
                jump_forward=jump,
                mask_strip=summary.strip,
                events=events,
                timings_ms={
                    "forward": (t1 - t0) * 1e3,
                    "mask": (t2 - t1 + apply_s + accept_s) * 1e3,
                    "sample": (t5 - t3 - apply_s - accept_s) * 1e3,
                    "record": (t3 - t2 + t7 - t6) * 1e3,
                    "parse": (t6 - t5) * 1e3,
                },
                finished=self.finished,
                note=note,
                phase=phase,
                text=text,
                chosen=chosen,
                allowed_top=allowed_top,
            )
            self.steps.append(step)
            return step

    def _candidates(self, logits: Any, row: Any) -> tuple[tuple[Candidate, ...], float]:
        """The top candidates before masking, and the log partition function (for the chosen token's prob)."""
        torch = self._torch
        log_z = torch.logsumexp(logits, dim=-1)
        k = min(self.top_candidates, self.vocab_size)
        if k <= 0:
            return (), float(log_z)
        values, ids = top_k(logits, k)
        probs = torch.exp(values - log_z)
        out = []
        for v, i, p in zip(values.tolist(), ids.tolist(), probs.tolist(), strict=True):
            allowed = True if row is None else is_allowed(row, i)
            out.append(
                Candidate(token_id=i, text=self._text_of(i), logit=float(v), prob=float(p), allowed=allowed)
            )
        return tuple(out), float(log_z)

    def _chosen_and_allowed(
        self,
        logits: Any,
        log_z: float,
        token: int,
        candidates: tuple[Candidate, ...],
        bits: np.ndarray | None,
        row: Any,
        masked: bool,
        support: np.ndarray | None = None,
    ) -> tuple[Candidate, tuple[Candidate, ...]]:
        """The chosen token as a candidate (pre-mask logit and probability), and the top allowed tokens by
        renormalised probability: what the inspector shows beside the raw top candidates.  ``support``: the
        mask's allowed ids when sampling already listed them (``np.flatnonzero(bits)``; a 150k scan)."""
        torch = self._torch
        logit = float(logits[token])
        chosen = Candidate(
            token_id=token,
            text=self._text_of(token),
            logit=logit,
            prob=math.exp(logit - log_z),
            allowed=not masked or is_allowed(row, token),
        )
        if not masked or bits is None:
            return chosen, candidates
        ids = support if support is not None else np.flatnonzero(bits)
        if ids.shape[0] == 0:
            return chosen, ()
        sub = logits[torch.from_numpy(ids)]
        k = min(self.top_candidates, int(ids.shape[0]))
        values, at = torch.topk(sub, k)
        probs = torch.exp(values - torch.logsumexp(sub, dim=-1))
        top = tuple(
            Candidate(
                token_id=int(ids[a]),
                text=self._text_of(int(ids[a])),
                logit=float(v),
                prob=float(p),
                allowed=True,
            )
            for v, a, p in zip(values.tolist(), at.tolist(), probs.tolist(), strict=True)
        )
        return chosen, top

    def _text_of(self, token_id: int) -> str:
        if 0 <= token_id < len(self._token_bytes):
            return self._token_bytes[token_id].decode("utf-8", errors="replace")
        return ""

    def _refusal(self, token_id: int, phase: str, allowed: int, jump: str) -> str:
        hint = f"; the grammar writes {jump!r} next" if jump else ""
        return (
            f"token {token_id} {self._text_of(token_id)!r} is masked by the {phase} grammar at step "
            f"{len(self.steps)} ({allowed} of {self.vocab_size} tokens allowed{hint})"
        )

    # ------------------------------------------------------------------------------ results
    @property
    def text(self) -> str:
        """The answer text so far (stop tokens excluded)."""
        return self._text.text

    @property
    def pending(self) -> str:
        """Text the streaming parser holds back (it may start a marker or a call): shown, not yet parsed."""
        return str(self._parser.pending) if self._parser is not None else ""

    @property
    def cut_inside_grammar(self) -> bool:
        """The run hit ``max_new_tokens`` while a tool call (or forced answer) was still open."""
        m = self.matcher
        return (
            self.finish_reason == "max_new_tokens"
            and m.phase in ("tool", "answer")
            and m.active is not None
            and not m.is_terminated()
        )

    def current_message(self) -> Message:
        """The message so far, as the streaming parser has it: held-back text (a marker or a call still
        being written) is not in it, so a partial call never shows as content."""
        if self._parser is None:
            return Message(role="assistant", content=self.text)
        message: Message = self._parser.current()
        return message

    def message(self) -> Any:
        """The answer as parsed (a ``ParseResult``); the streaming parser is left untouched.

        While the run is going, the streaming parser's message (:meth:`current_message`).  Once finished,
        the whole text parsed from scratch, except when ``max_new_tokens`` cut it off inside a tool call:
        then the released message without the incomplete call, and a ``E-TRUNCATED`` diagnostic saying
        what was left unparsed (rather than the call's opening text as content plus an empty call).
        """
        if not self.finished or self.cut_inside_grammar:
            return self._partial_result()
        try:
            from workbench.runtime.parsing import ParseOptions, parse
        except ImportError:
            return GenerationResult(
                Message(role="assistant", content=self.text),
                [Diagnostic("parser_unavailable", "workbench.runtime.parsing is not available")],
            )
        settings: dict[str, Any] = self.parse_settings()
        return parse(self.spec, self.text, self.tools, ParseOptions(**settings))

    def _partial_result(self) -> Any:
        from workbench.runtime.parsing import ParseResult

        message = self.current_message()
        diagnostics = list(self._parser.diagnostics) if self._parser is not None else []
        if not self.finished:
            return ParseResult(message, diagnostics)
        complete: list[ToolCall] = []
        dropped: list[ToolCall] = []
        for call in message.tool_calls:
            try:
                ok = isinstance(json.loads(call.arguments), dict)
            except (TypeError, ValueError):
                ok = False
            (complete if ok else dropped).append(call)
        names = ", ".join(repr(c.name) for c in dropped) or "the call being written"
        held = f"; held back, unparsed: {self.pending!r}" if self.pending else ""
        diagnostics.append(
            Diagnostic(
                "E-TRUNCATED",
                f"max_new_tokens ({self.max_new_tokens}) cut the output off inside a tool call: {names} left "
                f"out as incomplete{held}",
                len(self.text),
                "error",
            )
        )
        return ParseResult(dataclasses.replace(message, tool_calls=tuple(complete)), diagnostics)


def _check_prompt_length(loaded: Any, prompt: str) -> None:
    """Refuse a prompt that cannot fit the context before tokenizing it: a token adds at most
    ``max_token_bytes`` bytes (so at most that many characters), and tokenizing a text of hundreds of MB
    takes minutes and gigabytes (a 120 MB prompt ended in SIGABRT)."""
    limit = max_prompt_tokens(loaded)
    longest = loaded.max_token_bytes()
    if len(prompt) > limit * longest:
        raise GenerationError(
            f"the rendered prompt has {len(prompt):,} characters, more than this model's limit of {limit:,} "
            f"tokens can hold (one token is at most {longest} bytes here): refused before tokenizing"
        )


def max_prompt_tokens(loaded: Any) -> int:
    """The prompt length cap: the model's own context length when its config states one, else the default."""
    config = getattr(loaded.model, "config", None)
    stated = getattr(config, "max_position_embeddings", None)
    if isinstance(stated, int) and stated > 0:
        return stated
    return DEFAULT_MAX_PROMPT_TOKENS


def parse_settings(gen: Any) -> dict[str, bool]:
    """The parser options a generation's output is read with, as the settings a session records
    (:data:`PARSE_SETTINGS`, ``ParseOptions`` fields): the one place that says them, for the generator's own
    parser, the CLI's and the TUI's saved sessions and their replay.  ``gen`` is a :class:`Generator` (its
    ``reasoning`` and ``plan``).  Without ``thinking_opened`` a prompt that opened reasoning would be
    replayed as if it had not."""
    gate = gen.plan.reasoning
    return {
        "enable_thinking": bool(gen.reasoning),
        "thinking_opened": bool(gate is not None and gate.starts_inside),
        "parallel_tool_calls": bool(gen.plan.parallel),
    }


def _reasons_in_format(spec: FormatSpec) -> bool:
    """The format defines a reasoning region of its own (Harmony's analysis channel), whatever the spec's
    reasoning fields say."""
    fam = family(spec.tools.format)
    return fam is not None and fam.implicit_reasoning is not None
