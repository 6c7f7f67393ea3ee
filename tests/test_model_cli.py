"""``workbench model status|fetch``: the default model's cache, without downloading anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.generation import model as model_mod
from workbench.generation.model import FETCH_STAGES, ModelError


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_status_says_not_cached_in_an_empty_cache(cache: Path) -> None:
    result = CliRunner().invoke(app, ["model", "status", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["cached"] is False and data["bytes"] == 0
    assert data["path"].startswith(str(cache))


def test_fetch_failure_is_one_line_and_exit_1(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(target: Path, **_: object) -> None:
        raise ModelError("the default model is not cached and could not be fetched (offline?)")

    monkeypatch.setattr(model_mod, "fetch_default", offline)
    result = CliRunner().invoke(app, ["model", "fetch"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1].startswith("error: the default model is not cached")


def test_fetch_walks_every_stage_and_reports_the_cached_size(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def fake_fetch(target: Path, *, progress: object = None, stage: object = None) -> None:
        for name in FETCH_STAGES:
            seen.append(name)
            stage(name)  # type: ignore[operator]
        target.mkdir(parents=True)
        (target / "model.safetensors").write_bytes(b"x" * 2_000_000)

    monkeypatch.setattr(model_mod, "fetch_default", fake_fetch)
    result = CliRunner().invoke(app, ["model", "fetch"])
    assert result.exit_code == 0, result.stderr
    assert seen == list(FETCH_STAGES)
    assert "(2 MB)" in result.stdout
