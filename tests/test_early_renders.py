"""The self-check's first renders, made in a second render worker while the analysis learns the turn
(``workbench.selfcheck.EarlyRenders``).

What ``workbench analyze`` prints must not depend on it: the same analysis and the same verdicts with and
without.  What it buys is that the self-check finds its renders made: fewer of them reach a worker once the
analysis is done.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_probe_prefetch import comparable
from workbench.formats import analyze
from workbench.selfcheck import EarlyRenders, check_spec
from workbench.template import render as render_module
from workbench.template import render_cache, worker
from workbench.template.render import spare_worker_ready
from workbench.template.source import TemplateSource, load_template

REPO = Path(__file__).resolve().parents[1]
SHARED_TEMPLATES = REPO.parent / "shared" / "templates"


def _sources() -> list[TemplateSource]:
    project = sorted((REPO / "templates").rglob("*.jinja"))[:6]
    shared = [SHARED_TEMPLATES / f"{n}.jinja" for n in ("Qwen-Qwen3-0.6B", "openai-gpt-oss-120b")]
    return [load_template(p) for p in project + [p for p in shared if p.is_file()]]


def _analyze_and_check(source: TemplateSource, *, early: bool) -> tuple[Any, Any, int]:
    """The analysis, its verdicts, and the renders the self-check sent to a worker."""
    sent = 0
    batch = worker.RenderPool.render_batch

    def counting(self: worker.RenderPool, source: str, contexts: list[Any], *a: Any, **k: Any) -> Any:
        nonlocal sent
        sent += len(contexts)
        return batch(self, source, contexts, *a, **k)

    with render_cache.cached_renders():
        ahead = EarlyRenders()
        analysis = analyze(source, on_spec=ahead.start if early else None)
        ahead.join()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(worker.RenderPool, "render_batch", counting)
            verdicts = check_spec(analysis.source, analysis.spec)
    return comparable(analysis.to_dict()), [v.to_dict() for v in verdicts], sent


@pytest.fixture
def spare_worker() -> None:
    """A second render worker, booted (the first analysis of a process starts one for the next)."""
    render_module.render("{{ 1 }}", [{"role": "user", "content": "x"}])
    spare_worker_ready()
    pool = worker.get_pool()
    for w in list(pool._idle):  # wait for every idle worker's interpreter
        w.wait_ready()
    assert spare_worker_ready()


@pytest.mark.parametrize("source", _sources(), ids=lambda s: s.name)
def test_the_early_renders_change_nothing_analyze_prints(source: TemplateSource, spare_worker: None) -> None:
    early_analysis, early_verdicts, _ = _analyze_and_check(source, early=True)
    analysis, verdicts, _ = _analyze_and_check(source, early=False)
    assert early_analysis == analysis
    assert early_verdicts == verdicts


def test_the_self_check_finds_its_first_renders_made(spare_worker: None) -> None:
    source = load_template(sorted((REPO / "templates").rglob("*.jinja"))[0])
    _, _, alone = _analyze_and_check(source, early=False)
    _, _, after_early = _analyze_and_check(source, early=True)
    assert alone >= 10
    assert after_early <= alone // 3, (after_early, alone)


def test_nothing_is_made_alongside_when_rendering_in_process() -> None:
    previous = render_module.use_worker(False)
    try:
        assert not spare_worker_ready()
        ahead = EarlyRenders()
        ahead.start(_sources()[0], analyze(_sources()[0]).spec)
        assert ahead._thread is None
    finally:
        render_module.use_worker(previous)


def test_a_template_that_ran_out_of_time_gets_nothing_made_alongside(spare_worker: None) -> None:
    hangs = (
        "{% for m in messages %}{% if m.role == 'assistant' and m.tool_calls %}"
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}"
        "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    told: list[Any] = []
    source = TemplateSource(text=hangs, name="hangs", origin="hangs")
    analyze(source, time_limit=0.5, on_spec=lambda src, spec: told.append(spec))
    assert told == []


def test_a_one_off_analysis_starts_no_second_worker() -> None:
    """A process's first analysis starts no spare worker (a one-off ``workbench analyze`` would pay its boot
    and never use it); the second starts one, and the third renders alongside in it."""
    code = f"""
from workbench.formats import analyze
from workbench.selfcheck import EarlyRenders
from workbench.template import render_cache, worker
from workbench.template.source import load_template
source = load_template({str(sorted((REPO / "templates").rglob("*.jinja"))[0])!r})
started = []
for _ in range(3):
    with render_cache.cached_renders():
        early = EarlyRenders()
        analyze(source, on_spec=early.start)
        started.append((worker.get_pool().started, early._thread is not None))
        early.join()
    for w in list(worker.get_pool()._idle):
        w.wait_ready()
print(started)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[(1, False), (2, False), (2, True)]", out.stdout + out.stderr[-2000:]
