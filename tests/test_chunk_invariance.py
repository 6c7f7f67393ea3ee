"""Chunk invariance for every slot and value type (issue 18): streamed == one-shot == the known call.

A server streams, so a parser that reads a typed value right in one piece but truncates it when the text
arrives a character at a time gives a silent wrong answer in production. Every format the project knows --
each project template (``templates/``, ``templates/new-formats/``, analysed), each hand-written spec of a
family (``specs/``, ``grammar.reference_specs``, functionary's fixture for the recipient family), and the
two shapes the issue names (DeepSeek-V3.2's ``string="false"`` parameter attribute, read by the analysis
and by ``specs/deepseekv32.json``; keyword calls with Python-literal values) -- writes one call whose
argument ``x`` holds a value of every JSON type (string, integer, number, boolean, null, array, object,
nested) beside a string argument; the text is parsed one-shot, one character at a time and in random
chunkings, and every parse must give the call that was written. Template outputs are the template's own
render of the call (what a model of that template writes); spec outputs come from the family's sample
writer.

The fixed grid (format x type) runs one character at a time and three seeded chunkings; hypothesis then
draws values of each type and chunkings of its own.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import PROJECT_TEMPLATES, REPO
from tests.test_python_literals import PY_CALLS
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import ParseOptions, StreamParser
from workbench.runtime.parsing.samples import SampleCall, sample_output
from workbench.runtime.spec import FormatSpec
from workbench.validate.compare import json_equal

JSON_TYPES = ("string", "integer", "number", "boolean", "null", "array", "object", "nested")
SCHEMA_TYPE = {"nested": "object"}
EXAMPLES: dict[str, Any] = {
    "string": 'Paris, "France" (it\'s 20°C)\nsecond line \\ end',
    "integer": -42,
    "number": 2.75,
    "boolean": False,
    "null": None,
    "array": ["a, b", 1, True, None],
    "object": {"k": "v)", "n": 3},
    "nested": {"outer": [{"inner": [1, {"deep": None}]}, "x'y"], "flag": True},
}


def _tool(type_name: str) -> Tool:
    x = {"type": SCHEMA_TYPE.get(type_name, type_name)}
    if type_name == "null":
        x = {"anyOf": [{"type": "null"}]}
    props = {"x": x, "note": {"type": "string"}}
    return Tool("probe_tool", "A probe.", {"type": "object", "properties": props, "required": ["x", "note"]})


@dataclass(frozen=True)
class Format:
    """One format the project knows: a spec, and the template whose renders are its outputs (if any)."""

    name: str
    spec: FormatSpec
    template: Any = None  # a TemplateSource

    def output(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """What a model of this format writes for one call (None: the format cannot write it)."""
        if self.template is None:
            return sample_output(
                self.spec, calls=[SampleCall("probe_tool", arguments, "call_1")], tools=[tool]
            )
        from workbench.template.render import fixed_clock
        from workbench.validate.cases import CallInput, Case
        from workbench.validate.render import render_case

        case = Case(
            "probe", ("tool_call",), "one call", calls=(CallInput("probe_tool", arguments, "Ab3dE5gH7"),)
        )
        from workbench.validate.run import raw_value_ambiguity

        with fixed_clock():
            rendered = render_case(self.template, self.spec, case, tools=(tool,))
        if rendered.unsupported or raw_value_ambiguity(self.spec, case, rendered.output):
            return None  # (a value written raw between quotes it holds: no reader can tell where it ends)
        return rendered.output


@functools.cache
def formats() -> tuple[Format, ...]:
    from workbench.formats import analyze
    from workbench.template.source import TemplateSource, load_template
    from workbench.testing import reference_specs

    out: list[Format] = []
    paths = sorted(PROJECT_TEMPLATES.glob("*.jinja")) + sorted(
        (PROJECT_TEMPLATES / "new-formats").glob("*.jinja")
    )
    for path in paths:
        source = load_template(str(path))
        out.append(Format(f"template:{path.stem}", analyze(source).spec, source))
    for path in sorted((REPO / "specs").glob("*.json")):
        spec = FormatSpec.from_json(path.read_text(encoding="utf-8"))
        if spec.tools.format != "none":
            out.append(Format(f"spec:{path.stem}", spec))
    for name in ("QWEN3_LIKE", "DEEPSEEK_V31_LIKE", "MISTRAL_LIKE", "XML_TAGGED", "HARMONY"):
        out.append(Format(f"reference:{name}", getattr(reference_specs, name)))
    for stem in FIXTURES:
        spec = FormatSpec.from_json((REPO / "specs" / "_parser_fixtures" / f"{stem}.json").read_text("utf-8"))
        out.append(Format(f"fixture:{stem}", spec))
    # The shapes issue 18 names: a per-parameter type attribute (DeepSeek-V3.2's DSML, read by the analysis
    # and by the hand-written spec) and pythonic calls with Python-literal values in a wrapper per call.
    dsml = TemplateSource(text=DSML, name="dsml", origin="<test>")
    out.append(Format("test:dsml", analyze(dsml).spec, dsml))
    v32 = FormatSpec.from_json((REPO / "specs" / "deepseekv32.json").read_text(encoding="utf-8"))
    out.append(Format("test:dsml-read-by-spec-deepseekv32", v32, dsml))
    py_calls = TemplateSource(text=PY_CALLS, name="python-literal-calls", origin="<test>")
    out.append(Format("test:python-literal-calls", analyze(py_calls).spec, py_calls))
    # Replies written as one JSON object (spec v6): spaced, compact, and opened by the generation prompt.
    for stem in ENVELOPES:
        source = load_template(str(PROJECT_TEMPLATES / "recent-shapes" / f"{stem}.jinja"))
        out.append(Format(f"envelope:{stem}", analyze(source).spec, source))
    return tuple(out)


#: Templates whose reply is one JSON object holding the text and the calls (the envelope family): spaced,
#: compact, opened by the prompt, and calls whose arguments sit beside the name (Holo).
ENVELOPES = ("xlam1-like", "agentcpmgui-like", "jsonlog-like", "holo-like", "browseruse-like")


#: DeepSeek-V3.2's DSML calls: each parameter says in an attribute whether its value is a raw string.
DSML = """\
{%- for m in messages -%}
{%- if m.role == 'user' -%}{{- '<｜User｜>' ~ m.content -}}
{%- elif m.role == 'assistant' -%}{{- '<｜Assistant｜></think>' -}}
{%- if m.content is string -%}{{- m.content -}}{%- endif -%}
{%- if m.tool_calls is defined and m.tool_calls -%}
{{- '\\n\\n<｜DSML｜function_calls>\\n' -}}
{%- for c in m.tool_calls -%}
{{- '<｜DSML｜invoke name="' ~ c.function.name ~ '">\\n' -}}
{%- for k, v in c.function.arguments | items -%}
{{- '<｜DSML｜parameter name="' ~ k ~ '" string="' ~ ('true' if v is string else 'false') ~ '">' -}}
{{- (v if v is string else v | tojson) ~ '</｜DSML｜parameter>\\n' -}}
{%- endfor -%}
{{- '</｜DSML｜invoke>\\n' -}}
{%- endfor -%}
{{- '</｜DSML｜function_calls>' -}}
{%- endif -%}
{{- '<｜end▁of▁sentence｜>' -}}
{%- elif m.role == 'tool' -%}{{- '<｜Tool｜>' ~ m.content -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<｜Assistant｜></think>' -}}{%- endif -%}
"""


#: Parser fixtures of the families no template or spec above writes (functionary v3.2: recipient).
FIXTURES = ("meetkai-functionary-medium-v3.2",)


FORMAT_NAMES = [
    *(f"template:{p.stem}" for p in sorted(PROJECT_TEMPLATES.glob("*.jinja"))),
    *(f"template:{p.stem}" for p in sorted((PROJECT_TEMPLATES / "new-formats").glob("*.jinja"))),
    *(f"spec:{p.stem}" for p in sorted((REPO / "specs").glob("*.json")) if p.stem != "kimi_thinking"),
    *(f"reference:{n}" for n in ("QWEN3_LIKE", "DEEPSEEK_V31_LIKE", "MISTRAL_LIKE", "XML_TAGGED", "HARMONY")),
    *(f"fixture:{stem}" for stem in FIXTURES),
    "test:dsml",
    "test:dsml-read-by-spec-deepseekv32",
    "test:python-literal-calls",
    *(f"envelope:{stem}" for stem in ENVELOPES),
]


def _format(name: str) -> Format:
    return next(f for f in formats() if f.name == name)


def _parse(fmt: Format, tool: Tool, text: str, cuts: Sequence[int]) -> list[tuple[str, Any]]:
    parser = StreamParser(fmt.spec, [tool], options=ParseOptions())
    last = 0
    for cut in [*cuts, len(text)]:
        parser.feed(text[last:cut])
        last = cut
    message = parser.finish().message
    return [(c.name, c.arguments_value()) for c in message.tool_calls]


def _same(got: list[tuple[str, Any]], want: list[tuple[str, Any]]) -> bool:
    return len(got) == len(want) and all(
        g[0] == w[0] and json_equal(g[1], w[1]) for g, w in zip(got, want, strict=True)
    )


def check(fmt: Format, type_name: str, value: Any, chunkings: Sequence[Sequence[int]]) -> str | None:
    """Parse the format's output for ``x=value`` one-shot and at every chunking; None when the format
    cannot write the call, else "" when every parse gives the call, else the first difference."""
    tool = _tool(type_name)
    arguments = {"x": value, "note": "end"}
    text = fmt.output(tool, arguments)
    if text is None:
        return None
    want = [("probe_tool", arguments)]
    one = _parse(fmt, tool, text, [])
    if not _same(one, want):
        return f"one-shot: {one!r} != {want!r} in {text!r}"
    for cuts in chunkings:
        got = _parse(fmt, tool, text, cuts)
        if not _same(got, one):
            return f"chunked at {list(cuts)[:12]}...: {got!r} != one-shot {one!r} in {text!r}"
    return ""


def _chunkings(text_len: int, seed: str) -> list[list[int]]:
    rng = random.Random(seed)
    out = [list(range(1, text_len))]
    for _ in range(3):
        k = rng.randint(1, max(1, text_len // 3))
        out.append(sorted(rng.sample(range(1, text_len), min(k, max(0, text_len - 1)))))
    return out


@pytest.mark.parametrize("type_name", JSON_TYPES)
@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_every_format_reads_every_value_type_the_same_at_any_chunking(
    format_name: str, type_name: str
) -> None:
    fmt = _format(format_name)
    value = EXAMPLES[type_name]
    text = fmt.output(_tool(type_name), {"x": value, "note": "end"})
    if text is None:
        pytest.skip(f"{format_name} does not write a {type_name} argument")
    outcome = check(fmt, type_name, value, _chunkings(len(text), f"{format_name}:{type_name}"))
    assert outcome == "", outcome


def test_the_grid_covers_every_family() -> None:
    from workbench.runtime.formats import builtin_names

    assert {f.spec.tools.format for f in formats()} >= set(builtin_names())
    assert any(f.spec.envelope.defined for f in formats())


# ------------------------------------------------------------------------------------------- hypothesis
_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="<>|"),
    min_size=1,
    max_size=24,
).filter(lambda s: s == s.strip())
_SCALARS = st.one_of(
    st.integers(-(10**9), 10**9),
    st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: abs(f) < 1e15),
    st.booleans(),
    st.none(),
    _TEXT,
)
_KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": _TEXT,
    "integer": st.integers(-(10**12), 10**12),
    "number": st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: abs(f) < 1e15),
    "boolean": st.booleans(),
    "null": st.none(),
    "array": st.lists(_SCALARS, max_size=4),
    "object": st.dictionaries(_KEYS, _SCALARS, max_size=3),
    "nested": st.recursive(
        _SCALARS,
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
        max_leaves=6,
    ).filter(lambda v: isinstance(v, dict)),
}


@st.composite
def _case(draw: st.DrawFn) -> tuple[str, str, Any, list[int]]:
    name = draw(st.sampled_from(FORMAT_NAMES))
    type_name = draw(st.sampled_from(JSON_TYPES))
    value = draw(VALUES[type_name])
    cuts = draw(st.lists(st.integers(1, 4000), max_size=30))
    return name, type_name, value, cuts


def _run_drawn(case: tuple[str, str, Any, list[int]]) -> None:
    name, type_name, value, cuts = case
    fmt = _format(name)
    text = fmt.output(_tool(type_name), {"x": value, "note": "end"})
    assume(text is not None)
    assert text is not None
    one_char = list(range(1, len(text)))
    drawn = sorted({c % len(text) for c in cuts if c % len(text)}) if text else []
    outcome = check(fmt, type_name, value, [one_char, drawn])
    assert outcome == "", f"{name} {type_name} {json.dumps(value)}: {outcome}"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_drawn_values_read_the_same_one_shot_and_streamed(case: tuple[str, str, Any, list[int]]) -> None:
    _run_drawn(case)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_drawn_values_read_the_same_one_shot_and_streamed_many(case: tuple[str, str, Any, list[int]]) -> None:
    _run_drawn(case)
