"""The inspector's heat strip on a real xgrammar bitmask: a constrained step shows where the few allowed
tokens are (log scale, empty buckets drawn empty, min/max per bucket), the chosen token's bucket is marked,
and a free step looks different."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from workbench.generation.bitmask import STRIP_BUCKETS, full_summary, summarize, unpack
from workbench.tui.widgets.decode import bucket_counts, bucket_of, draw_strip, log_levels

xgr = pytest.importorskip("xgrammar")


def real_mask() -> tuple[np.ndarray, int]:
    """The bitmask of a small grammar's first token, over the tiny model's real tokenizer."""
    from workbench.generation.tiny import load_tiny_tokenizer

    tok = load_tiny_tokenizer()
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok))
    grammar = xgr.GrammarCompiler(info, max_threads=1).compile_grammar(
        'root ::= "<tool_call>" | "{\\"name\\"" | "Paris" | "zebra"'
    )
    matcher = xgr.GrammarMatcher(grammar)
    mask = xgr.allocate_token_bitmask(1, info.vocab_size)
    matcher.fill_next_token_bitmask(mask)
    return unpack(mask[0].numpy(), info.vocab_size), info.vocab_size


def test_the_strip_shows_where_the_allowed_tokens_are() -> None:
    bits, vocab = real_mask()
    allowed = [int(i) for i in np.flatnonzero(bits)]
    assert 1 < len(allowed) < vocab // 100  # a constrained step: a handful of tokens
    strip = summarize(bits, STRIP_BUCKETS).strip
    counts = bucket_counts(strip, vocab)
    expected = Counter(bucket_of(i, len(strip), vocab) for i in allowed)
    assert counts == [expected.get(b, 0) for b in range(len(strip))]

    chosen = allowed[-1]
    text = draw_strip(strip, vocab, len(strip), chosen=chosen, constrained=True)
    cells, axis = text.plain.split("\n")
    occupied = {i for i, c in enumerate(cells) if c != "·"}
    assert occupied == set(expected)  # drawn exactly where allowed tokens are, empty elsewhere
    assert axis.index("▲") == bucket_of(chosen, len(strip), vocab)
    wide = draw_strip(strip, vocab, 200, chosen=chosen, constrained=True).plain.split("\n")[1]
    assert f"{min(counts)}–{max(counts)}" in wide and "log" in wide and f"chosen id {chosen:,}" in wide


def test_log_levels_make_one_allowed_token_visible_beside_many() -> None:
    levels = log_levels([0, 1, 2000])
    assert levels[0] == 0.0 and levels[2] == 1.0
    assert levels[1] > 0.05  # linear would be 1/2000 and draw like an empty bucket
    assert draw_strip((0.0, 1 / 100, 0.9), 300, 3).plain.split("\n")[0][0] == "·"


def test_a_free_step_looks_different_from_a_constrained_one() -> None:
    vocab = 151_669
    free = draw_strip(full_summary(vocab).strip, vocab, 64, chosen=5, constrained=False)
    cells, axis = free.plain.split("\n")
    assert "free step" in axis and "·" not in cells
    assert len(set(cells)) == 1  # one muted bar
    bits, real_vocab = real_mask()
    constrained = draw_strip(summarize(bits).strip, real_vocab, 64, chosen=5, constrained=True)
    assert constrained.plain.split("\n")[0] != free.plain.split("\n")[0]
