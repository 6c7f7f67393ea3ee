"""The torch thread policy shared by the CLI and the TUI."""

from __future__ import annotations

import pytest

from workbench.generation import threads


def test_default_leaves_half_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    for cores, expected in ((1, 1), (2, 1), (4, 2), (8, 4), (64, threads.MAX_DEFAULT_THREADS)):
        monkeypatch.setattr(threads, "usable_cores", lambda c=cores: c)
        assert threads.torch_threads({}) == expected


def test_environment_overrides_and_bad_values_are_refused() -> None:
    assert threads.torch_threads({threads.ENV_VAR: "3"}) == 3
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(ValueError, match=threads.ENV_VAR):
            threads.torch_threads({threads.ENV_VAR: bad})


def test_apply_sets_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    before = torch.get_num_threads()
    monkeypatch.setenv(threads.ENV_VAR, "1")
    try:
        assert threads.apply_thread_policy() == 1
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
