"""Python literal values (issue 18, item 4): pythonic calls written with Python literals parse to JSON values.

``True``, ``False``, ``None``, ``'single quoted'`` (with its escapes), ``['a', 'b']``, ``{'k': 1}`` and nested
mixtures are read with ``ast.literal_eval`` (bounded in size and depth, never ``eval``), one-shot and
streamed, wherever a format writes them: the pythonic family's lists, and calls learned as a pattern whose
values are Python literals (``<|call|>f(city='Paris', on=True)<|/call|>``).  Pythonic lists whose values
are JSON (``true``, ``null``: templates that print values with ``tojson``) are calls too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import PROJECT_TEMPLATES
from workbench.formats import analyze
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import StreamParser, parse
from workbench.runtime.spec import FormatSpec
from workbench.runtime.values import (
    MAX_LITERAL_CHARS,
    MAX_LITERAL_DEPTH,
    NotJsonError,
    PythonExtent,
    python_literal,
)
from workbench.template.render import render
from workbench.template.source import TemplateSource, load_template
from workbench.validate import validate


# ----------------------------------------------------------------------------------------- the reader
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("True", True),
        ("False", False),
        ("None", None),
        ("'single quoted'", "single quoted"),
        ("'it\\'s a \\\\ and\\n\\ttab'", "it's a \\ and\n\ttab"),
        ('"double"', "double"),
        ("['a', 'b']", ["a", "b"]),
        ("{'k': 1}", {"k": 1}),
        ("(1, 'x')", [1, "x"]),
        ("{'a': [True, None, {'b': -2.5}], 'c': ''}", {"a": [True, None, {"b": -2.5}], "c": ""}),
        ("[true, null, false]", [True, None, False]),
        ('{"k": [1, 2]}', {"k": [1, 2]}),
        ("'日本語 🙂'", "日本語 🙂"),
    ],
)
def test_python_literals_read_as_json_values(text: str, value: Any) -> None:
    assert python_literal(text) == value
    assert json.dumps(python_literal(text)) == json.dumps(value)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "f(1)",
        "x + 1",
        "b'bytes'",
        "{1, 2}",
        "1e999",
        "'" + "a" * (MAX_LITERAL_CHARS + 1) + "'",
        "[" * (MAX_LITERAL_DEPTH + 1) + "]" * (MAX_LITERAL_DEPTH + 1),
    ],
)
def test_what_is_not_a_json_literal_or_too_big_is_refused(text: str) -> None:
    with pytest.raises(NotJsonError):
        python_literal(text)


_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.text(max_size=12),
    st.floats(allow_nan=False, allow_infinity=False),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
)


@settings(max_examples=200, deadline=None)
@given(
    _VALUES,
    st.lists(st.integers(1, 400), max_size=12),
    st.sampled_from([", rest", ")<|/call|>", "</arg>", ""]),
)
def test_the_extent_of_a_literal_is_found_whatever_the_chunking(
    value: Any, cuts: list[int], after: str
) -> None:
    literal = repr(value)  # Python's own spelling: single quotes, True, None, escapes
    text = literal + after
    points = sorted({c % (len(text) + 1) for c in cuts})
    scanner = PythonExtent()
    pos, done = 0, False
    for end in [*points, len(text)]:
        if end < pos:
            continue
        pos, done = scanner.advance(text[:end], pos, end == len(text))
        if done:
            break
    assert done and pos == len(literal), (text, pos)
    assert python_literal(text[:pos]) == json.loads(json.dumps(value))


# ------------------------------------------------------------------- calls written with Python literals
#: Keyword calls in a wrapper per call, values written as Python literals (Python's own escaping).
PY_CALLS = """\
{%- macro py(v) -%}
    {%- if v is string -%}
        {%- set s = v | replace('\\\\', '\\\\\\\\') | replace("'", "\\\\'") | replace('\\n', '\\\\n') -%}
        {{- "'" ~ s ~ "'" -}}
    {%- elif v is boolean -%}{{- 'True' if v else 'False' -}}
    {%- elif v is none -%}{{- 'None' -}}
    {%- elif v is mapping -%}
        {{- '{' -}}
        {%- for k, x in v | items -%}
            {{- py(k) ~ ': ' ~ py(x) -}}{%- if not loop.last -%}{{- ', ' -}}{%- endif -%}
        {%- endfor -%}
        {{- '}' -}}
    {%- elif v is sequence -%}
        {{- '[' -}}
        {%- for x in v -%}{{- py(x) -}}{%- if not loop.last -%}{{- ', ' -}}{%- endif -%}{%- endfor -%}
        {{- ']' -}}
    {%- else -%}{{- v | tojson -}}{%- endif -%}
{%- endmacro -%}
{%- if tools -%}
    {{- '<|start|>system\\nTools: ' -}}
    {{- (tools | map(attribute='function') | map(attribute='name') | join(', ')) ~ '<|end|>\\n' -}}
{%- endif -%}
{%- for m in messages -%}
    {{- '<|start|>' ~ m.role ~ '\\n' -}}
    {%- if m.role == 'assistant' -%}
        {%- if m.reasoning_content is defined and m.reasoning_content -%}
            {{- '<|think|>' ~ m.reasoning_content ~ '<|/think|>\\n' -}}
        {%- endif -%}
        {%- if m.content is string -%}{{- m.content -}}{%- endif -%}
        {%- for c in m.tool_calls or [] -%}
            {{- '<|call|>' ~ c.function.name ~ '(' -}}
            {%- for k, v in c.function.arguments | items -%}
                {{- k ~ '=' ~ py(v) -}}{%- if not loop.last -%}{{- ', ' -}}{%- endif -%}
            {%- endfor -%}
            {{- ')<|/call|>' -}}
        {%- endfor -%}
    {%- else -%}{{- m.content -}}{%- endif -%}
    {{- '<|end|>\\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start|>assistant\\n' -}}{%- endif -%}
"""
TOOL = Tool(
    "configure",
    "Configure.",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "on": {"type": "boolean"},
            "nothing": {"anyOf": [{"type": "null"}]},
            "tags": {"type": "array"},
            "options": {"type": "object"},
        },
    },
)
ARGS = {
    "name": 'it\'s "quoted" \\ and\nnew line',
    "on": True,
    "nothing": None,
    "tags": ["a", "b"],
    "options": {"k": 1, "nested": [{"deep": False}, "x, y)"]},
}


@pytest.fixture(scope="module")
def py_calls() -> tuple[TemplateSource, FormatSpec]:
    source = TemplateSource(text=PY_CALLS, name="python-literal-calls", origin="<test>")
    return source, analyze(source).spec


def _output(source: TemplateSource, args: dict[str, Any]) -> str:
    call = {"id": "c1", "type": "function", "function": {"name": "configure", "arguments": args}}
    user = {"role": "user", "content": "hi"}
    prompt = render(source.text, [user], tools=[TOOL.to_openai()], add_generation_prompt=True)
    full = render(
        source.text,
        [user, {"role": "assistant", "content": None, "tool_calls": [call]}],
        tools=[TOOL.to_openai()],
    )
    assert full.startswith(prompt)
    return full[len(prompt) :].removesuffix("<|end|>\n")


def test_a_template_writing_python_literals_is_learned_as_python_values(
    py_calls: tuple[TemplateSource, FormatSpec],
) -> None:
    _, spec = py_calls
    assert spec.tools.format == "call_pattern"
    assert {v.value for v in spec.tools.pattern.arguments} == {"python"}


def test_python_literal_arguments_parse_to_json_values_one_shot_and_streamed(
    py_calls: tuple[TemplateSource, FormatSpec],
) -> None:
    source, spec = py_calls
    text = _output(source, ARGS)
    assert "on=True" in text and "nothing=None" in text and "tags=['a', 'b']" in text  # the Python spelling
    one = parse(spec, text, [TOOL]).message
    assert [c.arguments_value() for c in one.tool_calls] == [ARGS]
    parser = StreamParser(spec, [TOOL])
    for ch in text:
        parser.feed(ch)
    streamed = parser.finish().message
    assert [c.arguments_value() for c in streamed.tool_calls] == [ARGS]
    assert not streamed.content and not one.content


def test_the_python_literal_template_validates(py_calls: tuple[TemplateSource, FormatSpec]) -> None:
    source, spec = py_calls
    report = validate(source, spec)
    failed = [(c.id, c.reason) for c in report.cases if c.status in ("fail", "error")]
    assert report.validated, failed


def test_a_pythonic_list_with_json_values_is_read_as_calls() -> None:
    spec = FormatSpec.from_dict({"tools": {"format": "pythonic"}})
    text = '[configure(name="x", on=true, nothing=null, tags=["a"], options={"k": [1, false]})]'
    want = {"name": "x", "on": True, "nothing": None, "tags": ["a"], "options": {"k": [1, False]}}
    one = parse(spec, text, [TOOL]).message
    assert [c.arguments_value() for c in one.tool_calls] == [want]
    parser = StreamParser(spec, [TOOL])
    for ch in text:
        parser.feed(ch)
    assert [c.arguments_value() for c in parser.finish().message.tool_calls] == [want]


# ------------------------------------------------------------------------- which literals a template writes
def test_the_analysis_reads_which_literals_a_pythonic_template_writes() -> None:
    # llama4-like writes each value with tojson (``enabled=true``); pythonic-calls writes Python (``True``).
    # The spec says which, so that the grammar and the samples write what the template writes.
    shapes = PROJECT_TEMPLATES / "recent-shapes" / "llama4-like.jinja"
    json_spec = analyze(load_template(shapes)).spec
    python_spec = analyze(load_template(PROJECT_TEMPLATES / "pythonic-calls.jinja")).spec
    assert (json_spec.tools.format, json_spec.tools.json_literals) == ("pythonic", True)
    assert (python_spec.tools.format, python_spec.tools.json_literals) == ("pythonic", False)


def test_samples_of_a_json_literal_spec_spell_json_and_parse_back() -> None:
    from workbench.runtime.formats.base import SampleCall
    from workbench.runtime.formats.pythonic.samples import write_calls

    spec = FormatSpec.from_dict({"tools": {"format": "pythonic", "json_literals": True, "parallel": True}})
    args = {"on": True, "nothing": None, "n": 2, "s": "x"}
    text = write_calls(spec, [SampleCall("configure", args)])
    assert text == '[configure(on=true, nothing=null, n=2, s="x")]'
    python = write_calls(
        FormatSpec.from_dict({"tools": {"format": "pythonic"}}), [SampleCall("configure", args)]
    )
    assert python == '[configure(on=True, nothing=None, n=2, s="x")]'
    assert [c.arguments_value() for c in parse(spec, text, [TOOL]).message.tool_calls] == [args]


def test_a_surrogate_pair_reads_as_its_character() -> None:
    """A template writing strings with JSON's ``ensure_ascii`` escapes writes 🙂 as ``"\\ud83d\\ude42"``,
    which Python's literal reading gives as two lone surrogates: no JSON text or UTF-8 output holds them
    (the llamapyascii-like mimic's string cases, and a traceback when the report was printed)."""
    assert python_literal('"a\\ud83d\\ude42b"') == "a🙂b"
    assert python_literal('{"\\ud83d\\ude42": ["\\ud83d\\ude42"]}') == {"🙂": ["🙂"]}
    assert python_literal('"\\ud83d"') == "\ud83d"  # a lone one stays what it is


def test_a_line_break_written_raw_inside_quotes_is_text() -> None:
    """CogAgent writes a string argument's line breaks raw between single quotes, which Python refuses."""
    assert python_literal("'Line one\nLine two\n\nLine four'") == "Line one\nLine two\n\nLine four"
    assert python_literal("{'a': 'x\ny', 'b': True}") == {"a": "x\ny", "b": True}
    with pytest.raises(NotJsonError):
        python_literal("x\ny")
