"""A reply written as one JSON object (spec v6's ``envelope``): learned, parsed, streamed and constrained.

xLAM, BlueLM, AgentCPM-GUI and others answer with one JSON object whose members hold the text, the reasoning
and the calls.  The templates here are written for these tests (not copies of any model's), in three
shapes the mimics in ``templates/recent-shapes/`` do not use: a single call object and ``null`` for no text
behind compact separators; an object the generation prompt opens, reasoning as a member; reasoning in
markers in front of the object.  Each must validate once analysed; the parser must read the JSON (escapes
decoded, the same at any chunking); the grammar must accept what the template writes and refuse the rest.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import xgrammar as xgr
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.formats import analyze
from workbench.runtime.chat import Tool
from workbench.runtime.formats import family_for
from workbench.runtime.formats.base import SampleCall
from workbench.runtime.grammar import build_grammar
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.spec import EnvelopeMember, FormatSpec, ReplyEnvelope, ToolsSpec
from workbench.template.source import TemplateSource
from workbench.testing.reference_specs import XLAM_LIKE
from workbench.validate import validate

WEATHER = Tool(
    "get_weather",
    "",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)

#: An xLAM-shaped spec written by hand: ``{"thought": TEXT, "tool_calls": [CALL, ...]}`` then ``</s>``.
XLAM = XLAM_LIKE


def _read(spec: FormatSpec, text: str, **options: Any) -> tuple[Any, list[str]]:
    result = parse(spec, text, [WEATHER], ParseOptions(**options))
    m = result.message
    calls = [(c.name, c.arguments_value()) for c in m.tool_calls]
    return (m.content, m.reasoning_content, calls), [d.code for d in result.diagnostics]


def _streamed(spec: FormatSpec, text: str, cuts: list[int], **options: Any) -> Any:
    parser = StreamParser(spec, [WEATHER], options=ParseOptions(**options))
    last = 0
    for cut in [*cuts, len(text)]:
        parser.feed(text[last:cut])
        last = cut
    m = parser.finish().message
    return m.content, m.reasoning_content, [(c.name, c.arguments_value()) for c in m.tool_calls]


# ----------------------------------------------------------------------------------------------- parsing
def test_the_answer_is_the_decoded_json_string() -> None:
    text = '{"thought": "Say \\"hi\\"\\n\\t\\u00e9 \\ud83d\\ude00 a\\\\b", "tool_calls": []}</s>'
    got, codes = _read(XLAM, text)
    assert got == ('Say "hi"\n\té 😀 a\\b', None, [])
    assert codes == []


def test_calls_are_read_from_the_list_and_an_empty_text_is_none() -> None:
    text = (
        '{"thought": "", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}"}]}</s>'
    )
    got, codes = _read(XLAM, text)
    assert got == (None, None, [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})])
    assert codes == []


def test_one_call_object_a_nested_function_field_and_an_id() -> None:
    spec = FormatSpec(
        tools=ToolsSpec(format="json_native", function_field="function", id_field="id"),
        envelope=ReplyEnvelope(
            members=(EnvelopeMember("say", "content", ("null",)), EnvelopeMember("do", "calls", ("null",))),
            calls_list=False,
        ),
    )
    text = '{"say":null,"do":{"id":"c1","function":{"name":"get_weather","arguments":{"city":"Oslo"}}}}'
    result = parse(spec, text, [WEATHER])
    call = result.message.tool_calls[0]
    assert (result.message.content, call.name, call.id, call.arguments_value()) == (
        None,
        "get_weather",
        "c1",
        {"city": "Oslo"},
    )


def test_flat_calls_hold_their_arguments_beside_the_name() -> None:
    spec = FormatSpec(
        tools=ToolsSpec(format="json_native", name_field="action"),
        envelope=ReplyEnvelope(
            members=(EnvelopeMember("note", "content", ('""',)), EnvelopeMember("action", "calls")),
            flat_calls=True,
        ),
    )
    one = parse(spec, '{"note": "", "action": {"action": "get_weather", "city": "Oslo"}}', [WEATHER])
    two = parse(
        spec,
        '{"note": "ok", "action": [{"action": "get_weather", "city": "A"}, '
        '{"action": "get_weather", "city": "B"}]}',
        [WEATHER],
    )
    assert [(c.name, c.arguments_value()) for c in one.message.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    assert [c.arguments_value() for c in two.message.tool_calls] == [{"city": "A"}, {"city": "B"}]
    plan = build_grammar(spec, [WEATHER], tool_choice="required", parallel=False)
    assert plan.answer is not None
    assert _accepts(plan.answer, '{"note": "", "action": [{"action": "get_weather", "city": "Oslo"}]}')
    assert not _accepts(plan.answer, '{"note": "", "action": [{"action": "get_weather"}]}')


def test_bad_input_gets_a_diagnostic_and_keeps_the_text() -> None:
    got, codes = _read(XLAM, "not an object at all</s>")
    assert got == ("not an object at all", None, []) and codes == []
    got, codes = _read(XLAM, '{"thought": "cut off here')
    assert got[0] == "cut off here" and "E-STREAM-TRUNCATED" in codes
    got, codes = _read(XLAM, '{"thought": "", "tool_calls": [{"name": "launch", "arguments": {}}]}')
    assert got == (None, None, []) and "E-CALL-SCHEMA" in codes  # not a tool of the request
    got, codes = _read(XLAM, '{"thought": "x" "tool_calls": []}')
    assert got[0].startswith("x") and "E-ENVELOPE" in codes


_ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(content=_ANY_TEXT, city=_ANY_TEXT, ascii_only=st.booleans(), cuts=st.lists(st.integers(1, 400)))
def test_any_text_reads_the_same_one_shot_and_at_any_chunking(
    content: str, city: str, ascii_only: bool, cuts: list[int]
) -> None:
    call = {"name": "get_weather", "arguments": {"city": city}}
    obj = {"thought": content, "tool_calls": [call]}
    text = json.dumps(obj, ensure_ascii=ascii_only) + "</s>"
    want = (content or None, None, [("get_weather", {"city": city})])
    got, _ = _read(XLAM, text)
    assert got == want
    chunks = sorted({c % len(text) for c in cuts if c % len(text)})
    assert _streamed(XLAM, text, chunks) == want
    assert _streamed(XLAM, text, list(range(1, len(text)))) == want


_SOUP = st.text(alphabet='{}[]":,\\ntu0123456789 abc\n', max_size=120)


@settings(max_examples=200, deadline=None)
@given(text=_SOUP, cuts=st.lists(st.integers(1, 200), max_size=12))
def test_soup_is_read_without_an_error_and_every_character_is_released(text: str, cuts: list[int]) -> None:
    """Bad input never crashes: JSON-ish soup parses with diagnostics at most, no internal error, the
    events give back the text, and any chunking reads it as one piece does."""
    parser = StreamParser(XLAM, [WEATHER])
    events = []
    last = 0
    for cut in [*sorted({c % (len(text) + 1) for c in cuts}), len(text)]:
        events += parser.feed(text[last:cut])
        last = max(last, cut)
    result = parser.finish()
    events += parser.final_events
    assert "".join(e.text for e in events) == text
    assert all(d.code != "E-INTERNAL" for d in result.diagnostics), result.diagnostics
    one = parse(XLAM, text, [WEATHER]).message
    assert result.message == one


def test_a_continued_answer_starts_inside_its_string() -> None:
    prompt = '[INST] hi [/INST]{"thought": "The capital of'
    assert XLAM.output_start_stage(generation_prompt=prompt) == "answer"
    assert XLAM.output_start_stage(generation_prompt=prompt + ' France.", "tool_calls": [') != "answer"
    got, _ = _read(XLAM, ' France is \\"Paris\\".", "tool_calls": []}</s>', start_stage="answer")
    assert got == (' France is "Paris".', None, [])


def test_the_sample_writer_writes_what_the_parser_reads() -> None:
    fam = family_for(XLAM)
    assert fam is not None and fam.name == "envelope" and fam.write_output is not None
    text = fam.write_output(XLAM, "", 'He said "no"', [SampleCall("get_weather", {"city": "Lima"})], True)
    assert text == (
        '{"thought": "He said \\"no\\"", "tool_calls": [{"name": "get_weather", "arguments": '
        '{"city": "Lima"}}]}</s>'
    )
    assert _read(XLAM, text)[0] == ('He said "no"', None, [("get_weather", {"city": "Lima"})])
    assert fam.output_end is not None
    assert fam.output_end(XLAM, text + "[INST] next [/INST]") == len(text) - len("</s>")


# ----------------------------------------------------------------------------------------------- the spec
def test_the_envelope_round_trips_through_json_and_the_schema() -> None:
    from workbench.export import check_spec_schema

    data = XLAM.to_dict()
    assert data["version"] >= 6 and data["envelope"]["members"][1]["holds"] == "calls"
    assert FormatSpec.from_dict(json.loads(json.dumps(data))) == XLAM
    assert check_spec_schema(data) == []
    data["envelope"]["members"][0]["holds"] = "answer"
    with pytest.raises(ValueError, match="holds"):
        FormatSpec.from_dict(data)
    older = {k: v for k, v in XLAM.to_dict().items() if k != "envelope"} | {"version": 5}
    assert not FormatSpec.from_dict(older).envelope.defined


# ----------------------------------------------------------------------------------------------- grammar
def _accepts(grammar_json: str, text: str) -> bool:
    compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(grammar_json)
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return matcher.accept_string(text) and matcher.is_completed()


def test_the_grammar_holds_the_object_and_the_calls_to_their_schema() -> None:
    auto = build_grammar(XLAM, [WEATHER])
    assert auto.answer is not None
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert _accepts(auto.answer, '{"thought": "Hi \\"you\\"", "tool_calls": []}')
    assert _accepts(auto.answer, '{"thought": "", "tool_calls": [' + call + "]}")
    assert not _accepts(auto.answer, "Hi there")
    assert not _accepts(
        auto.answer, '{"thought": "", "tool_calls": [{"name": "get_weather", "arguments": {}}]}'
    )
    assert not _accepts(auto.answer, '{"thought": "", "tool_calls": [{"name": "launch", "arguments": {}}]}')
    required = build_grammar(XLAM, [WEATHER], tool_choice="required")
    assert required.answer is not None
    assert _accepts(required.answer, '{"thought": "", "tool_calls": [' + call + "]}")
    assert not _accepts(required.answer, '{"thought": "Hi", "tool_calls": []}')
    none = build_grammar(XLAM, [WEATHER], tool_choice="none")
    assert none.answer is not None
    assert _accepts(none.answer, '{"thought": "Hi", "tool_calls": []}')
    assert not _accepts(none.answer, '{"thought": "", "tool_calls": [' + call + "]}")


# ----------------------------------------------------------------------------------------------- analysis
#: Compact separators, one call object (not a list), ``null`` when there is no text or no call.
ONE_OBJECT = """\
{%- for m in messages -%}
{%- if m.role == 'user' -%}{{- '<|turn|>user\\n' + m.content + '<|end|>' -}}
{%- elif m.role == 'assistant' -%}
{%- set c = (m.tool_calls or [none])[0] -%}
{{- '<|turn|>bot\\n{"say":' + ((m.content | tojson) if m.content else 'null') + ',"do":' -}}
{%- if c -%}{{- '{"fn":' + (c.function.name | tojson) + ',"args":' + (c.function.arguments | tojson) + '}' -}}
{%- else -%}{{- 'null' -}}{%- endif -%}
{{- '}<|end|>' -}}
{%- elif m.role == 'tool' -%}{{- '<|turn|>result\\n' + m.content + '<|end|>' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|turn|>bot\\n' -}}{%- endif -%}
"""

#: The generation prompt opens the object; reasoning is a member ("plan"), left out when there is none.
PROMPT_OPENED = """\
{%- for m in messages -%}
{%- if m.role == 'user' -%}{{- '{"speaker": "human", "text": ' + (m.content | tojson) + '}\\n' -}}
{%- elif m.role == 'assistant' -%}
{{- '{"speaker": "bot", ' -}}
{%- if m.reasoning_content -%}{{- '"plan": ' + (m.reasoning_content | tojson) + ', ' -}}{%- endif -%}
{{- '"text": ' + ((m.content or '') | tojson) + ', "calls": [' -}}
{%- for c in m.tool_calls or [] -%}
{{- (', ' if not loop.first else '') + '{"tool": ' + (c.function.name | tojson) + ', "input": '
    + (c.function.arguments | tojson) + '}' -}}
{%- endfor -%}
{{- ']}\\n' -}}
{%- elif m.role == 'tool' -%}{{- '{"speaker": "tool", "text": ' + (m.content | tojson) + '}\\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '{"speaker": "bot", ' -}}{%- endif -%}
"""

#: Reasoning in markers in front of the object; the calls member left out when there are none.
MARKED_REASONING = """\
{%- for m in messages -%}
{%- if m.role == 'user' -%}{{- '### Q\\n' + m.content + '\\n' -}}
{%- elif m.role == 'assistant' -%}
{{- '### A\\n' -}}
{%- if m.reasoning_content -%}{{- '<reflect>' + m.reasoning_content + '</reflect>\\n' -}}{%- endif -%}
{{- '{"reply": ' + ((m.content or '') | tojson) -}}
{%- if m.tool_calls -%}
{{- ', "actions": ' + (m.tool_calls | map(attribute='function') | list | tojson) -}}
{%- endif -%}
{{- '}\\n### END\\n' -}}
{%- elif m.role == 'tool' -%}{{- '### TOOL\\n' + m.content + '\\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '### A\\n' -}}{%- endif -%}
"""


@pytest.mark.parametrize(
    ("text", "members", "reasoning_in"),
    [
        (ONE_OBJECT, [("say", "content"), ("do", "calls")], "none"),
        (
            PROMPT_OPENED,
            [("speaker", "other"), ("plan", "reasoning"), ("text", "content"), ("calls", "calls")],
            "member",
        ),
        (MARKED_REASONING, [("reply", "content"), ("actions", "calls")], "markers"),
    ],
    ids=["one-object", "prompt-opened", "marked-reasoning"],
)
def test_an_envelope_template_is_learned_and_validates(
    text: str, members: list[tuple[str, str]], reasoning_in: str
) -> None:
    source = TemplateSource(text=text, name="envelope-test", origin="<test>")
    spec = analyze(source).spec
    assert [(m.key, m.holds) for m in spec.envelope.members] == members
    if reasoning_in == "markers":
        assert (spec.reasoning.start.strip(), spec.reasoning.end.strip()) == ("<reflect>", "</reflect>")
    report = validate(source, spec)
    assert report.validated, report.verdict
    features = report.features()
    assert features["content"]["status"] == features["tool_call"]["status"] == "pass"
    want = "unsupported" if reasoning_in == "none" else "pass"
    assert features["reasoning"]["status"] == want


def test_json_calls_behind_markers_are_no_envelope() -> None:
    """Hermes-style calls (a JSON object in ``<tool_call>``) hold no text: the answer is not a member."""
    hermes = """\
{%- for m in messages -%}
{{- '<|im_start|>' + m.role + '\\n' + (m.content or '') -}}
{%- for c in m.tool_calls or [] -%}
{{- '<tool_call>\\n{"name": ' + (c.function.name | tojson) + ', "arguments": ' -}}
{{- (c.function.arguments | tojson) + '}\\n</tool_call>' -}}
{%- endfor -%}
{{- '<|im_end|>\\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}
"""
    spec = analyze(TemplateSource(text=hermes, name="hermes-test", origin="<test>")).spec
    assert not spec.envelope.defined
