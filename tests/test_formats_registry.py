"""Adding a format is one family object and one registry line: a toy format goes through every stage.

The toy format writes calls as ``@@call NAME {json}@@end``.  It is registered at test time only
(:func:`workbench.formats.register`: its runtime family and its export-side gap), and then parsed (one-shot
and streamed), constrained (xgrammar accepts a sample call), validated against a toy chat template (the round
trip), and exported (structural tag, spec). docs/INTERFACES.md ("Adding a format") walks through the same
example.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest
import xgrammar as xgr

from workbench.export import export, load_grammar_tokenizer
from workbench.formats import (
    FormatFamily,
    SampleCall,
    check_registry,
    families,
    family,
    hooks,
    register,
    unregister,
)
from workbench.runtime import formats as runtime_formats
from workbench.runtime.chat import Tool
from workbench.runtime.formats.tag_with_json.parser import TagWithJsonParser
from workbench.runtime.grammar import build_grammar
from workbench.runtime.grammar.elements import Element, const, ebnf, json_schema_ebnf, seq
from workbench.runtime.grammar.tool_grammar import ToolGrammar
from workbench.runtime.parsing import StreamParser, parse
from workbench.runtime.parsing.samples import sample_output
from workbench.runtime.spec import FormatSpec, PromptSpec, ToolsSpec
from workbench.runtime.values import dumps
from workbench.template.source import TemplateSource
from workbench.validate import ROUND_TRIP_TOOLS, validate


# ------------------------------------------------------------------------------------------ the toy family
class ToyGrammar(ToolGrammar):
    """One call: ``NAME {json}`` between the spec's ``call_start`` (``@@call ``) and ``call_end``."""

    name = "toy"

    def call_body(self, tool: Tool) -> Element:
        schema = ebnf(json_schema_ebnf(tool.parameters, any_whitespace=self.any_whitespace))
        return seq(const(tool.name + self.t.name_suffix), schema)


class ToyParser(TagWithJsonParser):
    """The generic marker machinery reads it: the name ends at ``name_suffix``, the JSON at ``call_end``."""

    name = "toy"


def write_toy_calls(
    spec: FormatSpec, calls: Sequence[SampleCall], *, tools: Sequence[Tool] | None = None
) -> str:
    t = spec.tools
    return "".join(
        f"{t.call_start}{c.name}{t.name_suffix}{dumps(dict(c.arguments))}{t.call_end}" for c in calls
    )


TOY = FormatFamily(name="toy", grammar=ToyGrammar, write_calls=write_toy_calls, parser=ToyParser)
TOY_GAP = "the toy format has no response-template hook"

TOY_SPEC = FormatSpec(
    tools=ToolsSpec(format="toy", call_start="@@call ", name_suffix=" ", call_end="@@end", parallel=True),
    prompt=PromptSpec(generation_prompt="<|assistant|>\n"),
    end_markers=("<|end|>",),
)

# A chat template that writes the toy format, so the round trip can render real turns.
TOY_TEMPLATE = (
    "{%- for m in messages -%}"
    "<|{{ m.role }}|>\n"
    "{%- if m.content is string %}{{ m.content }}{% endif -%}"
    "{%- for c in m.tool_calls or [] -%}"
    "{%- set args = c.function.arguments -%}"
    "@@call {{ c.function.name }} {{ (args if args is string else args | tojson) }}@@end"
    "{%- endfor -%}"
    "<|end|>\n"
    "{%- endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>\n{% endif -%}"
)

WEATHER = Tool(
    "get_weather",
    "",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CALL_TEXT = 'Let me look.@@call get_weather {"city": "Paris"}@@end'


@pytest.fixture(autouse=True)
def toy_registered() -> Iterator[None]:
    register(TOY, response_template_gap=TOY_GAP)
    yield
    unregister("toy")


# ------------------------------------------------------------------------------------------ the stages
def test_registering_makes_the_family_visible_to_every_stage() -> None:
    assert family("toy") is TOY and families()["toy"] is TOY and runtime_formats.family("toy") is TOY
    assert hooks("toy") is not None and hooks("toy").response_template_gap == TOY_GAP
    with pytest.raises(ValueError, match="registered already"):
        register(TOY, response_template_gap=TOY_GAP)


def test_the_toy_format_parses_one_shot() -> None:
    contract = parse(TOY_SPEC, CALL_TEXT, tools=[WEATHER]).to_contract()
    assert contract["content"] == "Let me look."
    calls = [(c["name"], c["arguments"]) for c in contract["tool_calls"]]
    assert calls == [("get_weather", {"city": "Paris"})]


def test_the_toy_format_parses_streamed_character_by_character() -> None:
    parser = StreamParser(TOY_SPEC, [WEATHER])
    events = [e for ch in CALL_TEXT for e in parser.feed(ch)]
    result = parser.finish()
    assert result.to_contract() == parse(TOY_SPEC, CALL_TEXT, tools=[WEATHER]).to_contract()
    assert "".join(e.text for e in [*events, *parser.final_events] if e.kind == "tool_name") == "get_weather"


def test_xgrammar_accepts_a_sample_call_of_the_toy_format() -> None:
    plan = build_grammar(TOY_SPEC, [WEATHER], tool_choice="required")
    text = sample_output(TOY_SPEC, calls=[SampleCall("get_weather", {"city": "Oslo"})], end=False)
    compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(plan.text)
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    assert matcher.accept_string(text) and matcher.is_completed()
    assert plan.trigger == "" and build_grammar(TOY_SPEC, [WEATHER]).trigger == "@@call"


def test_the_toy_template_validates_with_the_toy_spec() -> None:
    source = TemplateSource(TOY_TEMPLATE, "toy", "test")
    report = validate(source, TOY_SPEC)
    failing = [f"{c.id}: {c.reason} {c.mismatches}" for c in report.cases if c.status in ("FAIL", "ERROR")]
    assert failing == []
    assert report.validated


def test_the_toy_format_exports_as_a_proven_structural_tag() -> None:
    source = TemplateSource(TOY_TEMPLATE, "toy", "test")
    result = export("structural-tag", template=source, spec=TOY_SPEC, tools=list(ROUND_TRIP_TOOLS))
    assert result.proof is not None and result.proof.passed
    assert "@@call" in result.text
    assert load_grammar_tokenizer() is not None


def test_the_toy_spec_exports_as_json() -> None:
    source = TemplateSource(TOY_TEMPLATE, "toy", "test")
    result = export("spec", template=source, spec=TOY_SPEC)
    assert json.loads(result.text)["tools"]["format"] == "toy"


def test_the_spec_names_exactly_the_registered_formats() -> None:
    """``spec.TOOL_FORMATS`` is the built-in families; a family registered at run time is accepted too."""
    from workbench.runtime.spec import TOOL_FORMATS, tool_format_names

    assert set(TOOL_FORMATS) - {"none"} == set(families()) - {"toy"}
    assert tool_format_names() == (*TOOL_FORMATS, "toy")
    assert FormatSpec.from_dict(TOY_SPEC.to_dict()) == TOY_SPEC


def test_every_runtime_family_has_its_analysis_and_export_side() -> None:
    assert check_registry() == []


@pytest.mark.parametrize("name", sorted(set(runtime_formats.builtin_names())))
def test_every_part_of_a_family_goes_by_the_family_format_name(name: str) -> None:
    fam = families()[name]
    assert fam.name == name and fam.grammar.name == name
    assert fam.parser is None or fam.parser.name == name
