"""Render fallbacks and named workarounds: each on a small template and on the real template needing it."""

from __future__ import annotations

import pytest

from tests.test_analysis_helpers import shared, template_text
from workbench.analysis.renders import ProbeRenderer
from workbench.analysis.workarounds import RENDER_PATCHES, WORKAROUNDS
from workbench.formats import analyze
from workbench.template.render import TemplateError, render
from workbench.template.source import TemplateSource

TURNS = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"


def _renderer(text: str) -> ProbeRenderer:
    return ProbeRenderer(TemplateSource(text=text, name="t", origin="<test>"), time_limit=2.0)


def test_list_append_is_rewritten_for_the_immutable_sandbox() -> None:
    text = (
        "{% set ns = namespace(ids=[]) %}{% set _ = ns.ids.append('a') %}"
        + TURNS
        + "{{ ns.ids | join(',') }}"
    )
    with pytest.raises(TemplateError):
        render(text, [{"role": "user", "content": "x"}])
    r = _renderer(text)
    assert r.render("prompt_none").endswith("a")
    assert any("immutable_list_append" in n for n in r.notes)


def test_tojson_of_map_gets_a_list() -> None:
    text = "{{ tools | map(attribute='function') | tojson }}" + TURNS
    r = _renderer(text)
    assert '"name": "foofoo"' in r.render("tools_content")
    assert any("tojson_of_map" in n for n in r.notes)


def test_a_variable_only_some_callers_pass_is_set_empty() -> None:
    r = _renderer("{{ 'Today is ' + datetime }}" + TURNS)
    assert r.render("prompt_none").startswith("Today is <|user|>")
    assert any("'datetime'" in n for n in r.notes)


def test_a_template_that_always_iterates_tools_gets_an_empty_list() -> None:
    r = _renderer("{% for t in tools %}{{ t }}{% endfor %}" + TURNS)
    assert r.render("prompt_none").startswith("<|user|>")
    assert any("tools=[]" in n for n in r.notes)


def test_render_patches_only_fire_on_their_own_error() -> None:
    text = "{% set _ = ns.ids.append(1) %}"
    unrelated = TemplateError("undefined value: 'x' is undefined", kind="undefined")
    assert not any(p.matches(unrelated, text) for p in RENDER_PATCHES)


def test_workarounds_do_not_touch_an_ordinary_template() -> None:
    analysis = analyze(TURNS + "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    assert not [w for w in analysis.warnings if "workaround" in w]


# ----------------------------------------------------------------------------------------- real templates
shared_only = pytest.mark.shared


@shared_only
def test_kimi_k2_instruct_needs_the_append_rewrite_to_render_calls() -> None:
    assert ".append(" in template_text("Kimi-K2-Instruct")
    analysis = shared("Kimi-K2-Instruct")
    assert any("immutable_list_append" in n for n in analysis.notes)
    assert analysis.spec.tools.format == "tag_with_json"


@shared_only
def test_llamacpp_deepseek_r1_needs_the_map_rewrite_to_render_tools() -> None:
    analysis = shared("llama-cpp-deepseek-r1")
    assert any("tojson_of_map" in n for n in analysis.notes)
    t = analysis.spec.tools
    assert (t.format, t.section_start, t.call_end) == (
        "tag_with_json",
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁end｜>",
    )


@shared_only
def test_firefunction_reads_functions_and_datetime() -> None:
    analysis = shared("fireworks-ai-llama-3-firefunction-v2")
    assert any("'functions'" in n for n in analysis.notes) and any("'datetime'" in n for n in analysis.notes)
    assert analysis.spec.tools.section_start == "functools"


@shared_only
def test_hermes_iterates_tools_even_without_tools() -> None:
    analysis = shared("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use")
    assert any("tools=[]" in n for n in analysis.notes)
    assert analysis.spec.tools.call_start == "<tool_call>\n"


@shared_only
def test_lfm2_calls_come_from_the_named_workaround() -> None:
    assert "<|tool_list_start|>" in template_text("LFM2-8B-A1B")
    analysis = shared("LFM2-8B-A1B")
    assert any("lfm2_unrendered_tool_calls" in w for w in analysis.warnings)
    t = analysis.spec.tools
    assert (t.format, t.section_start, t.section_end) == (
        "pythonic",
        "<|tool_call_start|>",
        "<|tool_call_end|>",
    )


@shared_only
def test_granite_reasoning_and_response_tags_come_from_its_prose() -> None:
    analysis = shared("ibm-granite-granite-3.3-2B-Instruct")
    assert any("granite_prose_reasoning_tags" in w for w in analysis.warnings)
    spec = analysis.spec
    assert (spec.reasoning.start, spec.reasoning.end) == ("<think>", "</think>")
    assert (spec.content.mode, spec.content.start, spec.content.end) == (
        "wrapped_with_reasoning",
        "<response>",
        "</response>",
    )


@shared_only
def test_command_r_plus_answers_may_repeat_the_chatbot_token() -> None:
    spec = shared("CohereForAI-c4ai-command-r-plus-tool_use").spec
    assert (spec.content.start, spec.content.end) == ("<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>")
    assert spec.tools.section_start == "Action:\n```json\n"


@shared_only
def test_command_r7b_is_not_mistaken_for_command_r_plus() -> None:
    analysis = shared("CohereForAI-c4ai-command-r7b-12-2024-tool_use")
    assert not [w for w in analysis.warnings if "cohere_chatbot_token_content" in w]


def test_every_workaround_says_what_it_keys_on() -> None:
    for w in WORKAROUNDS:
        assert w.name and w.keyed_on and w.summary
