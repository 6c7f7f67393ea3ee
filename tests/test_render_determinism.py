"""What makes renders cheaper must not change what they say.

* Validation renders a case a second time only when the template can render differently
  (:mod:`workbench.template.determinism`); a template that draws at random or prints an object's address is
  still rendered twice and still called unstable.
* The sandbox's attribute lookup answers as Jinja's own sandbox does (a differential test).
* ``tojson`` keeps the text of a mapping while it lives, and a batch shares one copy of a tools list: the
  texts are those of separate renders.
"""

from __future__ import annotations

import json
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

from tests.test_validate_verdict import CALLS_SPEC as SPEC
from tests.test_validate_verdict import TURNS
from workbench.template import sandbox
from workbench.template.determinism import prints_an_address, varying_sources
from workbench.template.render import fixed_clock, render, render_many
from workbench.template.sandbox import make_environment
from workbench.template.source import TemplateSource
from workbench.validate import validate
from workbench.validate.render import CaseRenderer


def _source(text: str) -> TemplateSource:
    return TemplateSource(text=text, name="t", origin="test")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (TURNS, ()),
        ("{{ range(9) | random }}", ("random",)),
        ("{% filter random %}abc{% endfilter %}", ("random",)),
        ("{{ ['a', 'b'] | map('random') | join }}", ("random",)),
        ("{{ ['a', 'b'] | map('upper') | join }}", ()),
        ("{{ ['a', 'b'] | map(attribute='x') | join }}", ()),
        ("{% set f = 'ran' ~ 'dom' %}{{ ['a'] | map(f) | join }}", ("map with a computed filter name",)),
        ("{{ lipsum(1) }}", ("lipsum",)),
        ("{{ strftime_now('%H') }}", ("strftime_now",)),
        ("{% set lipsum = 1 %}{{ 2 }}", ()),  # assigned, never read
        ("{% for %}", ("a template that does not parse",)),
    ],
)
def test_what_can_make_two_renders_differ_is_read_from_the_source(
    text: str, expected: tuple[str, ...]
) -> None:
    assert varying_sources(text, clock_fixed=False) == expected


def test_a_fixed_clock_makes_strftime_now_the_same_every_time() -> None:
    text = "{{ strftime_now('%H:%M:%S') }}{{ range(3) | random }}"
    assert varying_sources(text, clock_fixed=True) == ("random",)
    assert varying_sources(text, clock_fixed=False) == ("strftime_now", "random")


def test_an_object_address_is_seen_in_the_text() -> None:
    text = render("{{ cycler('a') }}", [{"role": "user", "content": "x"}])
    assert prints_an_address(text), text
    assert not prints_an_address("[assistant]at 0x<end> 0x7f00")


def _second_renders(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[int, str]:
    """How many batches of second renders validation made for ``text``, and its unstable finding."""
    made = [0]
    original = CaseRenderer.render_again_ahead

    def counted(self: CaseRenderer, requests: Any) -> None:
        made[0] += 1
        original(self, requests)

    monkeypatch.setattr(CaseRenderer, "render_again_ahead", counted)
    report = validate(_source(text), SPEC)
    return made[0], report.unstable


def test_a_template_that_renders_the_same_every_time_is_rendered_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made, unstable = _second_renders(monkeypatch, TURNS)
    assert made == 0 and unstable == ""


def test_a_template_that_draws_at_random_is_still_rendered_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    made, unstable = _second_renders(monkeypatch, "{% set n = range(90000) | random %}seed {{ n }}|" + TURNS)
    assert made == 1
    assert "the first time" in unstable


def test_a_template_that_prints_an_address_is_rendered_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    made, _ = _second_renders(monkeypatch, "{{ cycler('a') }}|" + TURNS)
    assert made == 1


# ------------------------------------------------------------------------------------ attribute lookup
_KEYS = st.sampled_from(["role", "content", "items", "get", "keys", "values", "pop", "update", "x", "_y"])
_ATTRS = st.sampled_from(
    ["role", "content", "items", "get", "keys", "values", "pop", "update", "x", "_y", "__class__", "copy"]
)


def _lookups(env: jinja2.Environment, data: dict[str, Any], attr: str) -> str:
    template = env.from_string(
        "{{ (d[a] is defined) }}|{{ d|attr(a) is defined }}|"
        "{% set v = d|attr(a) %}{{ v if v is string or v is number else (v is callable) }}|"
        "{{ d." + attr + " is defined }}|{{ s." + attr + " is defined }}"
    )
    try:
        return template.render(d=data, a=attr, s="text")
    except jinja2.exceptions.SecurityError as exc:
        return f"security: {exc}"


@settings(max_examples=150, deadline=None)
@given(keys=st.lists(_KEYS, max_size=5, unique=True), attr=_ATTRS)
def test_the_sandbox_looks_up_attributes_as_jinjas_own(keys: list[str], attr: str) -> None:
    data = {k: f"v-{k}" for k in keys}
    ours = make_environment()
    theirs = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    assert _lookups(ours, data, attr) == _lookups(theirs, data, attr)


def test_a_mutating_method_of_a_dict_is_still_refused() -> None:
    env = make_environment()
    with pytest.raises(jinja2.exceptions.SecurityError):
        env.from_string("{{ d.update({'a': 1}) }}").render(d={"a": 0})
    with pytest.raises(jinja2.exceptions.SecurityError):
        env.from_string("{{ d.pop('a') }}").render(d={"pop": 0, "a": 1})


# ------------------------------------------------------------------------------------ tojson and tools
@pytest.mark.parametrize(
    "options",
    [{}, {"indent": 2}, {"sort_keys": True}, {"separators": (",", ":")}, {"separators": [",", ":"]}],
)
def test_tojson_gives_what_json_gives_for_each_object_and_options(options: dict[str, Any]) -> None:
    first = {"b": 1, "a": ["é", {"c": None}]}
    second = {"b": 2, "a": []}
    for value in (first, second, first, [first, second], "text"):
        assert sandbox._tojson(value, **options) == json.dumps(value, ensure_ascii=False, **options)


def test_tojson_keeps_no_big_structure_alive() -> None:
    """What the memo keeps holds its objects alive (and a worker runs under a memory cap): a big list is
    written afresh, never kept."""
    big = ["x" * 100] * 2000
    assert sandbox._tojson(big) == json.dumps(big, ensure_ascii=False)
    assert all(kept is not big for kept, _ in sandbox._TOJSON_KEPT.values())
    small = {"a": 1}
    sandbox._tojson(small)
    assert any(kept is small for kept, _ in sandbox._TOJSON_KEPT.values())


def test_a_batch_sharing_one_tools_list_renders_what_separate_renders_do() -> None:
    text = (
        "{% for t in tools %}{{ t | tojson }}{{ t | tojson(indent=2) }}{{ t.function.name }};{% endfor %}"
        + TURNS
    )
    tools = [
        {"type": "function", "function": {"name": "a", "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}}},
    ]
    other = [{"type": "function", "function": {"name": "c", "parameters": {}}}]
    calls = [
        {"messages": [{"role": "user", "content": "hi"}], "tools": tools, "add_generation_prompt": True},
        {"messages": [{"role": "user", "content": "yo"}], "tools": tools},
        {"messages": [{"role": "user", "content": "hi"}], "tools": other},
        {"messages": [{"role": "user", "content": "hi"}], "tools": tools},
    ]
    with fixed_clock():
        batch = render_many(text, calls)
        one_by_one = [
            render(
                text,
                c["messages"],
                tools=c["tools"],
                add_generation_prompt=bool(c.get("add_generation_prompt")),
            )
            for c in calls
        ]
    assert batch == one_by_one
    assert '"name": "c"' in str(batch[2]) and '"name": "a"' not in str(batch[2])
