"""Answers to "why": where the grammar is, what it expects next, and why a token is masked there.

The inspector asks these questions about the generator's *current* position (the next token): the matcher
is in exactly that state, so every answer is read off xgrammar itself (the active ``GrammarMatcher``, a
``fork`` of it for trial strings, its bitmask and its jump-forward string), never re-derived from the spec.
Nothing here changes the generator: trial strings are fed to a fork (or a fresh matcher of the next
grammar), so asking never moves the matcher.  No Textual: the views in ``workbench.tui`` only draw these.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from workbench.generation.bitmask import is_allowed, unpack
from workbench.runtime.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.generation.loaded import LoadedModel
    from workbench.runtime.grammar import GrammarPlan


class Position(Protocol):
    """What the questions read: a live ``Generator`` (the next token) or a ``PastPosition`` (an earlier
    step's choice, replayed on a fresh matcher)."""

    @property
    def matcher(self) -> Any: ...
    @property
    def text(self) -> str: ...
    @property
    def plan(self) -> GrammarPlan: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def loaded(self) -> LoadedModel: ...


#: The grammar each constrained phase runs (``ConstrainedMatcher`` phases -> ``GrammarPlan.grammars()``).
PHASE_GRAMMAR = {"lead": "lead", "tool": "section", "answer": "answer"}
#: Above this many allowed tokens the first characters are not tallied (a free region allows everything).
FIRST_CHARS_LIMIT = 20000


class WhyError(WorkbenchError):
    """A question the current position cannot answer (e.g. a token that is not in the vocabulary)."""


@dataclass(frozen=True)
class GrammarPosition:
    """Where the matcher is: the phase, its grammar (EBNF), the text inside it and what may come next."""

    phase: str
    grammar: str  # "lead" | "section" | "answer" | "" (free text: nothing masked)
    masked: bool  # a mask applies at the next token
    lost: bool  # the constraint was off and the grammar lost track
    ebnf: str
    inside: str  # the text generated since the current grammar engaged
    jump_forward: str
    allowed_count: int
    vocab_size: int
    first_chars: tuple[tuple[str, int], ...]  # first characters of allowed tokens, most common first
    free_until: str  # in a free region: the marker that engages the grammar ("" when none)

    def expects(self) -> str:
        """One line: what the grammar expects next."""
        if not self.grammar:
            until = f" until {self.free_until!r}" if self.free_until else ""
            return f"free {self.phase} text{until}: nothing is masked"
        if self.lost:
            return "nothing: the grammar lost track while the constraint was off (rewind before that step)"
        parts = []
        if self.jump_forward:
            parts.append(f"exactly {self.jump_forward!r} (jump-forward)")
        if self.first_chars:
            chars = " ".join(_show_char(c) for c, _ in self.first_chars[:16])
            more = " …" if len(self.first_chars) > 16 else ""
            parts.append(f"a token starting with one of: {chars}{more}")
        parts.append(f"{self.allowed_count} of {self.vocab_size} tokens allowed")
        return "; ".join(parts)


@dataclass(frozen=True)
class StringTest:
    """A trial string fed to the grammar from the current position (the generator does not move)."""

    text: str
    accepted_chars: int  # how many characters the grammar took before rejecting one
    complete: bool  # the grammar could end right after the whole string
    message: str

    @property
    def accepted(self) -> bool:
        return self.accepted_chars == len(self.text)


@dataclass(frozen=True)
class WhyAnswer:
    """Why the token ``token_text`` is (or is not) allowed at the current position."""

    token_id: int | None
    token_text: str
    allowed: bool
    message: str


# ------------------------------------------------------------------------------ helpers (pure)
def _show_char(c: str) -> str:
    return {"\n": "\\n", "\t": "\\t", " ": "␠", "\r": "\\r"}.get(c, c)


def first_chars(token_bytes: Any, bits: Any) -> tuple[tuple[str, int], ...]:
    """The first character of every allowed token's text, with counts, most common first.

    A token whose bytes start inside a multi-byte character counts under "�"; an empty token (a stop token)
    under "⏹".  ``bits`` is the unpacked mask (one 0/1 per token id).
    """
    import numpy as np

    counts: Counter[str] = Counter()
    for i in np.flatnonzero(bits).tolist():
        data = token_bytes[i] if i < len(token_bytes) else b""
        if not data:
            counts["⏹"] += 1
            continue
        counts[data[:4].decode("utf-8", errors="replace")[:1]] += 1
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def feed_chars(matcher: Any, text: str) -> int:
    """Feed ``text`` one character at a time to ``matcher`` (a fork: it is changed); the count it took."""
    for n, ch in enumerate(text):
        if not matcher.accept_string(ch.encode("utf-8")):
            return n
    return len(text)


# ------------------------------------------------------------------------------ the questions
def _active(gen: Position) -> Any:
    """The matcher that decides the next token, or None in a free region (or after the grammar lost track)."""
    m = gen.matcher
    return None if m.active is None or m.lost else m.active


def _inside(gen: Position) -> str:
    """The text generated since the current grammar engaged (its element so far)."""
    phase, text, plan = gen.matcher.phase, gen.text, gen.plan
    if phase == "tool" and plan.trigger:
        at = text.rfind(plan.trigger)
        return text[at:] if at >= 0 else text
    if phase == "answer" and plan.reasoning is not None:
        at = text.rfind(plan.reasoning.end)
        return text[at + len(plan.reasoning.end) :] if at >= 0 else text
    if phase in ("lead", "answer"):
        return text
    return ""


def _free_until(gen: Position) -> str:
    phase, plan = gen.matcher.phase, gen.plan
    if phase == "reasoning" and plan.reasoning is not None:
        return plan.reasoning.end
    if phase in ("text", "lead") and plan.section:
        return plan.trigger
    return ""


def _mask_bits(gen: Position, active: Any) -> Any:
    import xgrammar as xgr

    bitmask = xgr.allocate_token_bitmask(1, gen.vocab_size)
    active.fill_next_token_bitmask(bitmask)
    return bitmask[0]


def position(gen: Position) -> GrammarPosition:
    """Where the matcher is now and what it expects next (see :class:`GrammarPosition`)."""
    m = gen.matcher
    active = _active(gen)
    which = PHASE_GRAMMAR.get(m.phase, "") if m.active is not None else ""
    ebnf = gen.plan.ebnf(which) if which else ""
    if active is None:
        return GrammarPosition(
            phase=m.phase,
            grammar=which if m.lost else "",
            masked=False,
            lost=m.lost,
            ebnf=ebnf,
            inside=_inside(gen) if m.lost else "",
            jump_forward="",
            allowed_count=gen.vocab_size if not m.lost else 0,
            vocab_size=gen.vocab_size,
            first_chars=(),
            free_until=_free_until(gen),
        )
    bits = unpack(_mask_bits(gen, active).numpy(), gen.vocab_size)
    count = int(bits.sum())
    try:
        jump = str(active.find_jump_forward_string())
    except UnicodeDecodeError:
        jump = ""
    return GrammarPosition(
        phase=m.phase,
        grammar=which,
        masked=m.constrained,
        lost=False,
        ebnf=ebnf,
        inside=_inside(gen),
        jump_forward=jump,
        allowed_count=count,
        vocab_size=gen.vocab_size,
        first_chars=first_chars(gen.loaded.token_bytes(), bits) if count <= FIRST_CHARS_LIMIT else (),
        free_until=_free_until(gen),
    )


def _fresh(gen: Position, which: str) -> Any:
    import xgrammar as xgr

    return xgr.GrammarMatcher(gen.loaded.compile_structural_tag(gen.plan.grammars()[which]))


def try_string(gen: Position, text: str) -> StringTest:
    """Feed ``text`` to the grammar from the current position, through the same gates the generator uses:
    free text until the marker that engages the grammar, then the grammar (a fork or a fresh matcher)."""
    if not text:
        raise WhyError("type a string to test")
    m, plan = gen.matcher, gen.plan
    active = _active(gen)
    offset = 0
    if active is not None:
        matcher, which = active.fork(), PHASE_GRAMMAR.get(m.phase, m.phase)
    elif m.lost:
        raise WhyError("the grammar lost track while the constraint was off: rewind before that step first")
    else:
        rest = text
        if m.phase == "reasoning" and plan.reasoning is not None:
            at = text.find(plan.reasoning.end)
            if at < 0:
                return StringTest(
                    text, len(text), False, f"accepted: free reasoning until {plan.reasoning.end!r}"
                )
            offset = at + len(plan.reasoning.end)
            rest = text[offset:]
            if plan.answer:
                matcher, which = _fresh(gen, "answer"), "answer"
                return _run(text, offset, matcher, which)
        if not plan.section or not plan.trigger:
            return StringTest(text, len(text), True, "accepted: free text, nothing is masked here")
        at = rest.find(plan.trigger)
        if at < 0:
            return StringTest(
                text, len(text), True, f"accepted: free text (the grammar engages at {plan.trigger!r})"
            )
        offset += at
        matcher, which = _fresh(gen, "section"), "section"
    return _run(text, offset, matcher, which)


def _run(text: str, offset: int, matcher: Any, which: str) -> StringTest:
    took = offset + feed_chars(matcher, text[offset:])
    complete = bool(matcher.is_completed()) if took == len(text) else False
    if took == len(text):
        end = " and the grammar could end here" if complete else "; the grammar needs more after it"
        return StringTest(text, took, complete, f"accepted: all {len(text)} characters{end}")
    try:
        jump = str(matcher.find_jump_forward_string())
    except UnicodeDecodeError:
        jump = ""
    wants = f" (it expects {jump!r} there)" if jump else ""
    return StringTest(
        text,
        took,
        False,
        f"rejected at char {took}: the {which} grammar does not accept {text[took]!r} after "
        f"{text[:took]!r}{wants}",
    )


def resolve_token(gen: Position, token: str | int) -> tuple[int | None, str]:
    """A token id and its text from an id or typed text (``None`` id: the text is not one token)."""
    vocab = gen.loaded.token_bytes()
    if isinstance(token, int) or token.strip().isdigit():
        number = int(token)
        if not 0 <= number < gen.vocab_size:
            raise WhyError(f"token id {number} is outside the vocabulary (0..{gen.vocab_size - 1})")
        return number, vocab[number].decode("utf-8", errors="replace") if number < len(vocab) else ""
    if not token:
        raise WhyError("type a token (its text or its id)")
    found = gen.loaded.single_token_id(token)
    if found is None:
        ids = gen.loaded.tokenizer.encode(token, add_special_tokens=False)
        found = int(ids[0]) if len(ids) == 1 else None
    return found, token


def why_masked(gen: Position, token: str | int) -> WhyAnswer:
    """Whether ``token`` (an id, or text) may come next, and if not, why: what the grammar accepts of its
    text, where it stops, and what the grammar expects instead."""
    tid, text = resolve_token(gen, token)
    where = position(gen)
    label = f"{text!r}" + (f" (id {tid})" if tid is not None else " (not one token: its text is tested)")
    if where.lost:
        return WhyAnswer(tid, text, True, f"{label}: nothing is masked, {where.expects()}")
    if not where.grammar:
        return WhyAnswer(tid, text, True, f"{label} is allowed: {where.expects()}")
    active = _active(gen)
    allowed = is_allowed(_mask_bits(gen, active), tid) if tid is not None else False
    inside = f"; inside the {where.grammar} grammar so far: {where.inside!r}" if where.inside else ""
    if allowed:
        return WhyAnswer(tid, text, True, f"{label} is allowed by the {where.grammar} grammar here{inside}")
    trial = try_string(gen, text) if text else None
    if trial is not None and trial.accepted:
        how = (
            f"its text is accepted, but not as this token (a stop or special token the {where.grammar} "
            "grammar does not allow here)"
        )
    elif trial is not None:
        how = (
            f"the {where.grammar} grammar does not accept its text here: it takes {trial.accepted_chars} of "
            f"{len(text)} characters and rejects {text[trial.accepted_chars]!r}"
        )
    else:
        how = f"the {where.grammar} grammar does not allow it here"
    return WhyAnswer(tid, text, False, f"{label} is masked: {how}{inside}. It expects {where.expects()}")
