"""Shared fixtures: where ../shared is (tests that need it skip cleanly without it), and torch threads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from workbench.paths import shared_dir

REPO = Path(__file__).resolve().parents[1]
SHARED = shared_dir()  # ../shared, or $WORKBENCH_SHARED (the one place that finds it)
PROJECT_TEMPLATES = REPO / "templates"

# No timed assertions in tests (speed is the benchmarks' job): hypothesis' per-example deadline and its
# too-slow health check fail on a shared, loaded machine (a spec round trip took 1.4 s under load 15).
settings.register_profile("workbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions and recovery copies go to the user data directory: a test writes into a temporary one,
    never into the real ``~/.local/share/template-workbench`` (tests that check the platformdirs default
    remove the variable themselves)."""
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path_factory.mktemp("data")))


@pytest.fixture
def no_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engines venv is absent for this test: an export is proven with transformers only and says so.

    For tests about what an export writes, or which profile it picks, not about what an engine makes of it:
    each engine proof costs a harness run that imports vLLM and SGLang (20-40 s), and the engines' own
    tests (``tests/engines/``) prove the same exports through them."""
    monkeypatch.setenv("WORKBENCH_ENGINES_PYTHON", str(REPO / "no-engines-venv-here"))


@pytest.fixture(autouse=True)
def _no_unexpected_tui_error(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """In the TUI tests, no handler may fail: every error ``WorkbenchApp.report_error`` reports (the one
    handler that turns an exception into a notification instead of a traceback) fails the test, unless the
    test is about that handler (``@pytest.mark.tui_error``)."""
    if not request.node.module.__name__.rpartition(".")[2].startswith("test_tui"):
        yield
        return
    from workbench.tui.app import WorkbenchApp

    reported: list[str] = []
    original = WorkbenchApp.report_error

    def record(self: WorkbenchApp, error: BaseException, where: str) -> None:
        reported.append(f"{where}: {type(error).__name__}: {error}")
        original(self, error, where)

    monkeypatch.setattr(WorkbenchApp, "report_error", record)
    yield
    if request.node.get_closest_marker("tui_error") is None:
        assert not reported, f"unexpected errors in the TUI: {reported}"


#: ``make check`` (the fast loop, ``-m "not slow"``) leaves out a test function whose measured time, all its
#: parametrizations together, passes this many seconds (``tests/timings.json``, written by
#: ``scripts/time_tests.py`` from a full run's JUnit report; a function not in it counts as fast).
FAST_BUDGET = 1.5


def _timings() -> dict[str, float]:
    path = REPO / "tests" / "timings.json"
    return dict(json.loads(path.read_text())) if path.is_file() else {}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups off the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``make test`` runs on two pytest-xdist workers with ``--dist loadgroup``: the tests of one engines
    module (or of the modules that name one ``XDIST_GROUP``) stay on one worker, because they share what is
    expensive to make once per process (a cached engines-venv run of every template, a running vLLM or
    SGLang server)."""
    engines = REPO / "tests" / "engines"
    timings = _timings()
    for item in items:
        path = Path(str(item.path))
        name = f"{path.relative_to(REPO).as_posix()}::{getattr(item, 'originalname', item.name)}"
        if timings.get(name, 0.0) > FAST_BUDGET:
            item.add_marker(pytest.mark.slow)
        if path.parent == engines:
            # a module's own group, or the one it shares with modules that read the same cached run
            module = getattr(item, "module", None)
            item.add_marker(pytest.mark.xdist_group(getattr(module, "XDIST_GROUP", path.stem)))
    # The slow tests first (a stable sort: each keeps its place among its kind): the workers take single
    # tests in collection order, and a crawl of minutes collected last ran alone while the other worker
    # idled (the last 2% of a run took a quarter of its time).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
