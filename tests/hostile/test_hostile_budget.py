"""One deadline and one output cap for everything a template drives (issue 22, item 7).

The per-render time limit used to be the only bound: a template that takes just under it on every render kept
``analyze`` (and ``parse --template``, validation, the self-check) busy for minutes, and renders that each
stayed under the 256 MiB reply cap piled up in the caller (a 20 MB render took ``analyze`` to 1.46 GB; 120 MB
made ``generate`` abort).  Now the renders of one analysis, validation or prompt share a
:class:`~workbench.template.budget.RenderBudget`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.formats import analyze
from workbench.template.budget import MAX_TOTAL_OUTPUT, TOTAL_FACTOR, BudgetExhausted, RenderBudget
from workbench.template.render import render, render_many
from workbench.template.source import TemplateSource
from workbench.validate import validate

REPO = Path(__file__).resolve().parents[2]
# Seconds a render may run past its deadline before the caller has it killed, plus a loaded machine's delay.
SLACK = 3.0
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# Every render walks a loop: a few milliseconds each, well under any time limit, but an analysis makes
# dozens of them.
SLOW = "{% for i in range(10000) %}{% if i < 0 %}x{% endif %}{% endfor %}" + CHATML
# Every render returns 5,000,000 characters: under every per-render cap, 7 of them pass the budget's.
BIG = "{% set s = 'x' * 5000000 %}{{ s }}" + CHATML
# One render of 60,000,000 characters.
HUGE = "{% set s = 'x' * 6000000 %}{% for i in range(10) %}{{ s }}{% endfor %}" + CHATML
MESSAGES = [{"role": "user", "content": "Hi"}]


def _source(text: str, name: str = "t") -> TemplateSource:
    return TemplateSource(text=text, name=name, origin=name)


@pytest.fixture(autouse=True)
def _worker_started() -> None:
    """Start this process's render worker before anything is timed (its start-up is nobody's budget)."""
    render("{{ messages[0].content }}", MESSAGES)


def test_an_analysis_stops_when_its_renders_have_used_the_budget() -> None:
    """Alone, the slow template's analysis completes under its own (default) budget; given a quarter of the
    render time it needs, it stops with the budget's one error instead of returning a partial spec."""
    analyze(_source(SLOW), time_limit=2.0)  # compiled and warm
    whole = RenderBudget(2.0)
    with whole:
        result = analyze(_source(SLOW), time_limit=2.0)
    assert result.render_count > 10 and whole.exhausted is None
    total = round(whole.spent / 4, 3)
    budget = RenderBudget(2.0, total_seconds=total, what="the analysis")
    started = time.monotonic()
    with budget, pytest.raises(BudgetExhausted, match=f"renders took {total:g} s together") as caught:
        analyze(_source(SLOW), time_limit=2.0)
    assert caught.value.kind == "timeout" and str(caught.value).startswith("the analysis stopped")
    assert time.monotonic() - started < total + SLACK
    assert budget.spent >= total and budget.renders < result.render_count


def test_once_spent_every_later_render_is_refused_at_once() -> None:
    budget = RenderBudget(1.0, total_seconds=0.05)
    with budget:
        with pytest.raises(BudgetExhausted):
            for _ in range(1000):
                render(SLOW, MESSAGES)
        started = time.monotonic()
        with pytest.raises(BudgetExhausted):
            render("{{ messages[0].content }}", MESSAGES)
        with pytest.raises(BudgetExhausted):
            render_many("{{ messages[0].content }}", [{"messages": MESSAGES}] * 3)
        assert time.monotonic() - started < 0.5


def test_validation_shares_the_budget_of_its_command() -> None:
    # Each render costs a few times SLOW's: validation shares renders through its render cache, so its
    # distinct renders must add up to more than the budget on any machine.
    source = _source(SLOW.replace("range(10000)", "range(50000)"))
    spec = analyze(source).spec
    with RenderBudget(2.0, total_seconds=0.2, what="validation"), pytest.raises(BudgetExhausted):
        validate(source, spec, time_limit=2.0)
    assert validate(source, spec, time_limit=2.0).cases  # alone, it completes


def test_renders_that_each_fit_stop_at_the_output_budget() -> None:
    started = time.monotonic()
    with pytest.raises(BudgetExhausted, match="characters together") as caught:
        analyze(_source(BIG))
    assert caught.value.kind == "limit"
    assert time.monotonic() - started < 2.0 * TOTAL_FACTOR


def test_one_render_past_the_output_budget_is_refused_in_the_worker() -> None:
    with RenderBudget(2.0, max_output=1000) as budget:
        assert render("{{ 'y' * 900 }}", MESSAGES) == "y" * 900
        with pytest.raises(BudgetExhausted, match="1,000 characters"):
            render("{{ 'y' * 900 }}", MESSAGES)
    assert budget.output == 900


def test_a_budget_is_only_active_inside_its_block() -> None:
    with RenderBudget(2.0, max_output=10), pytest.raises(BudgetExhausted):
        render("{{ 'y' * 20 }}", MESSAGES)
    assert render("{{ 'y' * 20 }}", MESSAGES) == "y" * 20


def _cli_peak(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run the CLI; also the peak resident memory (KiB) of it and every process it started."""
    probe = (
        "import resource, subprocess, sys, json\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps([done.returncode, done.stdout, done.stderr, peak]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    code, stdout, stderr, peak = json.loads(out.stdout)
    return subprocess.CompletedProcess(args, code, stdout, stderr), int(peak)


@pytest.mark.parametrize("text", [BIG, HUGE], ids=["5MB-renders", "60MB-render"])
def test_big_renders_do_not_pile_up_in_analyze(text: str, tmp_path: Path) -> None:
    template = tmp_path / "big.jinja"
    template.write_text(text, encoding="utf-8")
    result, peak_kib = _cli_peak(["analyze", str(template)], tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "characters together" in lines[0], result.stderr
    assert peak_kib < 600 * 1024, f"peak {peak_kib // 1024} MiB"  # was 1.46 GB for 20 MB renders


@pytest.mark.parametrize(
    "command",
    [
        ["parse", "--template", "{t}", "{out}"],
        ["validate", "{t}"],
        ["export", "{t}", "-t", "spec", "-o", "{o}"],
        ["generate", "--template", "{t}", "--messages", "{m}", "--model", "tiny"],
    ],
    ids=["parse", "validate", "export", "generate"],
)
def test_a_60mb_render_stops_every_command_with_one_line(command: list[str], tmp_path: Path) -> None:
    template = tmp_path / "huge.jinja"
    template.write_text(HUGE, encoding="utf-8")
    (tmp_path / "out.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "m.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    args = [
        a.format(t=template, out=tmp_path / "out.txt", o=tmp_path / "spec.json", m=tmp_path / "m.json")
        for a in command
    ]
    result = subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"{MAX_TOTAL_OUTPUT:,} characters" in lines[0], lines[0]
    assert not (tmp_path / "spec.json").exists()


# The prompt opens ``<think>`` and no render closes it, so the analysis tries the template's strings as its
# closer, in batches; the template loops forever on each conversation whose earlier answer holds a ``|``.
# The first two candidates (``<<a>>``, ``<<b>>``) render; most of the next batch hang.
HANGS_ON_CLOSERS = (
    "{% for m in messages %}"
    "{% if m.role == 'assistant' and messages | length == 3 and '|' in m.content %}"
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}"
    "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
    "{{ '<<a>>' if false }}{{ '<<b>>' if false }}"
    + "".join(f"{{{{ '<|c{i}|>' if false }}}}" for i in range(12))
)


def test_a_batch_stops_where_one_render_at_a_time_would() -> None:
    """A batch of renders that hang costs the two time limits that one render at a time cost before the
    analysis stopped rendering them, not a time limit each (which would spend the whole budget)."""
    limit = 0.5
    source = _source(HANGS_ON_CLOSERS, "hangs-on-closers")
    start = time.monotonic()
    result = analyze(source, time_limit=limit)
    took = time.monotonic() - start
    assert result.spec.reasoning.mode == "none"
    assert took < 2 * limit + SLACK, took  # one time limit each: the budget (10 of them) would be spent
    out = render_many(
        HANGS_ON_CLOSERS,
        [
            {"messages": [MESSAGES[0], {"role": "assistant", "content": f"x<|c{i}|>y"}, MESSAGES[0]]}
            for i in range(6)
        ],
        time_limit=limit,
        stop_after_timeouts=2,
    )
    assert [getattr(o, "kind", "text") for o in out] == ["timeout"] * 6
    assert all("already run out of time" in str(o) for o in out[2:])
    assert not any("already run out of time" in str(o) for o in out[:2])
