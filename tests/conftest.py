"""Shared fixtures: where ../shared is (tests that need it skip cleanly without it), and torch threads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WORKBENCH_SHARED", REPO.parent / "shared"))
PROJECT_TEMPLATES = REPO / "templates"

# No timed assertions in tests (speed is the benchmarks' job): hypothesis' per-example deadline and its
# too-slow health check fail on a shared, loaded machine (a spec round trip took 1.4 s under load 15).
settings.register_profile(
    "workbench", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("workbench")

try:  # two threads ran far slower than one on this machine
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the calling test when it is absent (a fresh clone)."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"../shared not present ({p})")
    return p


def shared_templates() -> list[Path]:
    d = SHARED / "templates"
    return sorted(d.glob("*.jinja")) if d.is_dir() else []


@pytest.fixture
def shared_dir() -> Path:
    return shared_path()
