"""Calls as patterns of literal text and typed slots (issue 10, spec v2 ``tools.pattern``).

The project's new-format templates (templates/new-formats/) each write calls in a way the marker fields
cannot describe.  Here the analysis must learn each one as a pattern (the expected patterns are read off
the templates' own documentation, not off the code), and the pattern must read the template's renders back
one-shot and under any chunking, and the grammar built from it must accept them.
"""

from __future__ import annotations

import json
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import xgrammar as xgr
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import PROJECT_TEMPLATES
from workbench.formats import analyze
from workbench.runtime.chat import Tool
from workbench.runtime.formats.call_pattern.encoding import EncodingError, read, write
from workbench.runtime.grammar import build_grammar
from workbench.runtime.parsing import parse, parse_events
from workbench.runtime.spec import SPEC_VERSION, FormatSpec, SpecError, ValueEncoding
from workbench.template.render import render
from workbench.template.source import load_template

NEW = PROJECT_TEMPLATES / "new-formats"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "ratio": {"type": "number"},
                "metric": {"type": "boolean"},
                "note": {"type": ["string", "null"]},
                "tags": {"type": "array"},
                "where": {"type": "object"},
            },
            "required": ["city"],
        },
    },
}
CALLS: list[dict[str, Any]] = [
    {
        "id": "c1",
        "type": "function",
        "function": {
            "name": "get_weather",
            "arguments": {
                "city": 'Paris, "FR"',
                "days": 3,
                "ratio": -2.5,
                "metric": False,
                "note": None,
                "tags": ["a", 1, True],
                "where": {"lat": 48.8, "inner": {"k": "v"}},
            },
        },
    },
    {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
]


@cache
def _spec(stem: str) -> FormatSpec:
    return analyze(load_template(NEW / f"{stem}.jinja")).spec


def _output(stem: str, calls: list[dict[str, Any]] = CALLS) -> str:
    """What the model wrote in the template's own rendering of a turn with ``calls``: the text after the
    generation prompt, up to (not including) the end of the turn."""
    text = (NEW / f"{stem}.jinja").read_text(encoding="utf-8")
    user = [{"role": "user", "content": "Weather?"}]
    full = render(
        text,
        [*user, {"role": "assistant", "content": "Checking.", "tool_calls": calls}],
        tools=[WEATHER],
        add_generation_prompt=False,
    )
    # Without thinking where the template then opens nothing more (element-markup closes an empty
    # reasoning element in that prompt, which a history turn without reasoning does not have).
    prompts = [
        render(text, user, tools=[WEATHER], add_generation_prompt=True, enable_thinking=thinking)
        for thinking in (False, True)
    ]
    prompt = next(p for p in prompts if full.startswith(p))
    out = full[len(prompt) :]
    for end in _spec(stem).end_markers:
        cut = out.rfind(end)
        if end and cut >= 0:
            out = out[:cut]
    return out


# The kinds the pattern describes, with what each template's documentation says about it.
KINDS = [
    "typed-attr-args",
    "delimited-strings",
    "id-first-calls",
    "element-markup",
    "mixture",
    "numbered-calls",
    "keyed-lines",
    "keyword-calls",
    "comment-lines",
]


def test_typed_attributes_are_one_way_per_type() -> None:
    """typed-attr-args: text="yes" for a string (written raw), text="no" for any other value (as JSON)."""
    t = _spec("typed-attr-args").tools
    assert t.format == "call_pattern"
    assert (t.section_start, t.section_end, t.call_start, t.call_end) == (
        "<calls>",
        "</calls>",
        '<call name="',
        "</call>",
    )
    p = t.pattern
    assert p.call == ("$name", '">', "$args") and p.args == "tagged"
    by_type = {ty: v for v in p.arguments for ty in v.types}
    assert by_type["string"].parts == ('<arg name="', "$key", '" text="yes">', "$value", "</arg>")
    assert by_type["string"].value == "raw"
    for ty in ("integer", "number", "boolean", "null", "array", "object"):
        assert by_type[ty].parts == ('<arg name="', "$key", '" text="no">', "$value", "</arg>")
        assert by_type[ty].value == "json"


def test_delimited_strings_are_an_encoding_of_their_own() -> None:
    """delimited-strings: call:NAME{KEY:VALUE,...}, strings between <|q|>, nothing escaped, bare keys."""
    t = _spec("delimited-strings").tools
    assert (t.call_start, t.call_end) == ("<|tool_call|>call:", "<|/tool_call|>")
    assert t.pattern.call == ("$name", "$args") and t.pattern.args == "object"
    assert t.pattern.encoding == ValueEncoding(
        string_open="<|q|>", string_close="<|q|>", escape="none", key_quote="", key_sep=":", item_sep=","
    )


def test_the_id_comes_before_the_name() -> None:
    """id-first-calls: <|calls|> then <|id|>ID<|name|>NAME<|args|>JSON<|/call|> per call, then <|/calls|>."""
    t = _spec("id-first-calls").tools
    assert (t.section_start, t.section_end, t.call_start, t.call_end) == (
        "<|calls|>",
        "<|/calls|>",
        "<|id|>",
        "<|/call|>",
    )
    assert t.pattern.call == ("$id", "<|name|>", "$name", "<|args|>", "$args")
    assert t.pattern.args == "json"


def test_a_mixture_of_kinds_is_one_pattern() -> None:
    """mixture: element markup everywhere, the id before the name, a json="yes"/"no" attribute per arg."""
    spec = _spec("mixture")
    assert (spec.reasoning.start, spec.reasoning.end) == ("<|begin|>think<|body|>", "<|end|>think")
    assert (spec.content.start, spec.content.end) == ("<|begin|>say<|body|>", "<|end|>say")
    assert spec.end_markers == ("<|end|>turn",)
    t = spec.tools
    assert (t.call_start, t.call_end) == ('<|begin|>call id="', "<|end|>call")
    assert t.pattern.call == ("$id", '" fn="', "$name", '"<|body|>', "$args")
    by_type = {ty: v for v in t.pattern.arguments for ty in v.types}
    assert by_type["string"].parts[2] == '" json="no"<|body|>' and by_type["string"].value == "raw"
    assert by_type["object"].parts[2] == '" json="yes"<|body|>' and by_type["object"].value == "json"


def test_element_calls_carry_a_counter_from_one() -> None:
    """element-markup: <|begin|>invoke fn="NAME" n="K"<|body|>JSON<|end|>invoke, K counting from 1."""
    t = _spec("element-markup").tools
    assert (t.call_start, t.call_end) == ('<|begin|>invoke fn="', "<|end|>invoke")
    assert t.pattern.call == ("$name", '" n="', "$index", '"<|body|>', "$args")
    assert t.pattern.index_base == 1


def test_a_counter_after_a_space_is_not_part_of_the_name() -> None:
    """numbered-calls: <|fn|>NAME #K: JSON<|/fn|>.  The literal after the name opens with a space, which
    the parser matches as free whitespace before the literal's core: the name must not keep it."""
    t = _spec("numbered-calls").tools
    assert (t.call_start, t.call_end) == ("<|fn|>", "<|/fn|>")
    assert t.pattern.call == ("$name", " #", "$index", ": ", "$args")
    assert t.pattern.index_base == 1
    result = parse(_spec("numbered-calls"), _output("numbered-calls"), tools=[Tool.from_openai(WEATHER)])
    assert [c.name for c in result.message.tool_calls] == ["get_weather", "get_weather"]


@pytest.mark.parametrize("stem", KINDS)
def test_the_templates_calls_parse_back_one_shot(stem: str) -> None:
    tool = Tool.from_openai(WEATHER)
    result = parse(_spec(stem), _output(stem), tools=[tool])
    got = [(c.name, json.loads(c.arguments)) for c in result.message.tool_calls]
    assert got == [(c["function"]["name"], c["function"]["arguments"]) for c in CALLS], result.diagnostics
    assert result.message.content == "Checking."
    if stem in ("id-first-calls", "mixture"):
        assert [c.id for c in result.message.tool_calls] == ["c1", "c2"]


@pytest.mark.parametrize("stem", KINDS)
@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=30))
def test_any_chunking_gives_the_one_shot_message(stem: str, cuts: list[int]) -> None:
    tool = Tool.from_openai(WEATHER)
    text = _output(stem)
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in pairwise(points)]
    one = parse(_spec(stem), text, tools=[tool]).to_contract()
    _, streamed = parse_events(_spec(stem), chunks, tools=[tool])
    assert streamed.to_contract() == one


def test_one_character_at_a_time() -> None:
    tool = Tool.from_openai(WEATHER)
    for stem in KINDS:
        text = _output(stem)
        _, streamed = parse_events(_spec(stem), list(text), tools=[tool])
        assert streamed.to_contract() == parse(_spec(stem), text, tools=[tool]).to_contract(), stem


@pytest.mark.parametrize("stem", KINDS)
def test_the_grammar_accepts_what_the_template_writes(stem: str) -> None:
    tool = Tool.from_openai(WEATHER)
    spec = _spec(stem)
    plan = build_grammar(spec, [tool], tool_choice="required", reasoning=False)
    compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(plan.text)
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    output = _output(stem)
    output = output[output.find(spec.tools.trigger.strip()) :]  # the forced grammar starts at the calls
    assert matcher.accept_string(output) and matcher.is_completed(), output
    bad = output.replace('"days"', '"dayz"').replace(">days<", ">dayz<").replace("days:", "dayz:")
    bad = bad.replace('name="days"', 'name="dayz"').replace("days=", "dayz=")
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    assert not matcher.accept_string(bad), "a parameter the schema does not have must be refused"


def test_a_truncated_call_is_diagnosed_not_turned_into_content() -> None:
    tool = Tool.from_openai(WEATHER)
    for stem in KINDS:
        text = _output(stem)
        cut = text[: text.find("Oslo")]
        result = parse(_spec(stem), cut, tools=[tool])
        assert "E-STREAM-TRUNCATED" in {d.code for d in result.diagnostics}, stem
        assert result.message.content == "Checking.", stem


# ----------------------------------------------------------------------------------------- encoding
ENCODINGS = [
    ValueEncoding(
        string_open="<|q|>", string_close="<|q|>", escape="none", key_quote="", key_sep=":", item_sep=","
    ),
    ValueEncoding(string_open="'", string_close="'", escape="json", key_quote="", key_sep="=", item_sep="; "),
    ValueEncoding(),
]
_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**12), 10**12),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="<|'\\"), max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), inner, max_size=3),
    ),
    max_leaves=8,
)


@pytest.mark.parametrize("enc", ENCODINGS, ids=["delimited", "quoted", "json"])
@settings(max_examples=60, deadline=None)
@given(value=_JSON)
def test_every_encoded_value_reads_back_equal(enc: ValueEncoding, value: Any) -> None:
    assert read(write(value, enc), enc) == value


def test_a_broken_encoded_value_is_an_error_not_a_crash() -> None:
    enc = ENCODINGS[0]
    for text in ("{city:<|q|>Paris}", "{:1}", "{a:1,,b:2}", "[" * 200 + "]" * 200):
        with pytest.raises(EncodingError):
            read(text, enc)


# ----------------------------------------------------------------------------------------- spec v2
def test_version_1_spec_files_still_load() -> None:
    loaded = 0
    for path in sorted((Path(__file__).parents[1] / "specs").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version", 1) == 1:
            spec = FormatSpec.from_dict(data)
            assert not spec.tools.pattern.defined, path
            loaded += 1
    assert loaded >= 5  # the hand-written specs shipped before version 2


def test_a_pattern_spec_round_trips_through_json_and_the_schema() -> None:
    from workbench.export.spec_target import check_spec_schema

    spec = _spec("typed-attr-args")
    data = spec.to_dict()
    assert data["version"] == SPEC_VERSION == 7
    assert FormatSpec.from_dict(json.loads(json.dumps(data))) == spec
    assert check_spec_schema(data) == []
    data["tools"]["pattern"]["arguments"][0]["value"] = "yaml"
    with pytest.raises(SpecError, match=r"tools\.pattern\.arguments\[0\]\.value"):
        FormatSpec.from_dict(data)


@pytest.mark.parametrize("stem", KINDS)
def test_names_with_dots_and_underscores(stem: str) -> None:
    """A name slot runs to the literal after it, so dotted, underscored names come back whole."""
    name = "weather.get_current_v2"
    tool = Tool.from_openai({**WEATHER, "function": {**WEATHER["function"], "name": name}})
    calls = [{"id": "c9", "type": "function", "function": {"name": name, "arguments": {"city": "Rome"}}}]
    text = (NEW / f"{stem}.jinja").read_text(encoding="utf-8")
    user = [{"role": "user", "content": "Weather?"}]
    full = render(text, [*user, {"role": "assistant", "content": "", "tool_calls": calls}], tools=[WEATHER])
    at = full.find(_spec(stem).tools.trigger.strip())
    output = full[at:]
    for chunks in ([output], list(output)):
        _, result = parse_events(_spec(stem), chunks, tools=[tool])
        got = [(c.name, json.loads(c.arguments)) for c in result.message.tool_calls]
        assert got == [(name, {"city": "Rome"})], (stem, result.diagnostics)


# A template that writes numbers and booleans as JSON and null as Jinja prints it (``None``), in the same
# element: the analysis learns two ways with the same literals (JSON for numbers, raw for null).
NONE_IN_THE_SAME_TAG = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}{{- '<|turn|>assistant\\n' -}}{{- m.content or '' -}}"
    "{%- for call in m.tool_calls or [] -%}{%- set fn = call.function -%}"
    "{{- '<call n=\"' ~ loop.index0 ~ '\" name=\"' ~ fn.name ~ '\">' -}}"
    "{%- for key, v in fn.arguments | items -%}"
    "{%- if v is string -%}{{- '<s k=\"' ~ key ~ '\">' ~ v ~ '</s>' -}}"
    "{%- elif v is none -%}{{- '<v k=\"' ~ key ~ '\">' ~ v ~ '</v>' -}}"
    "{%- elif v is number or v is boolean -%}{{- '<v k=\"' ~ key ~ '\">' ~ (v | tojson) ~ '</v>' -}}"
    "{%- else -%}{{- '<j k=\"' ~ key ~ '\">' ~ (v | tojson) ~ '</j>' -}}{%- endif -%}"
    "{%- endfor -%}{{- '</call>' -}}{%- endfor -%}{{- '<|end|>\\n' -}}"
    "{%- else -%}{{- '<|turn|>' + m.role + '\\n' + (m.content or '') + '<|end|>\\n' -}}{%- endif -%}"
    "{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|turn|>assistant\\n' -}}{%- endif -%}"
)
OPTIONAL = Tool(
    name="set_optional",
    description="Set values.",
    parameters={
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "nothing": {"type": ["integer", "null"]},
            "label": {"type": "string"},
        },
    },
)


@pytest.mark.parametrize(
    "arguments",
    [{"nothing": None}, {"count": 3, "nothing": None, "label": "x"}, {"nothing": None, "count": 0}],
    ids=["alone", "between", "first"],
)
def test_a_null_written_as_none_is_read_as_null_not_dropped(arguments: dict[str, Any]) -> None:
    from workbench.template.source import TemplateSource

    source = TemplateSource(text=NONE_IN_THE_SAME_TAG, name="none-in-the-same-tag", origin="test")
    spec = analyze(source).spec
    # One element holds null (``None``) and numbers and booleans (JSON): one Python-literal way reads both
    # (``None`` is null, ``true`` a boolean), or a raw way for null beside a JSON way for the rest.
    ways = {t: v.value for v in spec.tools.pattern.arguments for t in v.types}
    assert (ways["null"], ways["integer"]) in (("raw", "json"), ("python", "python"))
    call = {"id": "c1", "type": "function", "function": {"name": "set_optional", "arguments": arguments}}
    history = render(
        source.text,
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [call]}],
    )
    output = history[history.index("<call ") : history.rindex("<|end|>")]
    assert "None</v>" in output
    want = {
        "content": "",
        "reasoning_content": "",
        "tool_calls": [{"id": "", "name": "set_optional", "arguments": arguments}],
    }
    got = parse(spec, output, [OPTIONAL]).to_contract()
    del got["diagnostics"]
    assert got == want
    # streamed: one character at a time and random chunkings give the same message
    for cuts in ([*range(1, len(output))], [5, 17, 18, 40], [len(output) // 2]):
        pieces = [output[a:b] for a, b in pairwise([0, *cuts, len(output)])]
        _, result = parse_events(spec, pieces, [OPTIONAL])
        streamed = result.to_contract()
        del streamed["diagnostics"]
        assert streamed == want, cuts


def test_validation_reads_the_null_argument_of_a_template_that_writes_none() -> None:
    from workbench.template.source import TemplateSource
    from workbench.validate import PASS, validate

    report = validate(TemplateSource(text=NONE_IN_THE_SAME_TAG, name="none-in-the-same-tag", origin="test"))
    null_case = next(c for c in report.cases if c.id == "null_argument")
    assert "None</v>" in null_case.output
    assert null_case.status == PASS, null_case.reason
    assert report.validated, report.summary()


def _key_value_lines(parts: tuple[str, ...], call: tuple[str, ...], **tools: Any) -> FormatSpec:
    """A call pattern of raw ``KEY...VALUE`` arguments written ``parts``, nothing after the value."""
    from workbench.runtime.spec import ArgVariant, CallPattern, ToolsSpec

    raw = ArgVariant(types=("string",), parts=parts, value="raw")
    pattern = CallPattern(call=call, args="tagged", arguments=(raw,))
    return FormatSpec(tools=ToolsSpec(format="call_pattern", pattern=pattern, **tools))


def test_key_value_lines_that_open_with_a_line_break_end_at_the_next_key_or_call() -> None:
    """Arguments written '\\nKEY: VALUE', nothing after the value, calls separated by a blank line (a headed
    'asks NAME:' message each): a value ends at the next declared key's line, at the next call's start, or
    at the output's end (it ran to the end and was reported truncated)."""
    spec = _key_value_lines(
        ("\n", "$key", ": ", "$value"),
        ("$name", ":", "$args"),
        call_start="asks ",
        call_separator="\n\n",
        parallel=True,
    )
    tools = [Tool.from_openai(WEATHER)]
    text = "asks get_weather:\ncity: Paris, FR\nnote: two\nlines\n\nasks get_weather:\ncity: Oslo\n"
    result = parse(spec, text, tools)
    calls = [(c.name, c.arguments_value()) for c in result.message.tool_calls]
    assert calls == [
        ("get_weather", {"city": "Paris, FR", "note": "two\nlines"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert not [d for d in result.diagnostics if d.severity != "info"]


def test_key_value_lines_separated_by_a_line_break_end_at_the_next_key() -> None:
    """'KEY = VALUE' lines, a line break between arguments and nothing after a value: a raw value ends at
    the line break in front of the next declared key (the first value ran on over every other)."""
    spec = _key_value_lines(
        ("$key", " = ", "$value"),
        ("$name", ":\n", "$args"),
        call_start="request to ",
        call_end="<|done|>",
        arg_separator="\n",
    )
    text = "request to get_weather:\ncity = Paris\nnote = two\nlines<|done|>"
    calls = parse(spec, text, [Tool.from_openai(WEATHER)]).message.tool_calls
    assert [c.arguments_value() for c in calls] == [{"city": "Paris", "note": "two\nlines"}]
