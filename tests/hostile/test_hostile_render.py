"""Replays of the adversarial pass (issue 13): render bombs end with a TemplateError naming the limit.

Every bomb runs in a render worker capped at 256 MiB with a time limit of 0.5-1 s, so a regression shows
up as a failed assertion, never as a machine out of memory.  Elapsed-time bounds are generous (the
machine is shared); the bugs they guard against ran for minutes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from workbench.template import render as wb_render
from workbench.template import worker
from workbench.template.limits import DEFAULT_MEMORY_LIMIT
from workbench.template.render import (
    RenderLimitExceeded,
    RenderMemoryLimit,
    RenderOutputTooLarge,
    RenderTimeout,
    TemplateError,
    render,
)

MESSAGES = [{"role": "user", "content": "Hi"}]
CAP = 256 << 20
SLACK = 3.0  # seconds allowed beyond the time limit and the kill grace (worker restart, a loaded machine)


@pytest.fixture(autouse=True, scope="module")
def small_worker() -> Iterator[worker.RenderPool]:
    previous = wb_render.use_worker(True)
    pool = worker.configure(CAP)
    yield pool
    worker.configure(DEFAULT_MEMORY_LIMIT)
    wb_render.use_worker(previous)


def _outcome(source: str, time_limit: float) -> tuple[BaseException | str, float]:
    started = time.monotonic()
    try:
        result: BaseException | str = render(source, MESSAGES, time_limit=time_limit)
    except TemplateError as exc:
        result = exc
    return result, time.monotonic() - started


# Refused by the in-process size guards (the worker runs them too): RenderLimitExceeded, at once.
GUARDED = {
    "sort_10M": "{{ ('x' * 10000000)|list|sort|length }}",
    "sort_list_10M": "{{ ([1] * 10000000)|sort|length }}",
    "groupby_10M": "{{ ([{'a': 1}] * 10000000)|groupby('a')|list|length }}",
    "map_10M": "{{ ([1] * 10000000)|map('string')|list|length }}",
    "unique_10M": "{{ ([1] * 10000000)|unique|list|length }}",
    "batch_fill": "{{ [1]|batch(1000000000, 'x')|list|length }}",
    "slice_many": "{{ [1]|slice(1000000000)|list|length }}",
    "wordwrap_long_word": "{{ ('x' * 1000000)|wordwrap(1) }}",
    "lipsum_1e6": "{{ lipsum(1e6) }}",
    "lipsum_int": "{{ lipsum(1000000) }}",
    "lipsum_words": "{{ lipsum(1, max=100000000) }}",
    "tools_loop_lipsum": "{% for t in range(3) %}{{ lipsum(1000000) }}{% endfor %}",
    "percent_width": "{{ '%0999999999d' % 1 }}",
    "percent_star": "{{ '%*d' % (999999999, 1) }}",
    "format_filter_width": "{{ '%0999999999d'|format(1) }}",
    "str_format_width": "{{ '{:>999999999}'.format(1) }}",
    "expandtabs": "{{ '\\t'.expandtabs(1000000000) }}",
    "center": "{{ 'x'.center(1000000000) }}",
    "center_filter": "{{ 'x'|center(1000000000) }}",
    "zfill": "{{ '1'.zfill(1000000000) }}",
    "indent": "{{ ('a\\n' * 1000000)|indent(1000) }}",
    "replace_empty": "{{ ('x' * 1000000).replace('', 'yyyyyyyyyy') }}",
    "replace_filter": "{{ ('x' * 1000000)|replace('x', 'y' * 100) }}",
    "join_big_separator": "{{ ('x' * 1000000).join(range(100000)|list) }}",
    "doubling_concat": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s|length }}",
    "doubling_plus": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}"
    "{% endfor %}{{ ns.s|length }}",
    "doubling_join": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
    "{% set ns.s = [ns.s, ns.s]|join %}{% endfor %}{{ ns.s|length }}",
    "repeat": "{{ 'x' * 10000000000 }}",
    "power": "{{ 7 ** 100000000 }}",
}


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_size_guards_refuse_one_step_bombs(name: str) -> None:
    result, elapsed = _outcome(GUARDED[name], time_limit=1.0)
    assert isinstance(result, RenderLimitExceeded), result
    assert result.kind == "limit"
    assert "too large" in str(result)
    assert result.line == 1
    assert elapsed < 1.0 + SLACK


# Pass every size guard but need more memory than the worker may have: RenderMemoryLimit.
MEMORY = {
    "join_nine_billion_characters": "{% set s = 'x' * 9000000 %}{{ ([s] * 1000)|join|length }}",
    "nested_lists": "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}"
    "{% set ns.l = ns.l + [[0] * 1000000] %}{% endfor %}{{ ns.l|length }}",
}


@pytest.mark.parametrize("name", sorted(MEMORY))
def test_memory_cap_stops_what_the_guards_let_through(name: str) -> None:
    result, elapsed = _outcome(MEMORY[name], time_limit=2.0)
    assert isinstance(result, RenderMemoryLimit), result
    assert result.kind == "limit"
    assert elapsed < 2.0 + SLACK
    assert render("{{ messages[0].content }}", MESSAGES) == "Hi"  # a fresh worker took over


# Output built piece by piece past the per-render output cap (64 Mi characters): refused in the worker as soon
# as it passes the cap, before the text exists (this bomb used to end at the memory cap, 8 GB into it).
OUTPUT = {
    "output_loop": "{% set s = 'x' * 9000000 %}{% for i in range(900) %}{{ s }}{% endfor %}",
}


@pytest.mark.parametrize("name", sorted(OUTPUT))
def test_output_cap_stops_a_render_before_its_text_exists(name: str) -> None:
    result, elapsed = _outcome(OUTPUT[name], time_limit=2.0)
    assert isinstance(result, RenderOutputTooLarge), result
    assert result.kind == "limit" and "67,108,864 characters" in str(result)
    assert elapsed < 2.0 + SLACK
    assert render("{{ messages[0].content }}", MESSAGES) == "Hi"


def test_list_doubling_stops_at_a_limit() -> None:
    """At the 256 MiB test cap the memory limit comes first; at the default 1 GiB the size guard does."""
    source = (
        "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}"
        "{% endfor %}{{ ns.l|length }}"
    )
    result, elapsed = _outcome(source, time_limit=2.0)
    assert isinstance(result, (RenderLimitExceeded, RenderMemoryLimit)), result
    assert elapsed < 2.0 + SLACK


# One C call that runs for minutes on little memory: only the worker's deadline can stop it.
SLOW_C = {
    # timsort compares 100,000 strings that share a 9-million-character prefix (memcmp each time)
    "sort_long_common_prefix": "{% set a = 'a' * 9000000 %}{% set b = a + 'b' %}"
    "{{ ([b, a] * 50000)|sort(case_sensitive=true)|length }}",
}


@pytest.mark.parametrize("name", sorted(SLOW_C))
def test_worker_deadline_stops_a_single_c_call(name: str) -> None:
    result, elapsed = _outcome(SLOW_C[name], time_limit=0.5)
    assert isinstance(result, RenderTimeout), result
    assert result.kind == "timeout"
    assert "0.5 s" in str(result)
    assert elapsed < 0.5 + SLACK
    assert render("{{ messages[0].content }}", MESSAGES) == "Hi"


def test_loop_bombs_still_name_their_line() -> None:
    """The in-template deadline fires before the worker is killed, so the line is known."""
    source = "x\n{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    result, elapsed = _outcome(source, time_limit=0.5)
    assert isinstance(result, RenderTimeout), result
    assert result.line == 2
    assert elapsed < 0.5 + SLACK


def test_a_busy_render_can_be_cancelled() -> None:
    import threading

    outcome: list[BaseException | str] = []

    def work() -> None:
        outcome.append(_outcome(SLOW_C["sort_long_common_prefix"], time_limit=30)[0])

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    time.sleep(1.0)  # the worker is inside sorted() by now
    started = time.monotonic()
    assert wb_render.cancel_renders() == 1
    thread.join(10)
    assert not thread.is_alive()
    assert time.monotonic() - started < SLACK
    assert isinstance(outcome[0], wb_render.RenderCancelled), outcome[0]
    assert outcome[0].kind == "cancelled"
    assert render("{{ messages[0].content }}", MESSAGES) == "Hi"


def test_guards_do_not_touch_ordinary_values() -> None:
    parts = [
        "[3, 1, 2]|sort|join(',')",
        "'%05d' % 42",
        "'a\\tb'.expandtabs(4)",
        "'x'.center(5)",
        "'{:>4}'.format(7)",
        "'ab' * 3",
        "(['a'] + ['b'])|join",
        "'aXa'.replace('X', 'yy')",
        "'a b c'|wordwrap(3)",
        "'x'|indent(2, true)",
        "lipsum(1, false, 3, 4)|wordcount",
    ]
    source = "{{ " + " ~ '|' ~ ".join(f"({p})" for p in parts) + " }}"
    assert render(source, MESSAGES) == "1,2,3|00042|a   b|  x  |   7|ababab|ab|ayya|a b\nc|  x|3"


def test_render_many_equals_render_call_by_call() -> None:
    source = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}{% if flag %}!{% endif %}"
        "{% if messages[0].content == 'boom' %}{{ raise_exception('no') }}{% endif %}"
    )
    calls: list[dict[str, object]] = [
        {"messages": MESSAGES},
        {"messages": MESSAGES, "add_generation_prompt": True, "flag": True},
        {"messages": [{"role": "user", "content": "boom"}]},
        {"messages": []},
        {"messages": [*MESSAGES, {"role": "assistant", "content": "Hel"}], "continue_final_message": True},
    ]
    expected: list[str | type[TemplateError]] = []
    for call in calls:
        try:
            expected.append(render(source, **call))  # type: ignore[arg-type]
        except TemplateError as exc:
            expected.append(str(exc))  # type: ignore[arg-type]
    got = [r if isinstance(r, str) else str(r) for r in wb_render.render_many(source, calls)]
    assert got == expected
    assert got[4].endswith("<assistant>Hel")


def test_render_many_survives_a_bomb_in_the_batch() -> None:
    bomb = SLOW_C["sort_long_common_prefix"]
    source = "{% if flag %}" + bomb.replace("{{", "{{ ").replace("}}", " }}") + "{% else %}ok{% endif %}"
    calls = [{"messages": MESSAGES}, {"messages": MESSAGES, "flag": True}, {"messages": MESSAGES}]
    started = time.monotonic()
    results = wb_render.render_many(source, calls, time_limit=0.5)
    assert results[0] == results[2] == "ok"
    assert isinstance(results[1], RenderTimeout)
    assert time.monotonic() - started < 3 * 0.5 + 0.5 + 2 * SLACK


def test_a_bomb_in_a_long_batch_costs_one_time_limit_not_one_per_call() -> None:
    """The worker replies to each call of a batch as it is done, and each is waited for as one render: a
    C-level bomb is stopped after its own time limit (the batch used to be waited for as a whole, up to a
    time limit per call, 10 s here), the calls before it keep their texts, and the calls after it are
    rendered, or, once the batch's timeouts are spent, not made."""
    bomb = SLOW_C["sort_long_common_prefix"]
    source = "{% if flag %}" + bomb.replace("{{", "{{ ").replace("}}", " }}") + "{% else %}ok{% endif %}"
    calls: list[dict[str, Any]] = [{"messages": MESSAGES} for _ in range(20)]
    calls[2] = {"messages": MESSAGES, "flag": True}
    for stop, after in ((None, "ok"), (1, "not made")):
        started = time.monotonic()
        results = wb_render.render_many(source, calls, time_limit=0.5, stop_after_timeouts=stop)
        assert time.monotonic() - started < 2 * (0.5 + 0.5) + SLACK
        assert results[:2] == ["ok", "ok"]
        assert isinstance(results[2], RenderTimeout) and "worker was stopped" in str(results[2])
        rest = [r if isinstance(r, str) else "not made" for r in results[3:]]
        assert rest == [after] * 17, rest
        if stop == 1:
            assert all("already run out of time" in str(r) for r in results[3:])
    assert render("{{ messages[0].content }}", MESSAGES) == "Hi"


def test_analyze_finishes_on_a_template_with_a_bomb_in_its_tools_loop() -> None:
    """``analyze`` hung on a tools loop calling ``lipsum``; a C-level bomb there costs two time limits."""
    from workbench.formats import analyze

    chat = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    for bomb in (
        "{% for t in tools %}{{ lipsum(1000000) }}{% endfor %}",
        "{% if tools %}" + SLOW_C["sort_long_common_prefix"] + "{% endif %}",
    ):
        started = time.monotonic()
        analysis = analyze(chat + bomb, time_limit=0.5)
        assert any("too large" in w or "timed out" in w for w in analysis.warnings)
        assert time.monotonic() - started < 2 * (0.5 + 0.5) + 2 * SLACK
