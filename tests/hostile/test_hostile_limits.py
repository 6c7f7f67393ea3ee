"""Time-limit values, compile bombs, oversized sources, and the worker's life cycle (issue 13)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.template import render as wb_render
from workbench.template import worker
from workbench.template.limits import DEFAULT_MEMORY_LIMIT, MAX_SOURCE_BYTES
from workbench.template.render import (
    CompileTimeout,
    TemplateError,
    TemplateTooLarge,
    TimeLimitError,
    check_time_limit,
    compile_template,
    render,
)
from workbench.template.source import SourceError, load_template

MESSAGES = [{"role": "user", "content": "Hi"}]
REPO = Path(__file__).resolve().parents[2]
SLACK = 3.0


@pytest.fixture(autouse=True, scope="module")
def small_worker() -> Iterator[worker.RenderPool]:
    previous = wb_render.use_worker(True)
    pool = worker.configure(256 << 20)
    yield pool
    worker.configure(DEFAULT_MEMORY_LIMIT)
    wb_render.use_worker(previous)


# --- time-limit values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [math.inf, -math.inf, math.nan, 0, -1, 0.0, "inf", "nan", "abc", None, True, 1e9]
)
def test_time_limit_must_be_finite_and_positive(value: object) -> None:
    with pytest.raises(TimeLimitError) as info:
        check_time_limit(value)
    assert isinstance(info.value, TemplateError)
    assert info.value.kind == "usage"


@pytest.mark.parametrize("value", [0.001, 1, 2.0, "2.5", 3600])
def test_time_limit_accepts_seconds(value: object) -> None:
    assert check_time_limit(value) == float(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [math.inf, math.nan, -1.0, 0.0])
def test_render_refuses_a_non_finite_time_limit(value: float) -> None:
    """``nan`` used to turn the deadline off (every comparison with it is false)."""
    forever = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    started = time.monotonic()
    with pytest.raises(TimeLimitError):
        render(forever, MESSAGES, time_limit=value)
    assert time.monotonic() - started < SLACK


# --- compile bombs and oversized sources ------------------------------------------------------------


def _macros(count: int) -> str:
    return "".join(
        f"{{% macro m{i}(a, b) %}}{{{{ a ~ b }}}}{{% if a %}}x{{% endif %}}{{% endmacro %}}"
        for i in range(count)
    )


def test_many_macros_hit_the_compile_time_limit() -> None:
    source = _macros(5000)  # ~350 KB: 10-30 s to compile
    assert len(source) < MAX_SOURCE_BYTES
    started = time.monotonic()
    with pytest.raises(CompileTimeout) as info:
        render(source, MESSAGES, time_limit=0.5)
    assert info.value.kind == "timeout"
    assert time.monotonic() - started < 0.5 + SLACK
    started = time.monotonic()
    with pytest.raises(CompileTimeout):
        compile_template(source + " ", time_limit=0.5)
    assert time.monotonic() - started < 0.5 + SLACK


def test_a_template_over_the_size_limit_is_refused_before_compiling() -> None:
    tags = "{{ x }}" * 340_000  # 2.4 MB, 340k tags
    started = time.monotonic()
    with pytest.raises(TemplateTooLarge) as info:
        render(tags, MESSAGES)
    with pytest.raises(TemplateTooLarge):
        compile_template(tags)
    assert info.value.kind == "limit"
    assert f"{MAX_SOURCE_BYTES:,}" in str(info.value)
    assert time.monotonic() - started < 1.0


def test_the_size_limit_counts_utf8_bytes() -> None:
    wide = "é" * (MAX_SOURCE_BYTES // 2 + 1)  # fewer characters than the limit, more bytes
    with pytest.raises(TemplateTooLarge):
        compile_template(wide)
    assert render("é" * 1000, MESSAGES) == "é" * 1000


def test_a_huge_template_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.jinja"
    with path.open("wb") as fh:  # sparse: 1 GB on paper, nothing on disk
        fh.truncate(1 << 30)
    started = time.monotonic()
    with pytest.raises(SourceError, match="too large"):
        load_template(path)
    assert time.monotonic() - started < 1.0


def test_a_huge_template_inside_a_config_is_refused(tmp_path: Path) -> None:
    import json

    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps({"chat_template": "x" * (MAX_SOURCE_BYTES + 1)}), encoding="utf-8")
    with pytest.raises(SourceError, match="template too large"):
        load_template(path)


# --- the worker process ------------------------------------------------------------------------------


def test_the_worker_is_a_fresh_interpreter_not_a_fork() -> None:
    """Forking a process that runs threads (or imported torch) is unsafe; the worker execs Python."""
    render("{{ 1 }}", MESSAGES)
    pool = worker.get_pool()
    pid = next(iter(pool._idle)).proc.pid
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"workbench.template.worker_main" in cmdline
    limit = Path(f"/proc/{pid}/limits").read_text()
    line = next(x for x in limit.splitlines() if x.startswith("Max address space"))
    assert str(256 << 20) in line


def test_the_worker_runs_this_package_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m`` puts the working directory first on sys.path: a worker started from a folder holding
    another ``workbench`` (another checkout) ran that one's code, and its protocol."""
    other = tmp_path / "workbench" / "template"
    other.mkdir(parents=True)
    (tmp_path / "workbench" / "__init__.py").write_text("", encoding="utf-8")
    (other / "__init__.py").write_text("", encoding="utf-8")
    (other / "worker_main.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    worker.get_pool().shutdown()
    assert render("{{ messages[0].content }}", MESSAGES) == "Hi"


def test_the_worker_dies_with_its_parent(tmp_path: Path) -> None:
    """A parent killed mid-render leaves no worker behind (idle: closed pipe; busy: CPU limit)."""
    script = textwrap.dedent(
        """
        import os, sys, threading, time
        from workbench.template import render, worker
        render.render("{{ 1 }}", [{"role": "user", "content": "x"}])
        pids = [w.proc.pid for w in worker.get_pool()._idle]
        bomb = ("{% set a = 'a' * 9000000 %}{% set b = a + 'b' %}"
                "{{ ([b, a] * 50000)|sort(case_sensitive=true) }}")
        threading.Thread(target=render.render, args=(bomb, [{"role": "user", "content": "x"}]),
                         kwargs={"time_limit": 1}, daemon=True).start()
        time.sleep(0.5)
        print(" ".join(map(str, pids)), flush=True)
        os._exit(0)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_RENDER_MEMORY_MB": "256"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    pids = [int(p) for p in out.stdout.split()]
    assert pids, out.stderr
    deadline = time.monotonic() + SLACK  # PR_SET_PDEATHSIG: at once (elsewhere: the CPU limit, later)
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_worker_started_from_a_short_lived_thread_outlives_it() -> None:
    """Linux ties the parent-death signal to the starting thread: workers start from a long-lived one."""
    import threading

    worker.configure(256 << 20)
    thread = threading.Thread(target=render, args=("{{ 2 }}", MESSAGES))
    thread.start()
    thread.join(30)
    time.sleep(0.3)
    assert render("{{ 3 }}", MESSAGES) == "3"
    assert worker.get_pool().started == 1


def test_renders_from_several_threads_run_in_parallel_workers() -> None:
    import threading

    outputs: list[str] = []
    slow = (
        "{% for a in range(1000) %}{% for b in range(300) %}{% endfor %}{% endfor %}{{ messages[0].content }}"
    )

    def work() -> None:
        outputs.append(render(slow, MESSAGES, time_limit=30))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert outputs == ["Hi"] * 6
    assert len(worker.get_pool()._idle) <= worker.MAX_WORKERS


def test_in_process_mode_gives_the_same_output() -> None:
    source = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content | upper }}{% endfor %}"
        "{{ strftime_now('%Y') | length }}"
    )
    in_worker = render(source, MESSAGES)
    previous = wb_render.use_worker(False)
    try:
        assert render(source, MESSAGES) == in_worker == "<user>HI4"
    finally:
        wb_render.use_worker(previous)
