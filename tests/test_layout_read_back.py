"""The layout read-back drops a candidate as soon as it cannot read back more turns than the best so far.

``adopt_layout`` keeps the probes' spec unless a candidate layout reads back strictly more of the learner's
turns; most candidates tie with it.  ``_read_back_above`` reads the turns the best misses first and stops
when the candidate cannot win: these tests hold it to the full count (a candidate is kept exactly when its
score is higher, with every turn's result) and to the parses it saves.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.analysis import layout


def _readers(
    monkeypatch: pytest.MonkeyPatch, turns: int, passes: dict[str, set[int]]
) -> list[tuple[str, int]]:
    """Turns 0..turns-1, read back by each named spec where ``passes`` says; the reads made are recorded."""
    reads: list[tuple[str, int]] = []
    monkeypatch.setattr(layout, "_read_back_turns", lambda tr: list(range(turns)))

    def reads_back(spec: Any, tr: Any, turn: Any) -> bool:
        reads.append((spec, turn))
        return turn in passes[spec]

    monkeypatch.setattr(layout, "_reads_back", reads_back)
    return reads


def test_a_candidate_missing_what_the_best_misses_costs_those_turns_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads = _readers(monkeypatch, 12, {"tie": set(range(2, 12)), "better": set(range(1, 12))})
    best = [i >= 2 for i in range(12)]  # the probes' spec misses turns 0 and 1
    assert layout._read_back_above("tie", None, best) is None
    assert reads == [("tie", 0), ("tie", 1)]
    reads.clear()
    assert layout._read_back_above("better", None, best) == [i >= 1 for i in range(12)]
    assert len(reads) == 12


@given(
    st.integers(0, 10).flatmap(
        lambda n: st.tuples(
            st.lists(st.booleans(), min_size=n, max_size=n), st.lists(st.booleans(), min_size=n, max_size=n)
        )
    )
)
def test_a_candidate_is_kept_exactly_when_it_reads_back_more(vectors: tuple[list[bool], list[bool]]) -> None:
    best, candidate = vectors
    with pytest.MonkeyPatch.context() as monkeypatch:
        _readers(monkeypatch, len(best), {"c": {i for i, ok in enumerate(candidate) if ok}})
        got = layout._read_back_above("c", None, best)
    if sum(candidate) > sum(best):
        assert got == candidate
    else:
        assert got is None


#: Headed messages whose prompt opens a reasoning message by default; an answer without reasoning is
#: written without one, so no answer-only turn continues that prompt; with ``thinking=false`` the prompt
#: leaves the header open ('<|hd|>bot|') and every turn continues it.
OPENS_A_MESSAGE_BY_DEFAULT = """
{%- set think = thinking if thinking is defined else true -%}
{%- for m in messages -%}
    {%- if m.role == 'assistant' -%}
        {%- if m.reasoning_content -%}{{- '<|hd|>bot|mind<|tx|>' + m.reasoning_content -}}{%- endif -%}
        {%- if m.content -%}{{- '<|hd|>bot|say<|tx|>' + m.content -}}{%- endif -%}
        {%- for tc in m.tool_calls or [] -%}
            {{- '<|hd|>bot|run ' + tc.function.name + '<|tx|>' + tc.function.arguments | tojson -}}
        {%- endfor -%}
    {%- else -%}
        {{- '<|hd|>' + m.role + '|say<|tx|>' + m.content -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|hd|>bot|mind<|tx|>' if think else '<|hd|>bot|' -}}{%- endif -%}
"""


def test_a_turn_no_answer_of_continues_is_learned_after_the_prompt_with_thinking_off() -> None:
    from workbench.formats import analyze
    from workbench.template.source import TemplateSource
    from workbench.validate import validate

    source = TemplateSource(text=OPENS_A_MESSAGE_BY_DEFAULT, name="opens-a-message", origin="<test>")
    analysis = analyze(source)
    spec = analysis.spec
    assert spec.layout.headed and spec.layout.opener == "<|hd|>bot|"
    assert [m.header for m in spec.layout.messages] == ["mind<|tx|>", "say<|tx|>"]
    assert any("turn layout adopted (headed messages)" in n for n in analysis.notes)
    report = validate(source, spec)
    assert report.validated, report.verdict


def test_a_turn_is_learned_after_the_header_head_when_thinking_off_drops_reasoning_too() -> None:
    """As above, but the switch that leaves the prompt's header open also drops reasoning from the history
    (reasoning_effort='none'): the turn is learned after the prompt cut after the turns' header head
    ('<|hd|>'), where every message names its kind itself."""
    from workbench.formats import analyze
    from workbench.template.source import TemplateSource
    from workbench.validate import validate

    text = (
        OPENS_A_MESSAGE_BY_DEFAULT.replace(
            "{%- if m.reasoning_content -%}", "{%- if think and m.reasoning_content -%}"
        )
        .replace("'<|hd|>bot|' -}}", "'<|hd|>' -}}")
        .replace("'<|hd|>bot|mind<|tx|>' if think", "'<|hd|>mind<|tx|>' if think")
    )
    text = text.replace("'<|hd|>bot|mind<|tx|>'", "'<|hd|>mind<|tx|>'").replace(
        "'<|hd|>bot|say<|tx|>'", "'<|hd|>say<|tx|>'"
    )
    text = text.replace("'<|hd|>bot|run '", "'<|hd|>run '")
    source = TemplateSource(text=text, name="names-each-message", origin="<test>")
    spec = analyze(source).spec
    assert spec.layout.headed, spec.layout
    report = validate(source, spec)
    assert report.validated, report.verdict
