"""What the two grammar targets' proofs share: the tokenizer they are written for, the token-by-token feed and
the per-case proof.

The structural-tag target (xgrammar) and the Lark target (llguidance) prove a grammar the same way: every
applicable round-trip output, tokenized as the model would write it, is fed to a fresh matcher one token at
a time, and the grammar must be able to end there (directly, or after one of the spec's end markers, which
the model writes as its stop token).  Only the matcher differs, so it comes in as a :class:`Feed`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from workbench.proofs import CaseProof, open_tokenizer
from workbench.validate import FAIL, PASS, UNSUPPORTED, ValidationReport

T = TypeVar("T")


@dataclass(frozen=True)
class Feed:
    """One fresh matcher: ``accept(token) -> bool``, ``complete() -> bool`` (it may end here), and
    ``ends_with(marker) -> bool`` (on a copy: it may end after ``marker``)."""

    accept: Callable[[int], bool]
    complete: Callable[[], bool]
    ends_with: Callable[[str], bool]


#: What a proof's reason says when the output goes on after the tokenizer's end of sequence.
AFTER_END_OF_SEQUENCE = "this tokenizer's end of sequence"


def check_tokens(
    feed: Feed,
    ids: Sequence[int],
    decode: Callable[[list[int]], str],
    end_markers: Sequence[str],
    stops: Collection[int] = (),
) -> str:
    """Feed ``ids``; "" when every token is accepted and the grammar can end there (or after one of
    ``end_markers``), else why not, naming the rejected token and what came before it.  ``stops``: the
    tokenizer's end-of-sequence tokens; a token rejected right after one is text the output goes on with
    after the model would have stopped (a format that ends its messages with this tokenizer's end of
    sequence), and the reason says so."""
    for i, token in enumerate(ids):
        if not feed.accept(token):
            before = decode(list(ids[:i]))
            why = f"token {i} {decode([token])!r} rejected after {before[-60:]!r}"
            if i and ids[i - 1] in stops:
                stop = decode([ids[i - 1]])
                why += (
                    f" (the output goes on after {stop!r}, {AFTER_END_OF_SEQUENCE}: a model with"
                    " this tokenizer stops there; prove with the model's own tokenizer, --tokenizer)"
                )
            return why
    if feed.complete():
        return ""
    if any(marker and feed.ends_with(marker) for marker in end_markers):
        return ""
    return f"all {len(ids)} tokens accepted, but the grammar cannot end there"


def prove_cases(report: ValidationReport, check: Callable[[str], str]) -> tuple[CaseProof, ...]:
    """Every round-trip case's output through ``check`` (its reason, "" when accepted); a case validation
    could not apply is unsupported, with its reason."""
    out: list[CaseProof] = []
    for case in report.cases:
        if case.status == UNSUPPORTED:
            out.append(CaseProof(case.id, UNSUPPORTED, case.reason))
            continue
        why = check(case.output)
        out.append(CaseProof(case.id, FAIL if why else PASS, why))
    return tuple(out)


def load_hf_tokenizer(path: str | Path | None) -> tuple[Any, str]:
    """The Hugging Face tokenizer at ``path`` (folder or ``tokenizer.json``) and its name, or, without a
    path, the project's own byte-level BPE (:func:`workbench.generation.tiny.build_fallback_tokenizer`;
    no download).

    Raises:
        ExportError: the tokenizer cannot be read (one line).
    """
    if path is not None:
        return open_tokenizer(path)
    from workbench.generation.tiny import build_fallback_tokenizer

    return build_fallback_tokenizer(), "built-byte-level-bpe"


def cached_tokenizer(cache: dict[str, T], path: str | Path | None, build: Callable[[Any, str, int], T]) -> T:
    """The matcher library's view of the tokenizer at ``path`` (see :func:`load_hf_tokenizer`), built once.

    Both grammar targets cache their view per path (building one over a 150k vocabulary takes seconds) and
    need the vocabulary size counted the same way (added tokens may lie beyond ``len(tokenizer)``); only
    ``build(tokenizer, name, vocab_size)`` differs.
    """
    key = str(path) if path is not None else "<built>"
    if key not in cache:
        tokenizer, name = load_hf_tokenizer(path)
        cache[key] = build(tokenizer, name, max(len(tokenizer), max(tokenizer.get_vocab().values()) + 1))
    return cache[key]
