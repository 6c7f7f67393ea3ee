"""The format fuzzer: random but plausible formats, analysed and round-tripped (issue 18).

Two kinds of test.  The generator's own properties (hypothesis over seeds): every drawn template renders,
the history of an assistant turn starts with the generation prompt and ends with the turn's end, the known
values are in the output, the same seed draws the same format, and the axes cover every value.  Then the
measure: each seed of a fixed set is analysed, validated and round-tripped one-shot and streamed
(``workbench.testing.fuzz_run.run_format``) and must pass every case.  Seeds the analysis cannot read yet
are strict expected failures with the first failing case as the reason: a fix that makes one pass turns it
into a failure here, and the mark is removed.  ``scripts/fuzz_formats.py`` runs fresh seeds.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.runtime.spec import FormatSpec
from workbench.template.render import render
from workbench.testing.format_fuzz import (
    FRAMES,
    LAYOUTS,
    REASONING_KINDS,
    SPELLINGS,
    draw_format,
    write_template,
)
from workbench.testing.fuzz_run import known_cases, render_output, round_trip, run_format, summarize

SEEDS = st.integers(min_value=0, max_value=2**31 - 1)


# --------------------------------------------------------------------------------- the generator itself
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_every_drawn_template_renders_each_known_message_after_its_prompt(seed: int) -> None:
    draw = draw_format(seed)
    template = write_template(draw)
    cases = known_cases(draw)
    assert {c.id for c in cases} >= {"content_only", "one_call", "parallel_calls", "nested_arguments"}
    for case in cases:
        _, output = render_output(draw, template, case)  # raises GeneratorError when they disagree
        if case.content:
            assert case.content in output
        for call in case.calls:
            assert call.name in output
        if case.reasoning and draw.reasoning is not None:
            assert case.reasoning in output
        if draw.ids != "none":
            assert all(c.id in output for c in case.calls)


@settings(max_examples=25, deadline=None)
@given(SEEDS)
def test_the_same_seed_draws_the_same_template(seed: int) -> None:
    assert write_template(draw_format(seed)) == write_template(draw_format(seed))
    assert draw_format(seed).axes == draw_format(seed).axes


def test_the_tools_and_the_system_text_reach_the_system_block() -> None:
    draw = draw_format(7)
    text = render(
        write_template(draw),
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        tools=[{"type": "function", "function": {"name": "lookup_thing", "parameters": {"type": "object"}}}],
        add_generation_prompt=True,
    )
    assert "Be brief." in text and "lookup_thing" in text


def test_the_axes_cover_every_spelling_layout_frame_and_reasoning_kind() -> None:
    seen: dict[str, Counter[str]] = {}
    for seed in range(400):
        for axis, value in draw_format(seed).axes.items():
            seen.setdefault(axis, Counter())[value] += 1
    assert set(seen["spelling"]) == set(SPELLINGS)
    assert set(seen["layout"]) == set(LAYOUTS)
    assert set(seen["frame"]) >= set(FRAMES) - {"headed"}
    assert set(seen["reasoning"]) == set(REASONING_KINDS)
    assert {"before", "after", "none"} <= set(seen["ids"])
    assert {"yes", "no"} <= set(seen["answer_wrapper"]) and {"yes", "no"} <= set(seen["section"])
    assert {"random"} <= set(seen["call_word"]) and {"random"} <= set(seen["reasoning_word"])
    assert {"none", "newline", "blank_line", "space"} <= set(seen["ws_call_inside"])


def test_a_spec_that_cannot_read_the_format_fails_the_round_trip() -> None:
    """The measure is not vacuous: the empty spec reads a call as content, and the case says so."""
    draw = draw_format(1)
    template = write_template(draw)
    call_case = next(c for c in known_cases(draw) if c.id == "one_call")
    reason = round_trip(draw, template, FormatSpec(), call_case)
    assert reason.startswith("one-shot: ")


def test_the_summary_counts_cases_and_formats_per_axis_value() -> None:
    outcomes = [run_format(1), run_format(5)]
    summary = summarize(outcomes)
    assert summary.overall.formats_run == 2
    assert summary.overall.cases_run == sum(len(o.cases) for o in outcomes)
    layout = summary.by_axis["layout"]
    assert sum(t.formats_run for t in layout.values()) == 2
    failing = [o for o in outcomes if not o.passed]
    assert summary.overall.formats_passed == 2 - len(failing)
    assert [s for s, _ in summary.overall.failing] == [o.seed for o in failing]


# ---------------------------------------------------------------------------------------------- the measure
#: Seeds the analysis cannot read yet (issue 18), with the first failing case.  Strict: a seed that starts
#: passing fails here until its line is removed.
XFAIL: dict[int, str] = {
    6: "headed/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris.', g…",
    8: "pythonic_json/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got '[[a…",
    11: "headed/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got 'ass…",
    12: "attr_typed/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##reasoning##The…",
    13: "attr_typed/bars: nested_arguments: one-shot: content: expected '', got 'object\">{\"depth\": 2, \"…",
    14: "tagged_eq/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris.…",
    15: "json_object/double_brackets: content_only: one-shot: content: expected 'The capital of France is P…",
    16: "headed/fullwidth_bars: one_call: one-shot: content: expected '', got 'to=functions.get_weather<|ch…",
    22: "tagged_eq/bracket_words: one_call: one-shot: content: expected '', got '[ACTION][TOOL_CALL_ID]Ab3d…",
    27: "attr_typed/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##reasoning## Th…",
    28: "tagged_kv/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris.…",
    29: "name_json/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.',…",
    30: "attr_typed/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.'…",
    31: "headed/angle: content_only: one-shot: content: expected 'The capital of France is Paris.', got '<|…",
    32: "tagged_eq/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<analysi…",
    33: "tagged_eq/bracket_words: scalar_arguments: one-shot: tool_calls[0].arguments: expected {\"count\":…",
    34: "pythonic_json/bare_words: content_only: one-shot: content: expected 'The capital of France is Pari…",
    35: "pythonic_json/bare_words: content_only: one-shot: content: expected 'The capital of France is Pari…",
    39: "attr_typed/double_brackets: content_only: one-shot: content: expected 'The capital of France is Pa…",
    40: "json_object/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got…",
    42: "json_object/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<gura>…",
    46: "pythonic_python/double_angle: content_only: one-shot: content: expected 'The capital of France is…",
    48: "pythonic_json/bare_words: content_only: one-shot: content: expected 'The capital of France is Pari…",
    49: "pythonic_json/double_angle: content_only: one-shot: content: expected 'The capital of France is Pa…",
    50: "attr_typed/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##think##\\nThe…",
    51: "tagged_kv/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got '[[thou…",
    53: "headed/double_brackets: content_only: one-shot: content: expected 'The capital of France is Paris.…",
    54: "headed/bracket_words: one_call: one-shot: content: expected '', got 'function<message>{\"name\":…",
    55: "tagged_eq/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris.…",
    59: "name_json/double_brackets: content_only: one-shot: content: expected 'The capital of France is Par…",
    61: "tagged_kv/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##lelapa##\\nThe…",
    63: "headed/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got 'cha…",
    64: "name_json/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got '…",
    65: "attr_typed/start_of: nested_arguments: one-shot: content: expected '', got 'object\">{\"depth\": 2…",
    66: "attr_typed/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris…",
    68: "name_json/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got '…",
    72: "tagged_kv/double_angle: scalar_arguments: one-shot: tool_calls[0].arguments: expected {\"count\":…",
    74: "name_json/bare_words: reasoning_content: one-shot: content: expected 'It is 42.', got 'REASONING:…",
    75: "pythonic_python/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##thought##…",
    76: "headed/fullwidth_bars: content_only: one-shot: content: expected 'The capital of France is Paris.'…",
    78: "name_json/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got '[[reas…",
    79: "headed/bracket_words: content_only: one-shot: content: expected 'The capital of France is Paris.',…",
    81: "headed/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.', go…",
    82: "headed/bracket_words: content_only: one-shot: content: expected 'The capital of France is Paris.',…",
    83: "headed/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got 'ass…",
    85: "name_json/double_brackets: content_only: one-shot: content: expected 'The capital of France is Par…",
    89: "attr_typed/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<nube>>…",
    90: "name_json/double_brackets: content_only: one-shot: content: expected 'The capital of France is Par…",
    91: "tagged_kv/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<reasoni…",
    93: "pythonic_json/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##thought## T…",
    94: "tagged_kv/bare_words: reasoning_content: one-shot: content: expected 'It is 42.', got 'THINK:\\nTh…",
    95: "tagged_kv/bare_words: one_call: one-shot: content: expected '', got 'CALLS:\\nTOOL_CALL:\\nget_wea…",
    100: "headed/bracket_words: content_only: one-shot: content: expected 'The capital of France is Paris.'…",
    101: "pythonic_json/double_brackets: content_only: one-shot: content: expected 'The capital of France i…",
    103: "tagged_eq/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got…",
    107: "pythonic_python/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got…",
    109: "tagged_eq/bars: one_call: one-shot: content: expected '', got '<|sati|>\\n<|tool_call_id|>Ab3dE5g…",
    112: "attr_typed/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got…",
    114: "name_json/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got '[[thi…",
    116: "attr_typed/bare_words: nested_arguments: one-shot: content: expected '', got 'object\">{\"depth\"…",
    117: "tagged_kv/double_brackets: content_only: one-shot: content: expected 'The capital of France is Pa…",
    121: "tagged_eq/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<bumebo…",
    122: "tagged_eq/bare_words: reasoning_content: one-shot: content: expected 'It is 42.', got 'REASONING:…",
    123: "attr_typed/angle: nested_arguments: one-shot: content: expected '', got 'object\">{\"depth\": 2,…",
    125: "tagged_eq/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got '[[nus…",
    126: "headed/angle: content_only: one-shot: content: expected 'The capital of France is Paris.', got '<…",
    128: "pythonic_python/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got…",
    129: "attr_typed/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.…",
    130: "pythonic_python/bare_words: reasoning_content: one-shot: content: expected 'It is 42.', got 'THOU…",
    133: "pythonic_json/hash: content_only: one-shot: content: expected 'The capital of France is Paris.',…",
    134: "tagged_eq/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##reasoning## Th…",
    137: "tagged_kv/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<analys…",
    139: "attr_typed/angle: nested_arguments: one-shot: content: expected '', got 'object\">{\"depth\": 2,…",
    140: "json_object/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<thou…",
    142: "tagged_kv/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##think## The us…",
    144: "json_object/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', go…",
    147: "pythonic_python/bracket_words: one_call: one-shot: content: expected '', got '[/ACTIONS]' (valida…",
    153: "name_json/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##reasoning##\\n…",
    154: "pythonic_python/double_brackets: reasoning_content: one-shot: content: expected 'It is 42.', got…",
    155: "attr_typed/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.…",
    156: "pythonic_python/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##reasonin…",
    157: "tagged_eq/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got…",
    158: "name_json/double_brackets: content_only: one-shot: content: expected 'The capital of France is Pa…",
    160: "pythonic_json/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<th…",
    161: "tagged_eq/bare_words: reasoning_content: one-shot: content: expected 'It is 42.', got 'ANALYSIS:…",
    163: "headed/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.', g…",
    164: "attr_typed/double_angle: content_only: one-shot: content: expected 'The capital of France is Pari…",
    167: "name_json/double_brackets: content_only: one-shot: content: expected 'The capital of France is Pa…",
    168: "pythonic_json/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<an…",
    171: "pythonic_python/bare_words: content_only: one-shot: content: expected 'The capital of France is P…",
    173: "headed/fullwidth_bars: content_only: one-shot: content: expected 'The capital of France is Paris.…",
    174: "headed/angle: content_only: one-shot: content: expected 'The capital of France is Paris.', got 'a…",
    177: "headed/double_brackets: content_only: one-shot: content: expected 'The capital of France is Paris…",
    178: "headed/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris.',…",
    179: "name_json/double_brackets: content_only: one-shot: content: expected 'The capital of France is Pa…",
    181: "json_object/double_angle: content_only: one-shot: content: expected 'The capital of France is Par…",
    182: "pythonic_json/hash: reasoning_content: one-shot: content: expected 'It is 42.', got '##thought##T…",
    185: "tagged_kv/double_angle: reasoning_content: one-shot: content: expected 'It is 42.', got '<<though…",
    187: "headed/fullwidth_bars: one_call: one-shot: content: expected '', got 'to=tool.get_weather{\"city…",
    188: "attr_typed/double_brackets: content_only: one-shot: content: expected 'The capital of France is P…",
    189: "attr_typed/hash: content_only: one-shot: content: expected 'The capital of France is Paris.', got…",
    190: "tagged_kv/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris…",
    191: "tagged_kv/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.'…",
    192: "attr_typed/fullwidth_bars: nested_arguments: one-shot: content: expected '', got 'object\">{\"dep…",
    193: "headed/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris.', g…",
    194: "tagged_kv/double_angle: content_only: one-shot: content: expected 'The capital of France is Paris…",
    196: "json_object/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris…",
    197: "json_object/bare_words: content_only: one-shot: content: expected 'The capital of France is Paris…",
    198: "headed/angle: content_only: one-shot: content: expected 'The capital of France is Paris.', got 'a…",
}

FAST_SEEDS = range(0, 40)
SLOW_SEEDS = range(40, 200)


def _seed_params(seeds: range) -> list[object]:
    return [
        pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=XFAIL[s])) if s in XFAIL else s
        for s in seeds
    ]


def _check(seed: int) -> None:
    outcome = run_format(seed)
    failures = [f"{c.case}: {c.reason}" for c in outcome.cases if not c.passed]
    assert outcome.passed, f"seed {seed} ({outcome.axes}): {outcome.error or failures}"


@pytest.mark.parametrize("seed", _seed_params(FAST_SEEDS))
def test_fuzzed_format_round_trips(seed: int) -> None:
    _check(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", _seed_params(SLOW_SEEDS))
def test_fuzzed_format_round_trips_more_seeds(seed: int) -> None:
    _check(seed)
