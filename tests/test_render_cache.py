"""The render cache of one command, and validation's renders made ahead in batches.

The cache must never hand back a render of another context (mappings print in their key order), and the
batches validation renders ahead must change nothing but the number of worker round trips: the same report,
the same unstable verdict for a template that renders differently each time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import shared_templates
from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec
from workbench.template import render as render_module
from workbench.template import render_cache, worker
from workbench.template.render import fixed_clock, render, render_many
from workbench.template.source import TemplateSource, load_template
from workbench.validate import run as run_module
from workbench.validate import validate

PRINTS_ARGS = (
    "{% for m in messages %}{{ m.role }}:{{ m.args | tojson }}|"
    "{% for k in m.args %}{{ k }},{% endfor %}{% endfor %}"
)


@pytest.fixture
def exchanges(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the requests sent to render workers (one per pipe round trip)."""
    count = [0]
    original = worker._Worker.exchange

    def counted(self: Any, request: bytes, deadline: float) -> tuple[bytes, bytes]:
        count[0] += 1
        return original(self, request, deadline)

    monkeypatch.setattr(worker._Worker, "exchange", counted)
    yield count


def test_a_render_is_made_once_per_command_and_afresh_outside_it(exchanges: list[int]) -> None:
    msgs = [{"role": "user", "args": {"a": 1}}]
    with fixed_clock(), render_cache.cached_renders():
        render(PRINTS_ARGS, msgs)  # compiles and renders
        before = exchanges[0]
        first = render(PRINTS_ARGS, msgs)
        assert render(PRINTS_ARGS, msgs) == first
        assert exchanges[0] == before  # both served from the cache
    with fixed_clock():
        render(PRINTS_ARGS, msgs)
        render(PRINTS_ARGS, msgs)
    assert exchanges[0] == before + 2  # outside the block every render is made


def test_the_cache_tells_mappings_apart_by_their_key_order() -> None:
    """Templates print a mapping in its own order, so two contexts that differ only in key order are two
    renders, never one served for the other."""
    ab = [{"role": "user", "args": {"a": 1, "b": 2}}]
    ba = [{"role": "user", "args": {"b": 2, "a": 1}}]
    with fixed_clock(), render_cache.cached_renders():
        first, second = render(PRINTS_ARGS, ab), render(PRINTS_ARGS, ba)
    assert first == 'user:{"a": 1, "b": 2}|a,b,'
    assert second == 'user:{"b": 2, "a": 1}|b,a,'


def test_the_cache_tells_apart_values_that_print_apart_but_have_one_json() -> None:
    """A tuple and a list have one JSON text, ``1`` and ``True`` print apart: a key made of JSON would serve
    one render for the other, in one batch or one by one."""
    text = "{% for m in messages %}{{ m.args }};{% endfor %}"
    values = [(1, 2), [1, 2], {"k": 1}, {"k": True}, {"k": 1.0}]
    calls = [{"messages": [{"role": "user", "args": v}]} for v in values]
    with fixed_clock(), render_cache.cached_renders():
        batch = render_many(text, calls)
        single = [render(text, c["messages"]) for c in calls]
    assert batch == single == ["(1, 2);", "[1, 2];", "{'k': 1};", "{'k': True};", "{'k': 1.0};"]


def test_a_request_asked_again_is_answered_without_copying_its_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The self-check asks for the renders the analysis (or the early-render thread) made: a request of plain
    data seen before is found by its own print, before its context is copied (the copy cost more than the
    lookup), by ``render`` and ``render_many`` alike."""
    prepared = [0]
    original = render_module._prepare

    def counted(*args: Any, **kwargs: Any) -> Any:
        prepared[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(render_module, "_prepare", counted)
    msgs = [{"role": "user", "args": {"a": 1}}]
    other = [{"role": "user", "args": {"a": 2}}]
    with fixed_clock(), render_cache.cached_renders():
        first = render(PRINTS_ARGS, msgs)
        assert prepared[0] == 1
        assert render(PRINTS_ARGS, msgs) == first
        batch = render_many(PRINTS_ARGS, [{"messages": msgs}, {"messages": other}])
        assert prepared[0] == 2  # only the new request was copied
        assert render(PRINTS_ARGS, other) == batch[1]
        assert prepared[0] == 2
    assert batch == [first, 'user:{"a": 2}|a,']


@dataclasses.dataclass
class _Reduced:
    """Pickles as one object whatever its value (its own ``__reduce__``); its plain copy is its fields."""

    v: int

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Reduced, (0,))


def test_a_request_holding_an_object_is_told_apart_by_its_plain_copy() -> None:
    """Only plain data is keyed as it was passed: an object may pickle the same for two values its plain copy
    tells apart (here through its own ``__reduce__``), and must not be served the other's render."""
    text = "{{ messages[0].content.v }}"
    with fixed_clock(), render_cache.cached_renders():
        one = render(text, [{"role": "user", "content": _Reduced(1)}])
        two = render(text, [{"role": "user", "content": _Reduced(2)}])
        batch = render_many(text, [{"messages": [{"role": "user", "content": _Reduced(v)}]} for v in (3, 1)])
    assert (one, two, batch) == ("1", "2", ["3", "1"])


def _report_without_prefetch(
    source: TemplateSource, spec: FormatSpec, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(run_module, "render_cases_ahead", lambda renderer, cases: None)
        return validate(source, spec).to_dict()


TEMPLATES = [p for p in shared_templates() if p.stem in ("Qwen-Qwen3-0.6B", "GLM-4.6", "openai-gpt-oss-120b")]


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_renders_made_ahead_change_the_round_trips_not_the_report(
    path: Any, monkeypatch: pytest.MonkeyPatch, exchanges: list[int]
) -> None:
    source = load_template(path)
    spec = analyze(source).spec
    validate(source, spec)  # compiles in the worker
    exchanges[0] = 0
    report = validate(source, spec).to_dict()
    batched = exchanges[0]
    exchanges[0] = 0
    assert report == _report_without_prefetch(source, spec, monkeypatch)
    one_by_one = exchanges[0]
    # one round trip per render before; a few batches (and the renders no batch could foresee) now
    assert batched * 2 < one_by_one, (batched, one_by_one)


def test_prefetched_second_renders_still_catch_a_template_that_changes() -> None:
    turns = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content or '' }}</{{ m.role }}>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    dice = TemplateSource(
        text="{% set n = range(90000) | random %}seed {{ n }}|" + turns, name="dice", origin="test"
    )
    report = validate(dice)
    assert "the first time" in report.unstable
    assert not report.validated
