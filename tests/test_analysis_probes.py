"""The probe table as data, and the analyzer on small inline templates (no ../shared needed)."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import PROJECT_TEMPLATES
from workbench.analysis import PROBES, VARIANTS
from workbench.analysis.probes import (
    ARG_A,
    CONTENT_TEXT,
    FUNC_A,
    FUNC_B,
    ID_A,
    ID_B,
    REASONING_TEXT,
    VALUE_A,
    VALUE_B,
    stringify_arguments,
)
from workbench.formats import analyze
from workbench.template.render import TemplateError

NEEDLES = (FUNC_A, FUNC_B, VALUE_A, VALUE_B, ID_A, ID_B, REASONING_TEXT, CONTENT_TEXT)


def test_probe_ids_are_unique_and_cover_the_llamacpp_set() -> None:
    ids = [p.id for p in PROBES]
    assert len(ids) == len(set(ids))
    assert {"R1", "R2", "R3", "C1", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "A1", "A2"} <= set(ids)


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.id)
def test_each_probe_compares_two_different_known_variants(probe) -> None:  # type: ignore[no-untyped-def]
    assert probe.a in VARIANTS and probe.b in VARIANTS and probe.a != probe.b
    assert probe.question.endswith("?")
    assert probe.variant_a.to_dict() != probe.variant_b.to_dict()


def test_needles_never_occur_in_the_project_templates() -> None:
    """A needle that the template itself contains would make its position ambiguous."""
    for path in sorted(PROJECT_TEMPLATES.glob("*.jinja")):
        text = path.read_text(encoding="utf-8")
        assert not [n for n in NEEDLES if n in text], path.name


def test_stringify_arguments_serialises_and_leaves_the_table_intact() -> None:
    before = json.dumps([dict(m) for m in VARIANTS["call"].messages])
    out = stringify_arguments(VARIANTS["call"].messages)
    assert json.loads(out[1]["tool_calls"][0]["function"]["arguments"]) == {ARG_A: VALUE_A}
    assert json.dumps([dict(m) for m in VARIANTS["call"].messages]) == before


# ----------------------------------------------------------------------------------------- inline templates
MINI = (
    "{% for m in messages %}<|{{ m.role }}|>"
    "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
    "{% if m.content is string %}{{ m.content }}{% endif %}"
    "{% for c in m.tool_calls or [] %}<call>{{ c.function | tojson }}</call>{% endfor %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def test_a_minimal_template_is_read_end_to_end() -> None:
    spec = analyze(MINI).spec
    assert (spec.reasoning.mode, spec.reasoning.start, spec.reasoning.end) == (
        "tag_based",
        "<think>",
        "</think>",
    )
    assert spec.prompt.generation_prompt == "<|assistant|>"
    assert spec.end_markers == ("<|end|>",)
    t = spec.tools
    assert (t.format, t.name_field, t.args_field) == ("json_native", "name", "arguments")
    assert (t.call_start, t.call_end, t.parallel) == ("<call>", "</call>", True)


def test_a_probe_whose_render_fails_is_recorded_and_the_rest_carries_on() -> None:
    template = MINI.replace(
        "{% for c in", "{% if m.tool_calls %}{{ raise_exception('no calls here') }}{% endif %}{% for c in"
    )
    analysis = analyze(template)
    t1 = next(p for p in analysis.probes if p.id == "T1")
    assert t1.error and "no calls here" in t1.error
    assert any("T1" in w for w in analysis.warnings)
    assert analysis.spec.tools.format == "none"
    assert analysis.spec.reasoning.start == "<think>"  # unaffected by the failing probe


def test_a_template_that_raises_at_top_level_is_an_error() -> None:
    with pytest.raises(TemplateError, match="always"):
        analyze("{{ raise_exception('always') }}")


LOOP_FOREVER = "{% for i in range(99999) %}{% for j in range(99999) %}{{ j }}{% endfor %}{% endfor %}"


def test_a_template_that_loops_forever_times_out_quickly() -> None:
    with pytest.raises(TemplateError, match="timed out"):
        analyze(LOOP_FOREVER, time_limit=0.2)


def test_a_template_that_hangs_only_on_tool_calls_costs_at_most_two_time_limits() -> None:
    hang = "{% if m.tool_calls %}" + LOOP_FOREVER + "{% endif %}"
    template = MINI.replace("{% for c in", hang + "{% for c in")
    started = time.perf_counter()
    analysis = analyze(template, time_limit=0.2)
    assert time.perf_counter() - started < 2.0
    assert analysis.spec.reasoning.start == "<think>"
    t1 = next(p for p in analysis.probes if p.id == "T1")
    assert t1.error and ("timed out" in t1.error or "skipped" in t1.error)


def test_a_syntax_error_names_the_line() -> None:
    with pytest.raises(TemplateError) as info:
        analyze("ok\n{% if %}")
    assert info.value.line == 2


def test_a_template_that_concatenates_arguments_is_rendered_with_json_text() -> None:
    template = MINI.replace("{{ c.function | tojson }}", "{{ c.function.name + ':' + c.function.arguments }}")
    analysis = analyze(template)
    assert any("JSON text" in n for n in analysis.notes)
    # NAME:{json}: the marker fields read "foofoo:" as the name (a name may hold ':'), so the analysis
    # learns the call as a pattern, whose name slot ends at the ':' literal.
    t = analysis.spec.tools
    assert (t.format, t.call_start, t.call_end) == ("call_pattern", "<call>", "</call>")
    assert t.pattern.call == ("$name", ":", "$args") and t.pattern.args == "json"
    from workbench.runtime.parsing import parse

    call = parse(analysis.spec, '<call>lookup:{"q": 1}</call>').message.tool_calls[0]
    assert (call.name, call.arguments_value()) == ("lookup", {"q": 1})


def test_tool_probes_use_the_tool_use_template_of_a_config(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from workbench.template.source import load_template

    plain = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
    config = {
        "chat_template": [{"name": "default", "template": plain}, {"name": "tool_use", "template": MINI}],
        "eos_token": "<|end|>",
    }
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    spec = analyze(load_template(path)).spec
    assert spec.tools.format == "json_native" and spec.tools.call_start == "<call>"
    assert spec.reasoning.mode == "none"  # the default template renders no reasoning
    assert spec.eos_token == "<|end|>" and "<|end|>" in spec.end_markers
