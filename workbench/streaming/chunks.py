"""The ways any text is fed to a stream parser: one-shot, one character at a time, and seeded random
chunkings (the conformance runner's runs; round-trip validation feeds its outputs the same way)."""

from __future__ import annotations

import random

DEFAULT_SEED = 20260315
RANDOM_CHUNK_LIMITS = (3, 11, 47)


def chunk_runs(text: str, key: str, *, seed: int = DEFAULT_SEED) -> list[tuple[str, tuple[str, ...] | None]]:
    """``oneshot`` (``None``), ``per_char`` and ``random-N`` (chunk lengths up to each of
    :data:`RANDOM_CHUNK_LIMITS`): the ways any text is fed, seeded by ``seed`` and ``key`` (pure; round-trip
    validation feeds its outputs the same way)."""
    runs: list[tuple[str, tuple[str, ...] | None]] = [("oneshot", None), ("per_char", tuple(text))]
    rng = random.Random(f"{seed}:{key}")
    for n, limit in enumerate(RANDOM_CHUNK_LIMITS, start=1):
        pieces: list[str] = []
        i = 0
        while i < len(text):
            step = rng.randint(1, limit)
            pieces.append(text[i : i + step])
            i += step
        runs.append((f"random-{n}", tuple(pieces)))
    return runs
