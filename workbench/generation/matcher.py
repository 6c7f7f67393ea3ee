"""``ConstrainedMatcher``: xgrammar matchers behind a reasoning/trigger gate, with token-exact rollback.

The gate reads the *bytes* each token adds (xgrammar's decoded vocabulary, so a marker split across tokens,
or a multi-byte character split across tokens, is still found) and moves through phases:

``lead``      reasoning may still be opened by the model; under a forced call the ``lead`` grammar allows
              the reasoning start marker or the forced answer, under ``auto`` nothing is masked.
``reasoning`` nothing is masked and no matcher is fed, until the reasoning end marker.
``text``      free answer text (``auto``): nothing is masked until the trigger appears.
``tool``      the tool section grammar, engaged at the trigger (the trigger's own bytes are fed to it).
``answer``    the answer grammar, engaged from the first answer token (``required``, a named tool, ``none``).

When a marker ends in the middle of a token, the rest of that token is fed to the next phase's grammar as a
string; if that grammar rejects it, the whole token is rejected (the generator then resamples without it).

Every accepted token pushes one record (phase before, matcher before, which matchers consumed how many
steps), so ``rollback(k)`` undoes exactly k tokens: xgrammar rollback for the steps, the saved phase for the
gate.  With the constraint switched off the matchers keep following; the first token a grammar rejects marks
the constraint *lost* until a rewind goes back before it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.runtime.grammar.plan import GrammarPlan

PHASES = ("lead", "reasoning", "text", "tool", "answer")
CONSTRAINED_PHASES = ("lead", "tool", "answer")


@dataclass(frozen=True)
class GateState:
    phase: str
    buffer: bytes = b""  # lead: the bytes so far; reasoning/text: a tail kept to find split markers
    lost: bool = False  # the active grammar rejected a token written while the constraint was off


@dataclass
class _Record:
    state: GateState
    matcher: Any
    fed: list[tuple[Any, int]] = field(default_factory=list)


class _Reject(Exception):
    """The token cannot be accepted in the current state (internal; turned into ``accept() -> False``)."""


class ConstrainedMatcher:
    """Decide per step whether a mask applies, fill it, and follow the generated tokens.

    Args:
        plan: the grammars and markers (:func:`workbench.runtime.grammar.build_grammar`).
        compile_grammar: structural-tag JSON -> ``xgrammar.CompiledGrammar`` (the engine owns the compiler
            and its tokenizer info; compiled grammars are cached there).
        token_bytes: the bytes of every token id (``TokenizerInfo.decoded_vocab``).
        stop_token_ids: tokens that end the answer once a grammar is complete.
    """

    def __init__(
        self,
        plan: GrammarPlan,
        compile_grammar: Callable[[str], Any],
        token_bytes: Sequence[bytes],
        *,
        stop_token_ids: Sequence[int],
    ) -> None:
        self.plan = plan
        self._compile = compile_grammar
        self._bytes = token_bytes
        self._stop = list(stop_token_ids)
        self._compiled: dict[str, Any] = {}
        self._records: list[_Record] = []
        self.enabled = True
        self.last_rejection = ""
        gate = plan.reasoning
        self.active: Any = None
        if gate and gate.starts_inside:
            self.state = GateState("reasoning")
        elif gate:
            self.state = GateState("lead")
            if plan.lead:
                self.active = self._new("lead")
        else:
            self.state = GateState("text")
            self._enter_answer(b"", _Record(self.state, None))

    # ------------------------------------------------------------------------------ queries (no state change)
    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def constrained(self) -> bool:
        """A mask applies at the next step."""
        return self.enabled and self.active is not None and not self.state.lost

    @property
    def lost(self) -> bool:
        return self.state.lost

    @property
    def accepted_count(self) -> int:
        return len(self._records)

    def is_terminated(self) -> bool:
        """The active grammar accepted its stop token: the answer is complete."""
        return self.active is not None and not self.state.lost and bool(self.active.is_terminated())

    def fill_bitmask(self, bitmask: Any) -> bool:
        """Fill ``bitmask[0]`` for the next token; False (bitmask untouched) when nothing is masked now."""
        if not self.constrained:
            return False
        self.active.fill_next_token_bitmask(bitmask)
        return True

    def jump_forward(self) -> str:
        """The text the grammar forces next (xgrammar's jump-forward string); '' outside a grammar."""
        if not self.constrained:
            return ""
        try:
            return str(self.active.find_jump_forward_string())
        except UnicodeDecodeError:  # the forced bytes stop inside a multi-byte character
            return ""

    # ------------------------------------------------------------------------------ state changes
    def set_enabled(self, on: bool) -> None:
        self.enabled = on

    def accept(self, token_id: int) -> bool:
        """Follow one generated token; False (and no state change) when the active grammar rejects it."""
        rec = _Record(self.state, self.active)
        try:
            self._advance(token_id, self._bytes[token_id] if 0 <= token_id < len(self._bytes) else b"", rec)
        except _Reject as exc:
            for m, n in reversed(rec.fed):
                m.rollback(n)
            self.state, self.active = rec.state, rec.matcher
            self.last_rejection = str(exc)
            return False
        self._records.append(rec)
        return True

    def rollback(self, k: int) -> None:
        """Undo the last ``k`` accepted tokens exactly."""
        k = max(0, min(k, len(self._records)))
        for _ in range(k):
            rec = self._records.pop()
            for m, n in reversed(rec.fed):
                m.rollback(n)
            self.state, self.active = rec.state, rec.matcher

    # ------------------------------------------------------------------------------ the gate
    def _new(self, which: str) -> Any:
        import xgrammar as xgr

        text = self.plan.grammars()[which]
        if text not in self._compiled:
            self._compiled[text] = self._compile(text)
        return xgr.GrammarMatcher(self._compiled[text], override_stop_tokens=self._stop)

    def _feed_token(self, token_id: int, rec: _Record) -> None:
        if self.state.lost or self.active is None:
            return
        if self.active.accept_token(token_id):
            rec.fed.append((self.active, 1))
        elif self.enabled:
            raise _Reject(f"the {self.state.phase} grammar does not allow this token here")
        else:
            self.state = replace(self.state, lost=True)

    def _feed_fresh(self, which: str, data: bytes, rec: _Record) -> None:
        matcher = self._new(which)
        if data and not matcher.accept_string(data):
            if self.enabled:
                raise _Reject(
                    f"the {which} grammar rejects {data.decode('utf-8', 'replace')!r} after the marker"
                )
            self.active, self.state = (
                matcher,
                GateState("tool" if which == "section" else "answer", lost=True),
            )
            return
        if data:
            rec.fed.append((matcher, 1))
        self.active = matcher

    def _advance(self, token_id: int, data: bytes, rec: _Record) -> None:
        phase = self.state.phase
        if phase in ("tool", "answer"):
            self._feed_token(token_id, rec)
        elif phase == "lead":
            self._advance_lead(token_id, data, rec)
        elif phase == "reasoning":
            self._scan_reasoning(self.state.buffer + data, rec)
        else:
            self._scan_text(self.state.buffer + data, rec)

    def _advance_lead(self, token_id: int, data: bytes, rec: _Record) -> None:
        gate = self.plan.reasoning
        assert gate is not None
        self._feed_token(token_id, rec)
        buf = self.state.buffer + data
        start = gate.start.encode()
        if buf.startswith(start):
            self.active = None
            self.state = GateState("reasoning")
            self._scan_reasoning(buf[len(start) :], rec)
        elif start.startswith(buf):
            self.state = replace(self.state, buffer=buf)
        elif self.active is not None:
            # The lead grammar is "reasoning start | answer": having left the first branch, the same
            # matcher now holds the answer.
            self.state = GateState("answer", lost=self.state.lost)
        else:
            self.state = GateState("text")
            self._enter_answer(buf, rec)

    def _scan_reasoning(self, data: bytes, rec: _Record) -> None:
        gate = self.plan.reasoning
        assert gate is not None
        end = gate.end.encode()
        at = data.find(end)
        if at < 0:
            self.state = GateState("reasoning", data[-(len(end) - 1) :] if len(end) > 1 else b"")
            return
        self._enter_answer(data[at + len(end) :], rec)

    def _enter_answer(self, rest: bytes, rec: _Record) -> None:
        if self.plan.answer:
            self.state = GateState("answer")
            self._feed_fresh("answer", rest, rec)
        else:
            self.active = None
            self.state = GateState("text")
            self._scan_text(rest, rec)

    def _scan_text(self, data: bytes, rec: _Record) -> None:
        trigger = self.plan.trigger.encode() if self.plan.section else b""
        if not trigger:
            self.state = GateState("text")
            return
        at = data.find(trigger)
        if at < 0:
            self.state = GateState("text", data[-(len(trigger) - 1) :] if len(trigger) > 1 else b"")
            return
        self.state = GateState("tool")
        self._feed_fresh("section", data[at:], rec)
