"""Pieces of the engine with exact expectations: bitmask summaries, sampling, detokenization, top-k."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.generation.bitmask import allowed_ids, is_allowed, summarize, unpack
from workbench.generation.detok import IncrementalText
from workbench.generation.sampling import SamplingConfig, sample_token, top_k


def packed(vocab: int, allowed: set[int]) -> np.ndarray:
    """A bitmask row in xgrammar's layout, built bit by bit."""
    words = [0] * ((vocab + 31) // 32)
    for i in allowed:
        words[i // 32] |= 1 << (i % 32)
    return np.array([w - (1 << 32) if w >= 1 << 31 else w for w in words], dtype=np.int32)


def test_unpacked_bits_match_the_allowed_ids() -> None:
    allowed = {0, 5, 31, 32, 63, 64, 99}
    row = packed(100, allowed)
    bits = unpack(row, 100)
    assert set(np.flatnonzero(bits).tolist()) == allowed
    assert all(is_allowed(row, i) == (i in allowed) for i in range(100))
    assert allowed_ids(bits, 3) == [0, 5, 31]


def test_summary_counts_and_strip_fractions() -> None:
    allowed = set(range(0, 10)) | {95}
    summary = summarize(unpack(packed(100, allowed), 100), buckets=4)
    assert summary.allowed_count == 11
    # buckets of 25 ids: the first holds 10 allowed ids, the last holds 1
    assert summary.strip == (10 / 25, 0.0, 0.0, 1 / 25)


def test_summary_puts_the_remainder_in_the_last_bucket() -> None:
    summary = summarize(np.ones(10, dtype=np.uint8), buckets=3)
    assert summary.allowed_count == 10 and summary.strip == (1.0, 1.0, 1.0)


def test_greedy_and_top_k_one_pick_the_best_allowed_token() -> None:
    logits = torch.tensor([0.0, 5.0, float("-inf"), 4.0])
    assert sample_token(logits, SamplingConfig(), 0) == 1
    assert sample_token(logits, SamplingConfig(temperature=1.0, top_k=1, seed=9), 0) == 1


def test_sampling_never_picks_a_masked_token_and_follows_the_distribution() -> None:
    logits = torch.tensor([float("-inf"), 0.0, float("-inf"), float(np.log(3.0))])
    picks = [sample_token(logits, SamplingConfig(temperature=1.0, seed=1), i) for i in range(2000)]
    assert set(picks) <= {1, 3}
    share = picks.count(3) / len(picks)
    assert 0.70 < share < 0.80  # p = 3/4


def test_top_p_keeps_the_smallest_set_reaching_p() -> None:
    logits = torch.log(torch.tensor([0.6, 0.3, 0.1]))
    picks = {sample_token(logits, SamplingConfig(temperature=1.0, top_p=0.5, seed=4), i) for i in range(200)}
    assert picks == {0}


def test_block_top_k_matches_torch_topk() -> None:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(151_669, generator=gen)
    values, ids = top_k(logits, 8)
    ref_values, ref_ids = torch.topk(logits, 8)
    assert torch.equal(ids, ref_ids) and torch.equal(values, ref_values)


def test_a_character_split_across_tokens_comes_out_once_whole() -> None:
    text = IncrementalText()
    euro = "€".encode()
    assert text.feed(b"a" + euro[:1]) == "a"
    assert text.feed(euro[1:]) == "€"
    text.rewind(1)
    assert text.text == "a"
    assert text.feed(euro[1:] + b"!") == "€!"


@pytest.mark.parametrize(
    "kwargs", [{"temperature": float("nan")}, {"temperature": float("inf")}, {"top_p": 0.0}, {"top_k": -1}]
)
def test_sampling_settings_that_cannot_be_used_are_refused(kwargs: dict[str, float]) -> None:
    from workbench.generation.sampling import SamplingConfig, SamplingError

    with pytest.raises(SamplingError):
        SamplingConfig(**kwargs)  # type: ignore[arg-type]
