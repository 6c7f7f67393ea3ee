"""The structural-tag target: compiled by xgrammar, every round-trip output accepted token by token, and
outputs that break the tool schema rejected (so acceptance means something)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_path
from workbench.export import (
    Unsupported,
    build_structural_tag,
    check_accepted,
    load_grammar_tokenizer,
    prove_structural_tag,
)
from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec, ReasoningSpec, ToolsSpec
from workbench.template.source import load_template
from workbench.validate import ROUND_TRIP_TOOLS, validate

SUPPORTED = [
    "chatml-think-tools",
    "deepseek-v31-like",
    "harmony-channels",
    "llama3-json",
    "mistral-tool-calls",
    "pythonic-calls",
    "xml-tagged-args",
]


@pytest.fixture(scope="module")
def tok():
    """The project's own byte-level BPE: the same in every checkout, no ../shared needed."""
    return load_grammar_tokenizer(use_shared=False)


def compiled(tok, spec: FormatSpec, tools=ROUND_TRIP_TOOLS):
    return tok.compiler.compile_structural_tag(json.dumps(build_structural_tag(spec, tools)))


@pytest.mark.parametrize("name", SUPPORTED)
def test_every_round_trip_output_is_accepted_token_by_token(tok, name: str) -> None:
    source = load_template(name)
    spec = analyze(source).spec
    report = validate(source, spec)
    proof = prove_structural_tag(spec, report, tok)
    assert proof.passed, [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]
    assert sum(c.status == "pass" for c in proof.cases) == len(report.applicable)


QWEN_LIKE = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"),
    tools=ToolsSpec(
        format="json_native",
        call_start="<tool_call>\n",
        call_end="</tool_call>",
        parameter_order=("name", "arguments"),
        parallel=True,
    ),
    end_markers=("<|im_end|>",),
)
CALL = '<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'


def test_the_grammar_rejects_unknown_tools_and_ill_typed_arguments(tok) -> None:
    grammar = compiled(tok, QWEN_LIKE)
    good = CALL.format(name="get_weather", args='{"city": "Paris", "unit": "celsius"}')
    assert check_accepted(grammar, tok, "<think>\nok\n</think>\n\n" + good, []) == ""
    unknown = CALL.format(name="get_wether", args='{"city": "Paris", "unit": "celsius"}')
    assert "rejected" in check_accepted(grammar, tok, unknown, [])
    wrong_enum = CALL.format(name="get_weather", args='{"city": "Paris", "unit": "kelvin"}')
    assert "rejected" in check_accepted(grammar, tok, wrong_enum, [])
    wrong_type = CALL.format(name="set_values", args='{"count": "many"}')
    assert "rejected" in check_accepted(grammar, tok, wrong_type, [])
    missing_required = CALL.format(name="get_weather", args='{"city": "Paris"}')
    assert "rejected" in check_accepted(grammar, tok, missing_required, [])
    unfinished = good[: good.index("celsius")]
    assert "cannot end there" in check_accepted(grammar, tok, unfinished, [])


def test_a_format_without_parallel_calls_allows_only_one(tok) -> None:
    single = FormatSpec(tools=ToolsSpec(**{**QWEN_LIKE.tools.__dict__, "parallel": False}))
    grammar = compiled(tok, single)
    one = CALL.format(name="get_time", args='{"timezone": "UTC"}')
    assert check_accepted(grammar, tok, one + "\n", []) == ""
    assert "rejected" in check_accepted(grammar, tok, one + "\n" + one, [])


def test_the_end_marker_the_model_stops_on_may_complete_the_grammar(tok) -> None:
    harmony = analyze(load_template("harmony-channels")).spec
    grammar = compiled(tok, harmony)
    text = '<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"timezone": "UTC"}'
    assert check_accepted(grammar, tok, text, ["<|call|>"]) == ""
    assert "cannot end there" in check_accepted(grammar, tok, text, [])


def test_structural_tag_is_valid_xgrammar_json(tok) -> None:
    import xgrammar as xgr

    tag = build_structural_tag(analyze(load_template("xml-tagged-args")).spec, ROUND_TRIP_TOOLS[:1])
    assert xgr.StructuralTag.from_json(json.dumps(tag)).type == "structural_tag"


def test_toolless_specs_are_named_as_unsupported() -> None:
    with pytest.raises(Unsupported, match="no tool calls"):
        build_structural_tag(FormatSpec(), ROUND_TRIP_TOOLS)


def test_the_real_qwen3_tokenizer_accepts_every_qwen_like_output() -> None:
    folder = shared_path("tokenizers", "qwen3")
    tok = load_grammar_tokenizer(folder)
    source = load_template("chatml-think-tools")
    spec = analyze(source).spec
    proof = prove_structural_tag(spec, validate(source, spec), tok)
    assert proof.passed, [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]
    assert proof.notes == ("tokenizer: qwen3",)


def test_recipient_calls_are_expressed_and_every_round_trip_output_accepted(tok) -> None:
    """Functionary v3.2 (``>>>name\\n{json}``), which the hand-written exporter could not express."""
    source = load_template(shared_path("templates", "meetkai-functionary-medium-v3.2.jinja"))
    spec = analyze(source).spec
    assert spec.layout.opener == ">>>"  # learned as headed messages (issue 18)
    report = validate(source, spec)
    proof = prove_structural_tag(spec, report, tok)
    assert proof.passed, [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]
    assert sum(c.status == "pass" for c in proof.cases) == len(report.applicable)
