"""The lark target: llguidance compiles the grammar and accepts every round-trip output token by token with
a real tokenizer, and rejects outputs that break the tool schema (so acceptance means something)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SHARED, shared_path, shared_templates
from workbench.export import Unsupported
from workbench.export.grammar_proof import AFTER_END_OF_SEQUENCE
from workbench.export.lark import (
    build_lark,
    check_lark_accepted,
    compile_lark,
    lark_options,
    load_lark_tokenizer,
    prove_lark,
)
from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template
from workbench.validate import ROUND_TRIP_TOOLS, validate

pytest.importorskip("llguidance")

PROJECT = [
    "chatml-think-tools",
    "deepseek-v31-like",
    "harmony-channels",
    "llama3-json",
    "mistral-tool-calls",
    "pythonic-calls",
    "xml-tagged-args",
    "new-formats/delimited-strings",
    "new-formats/effort-switches",
    "new-formats/element-markup",
    "new-formats/id-first-calls",
    "new-formats/keyed-lines",
    "new-formats/keyword-calls",
    "new-formats/mixture",
    "new-formats/numbered-calls",
    "new-formats/opened-answer",
    "new-formats/typed-attr-args",
    # a bare pythonic list with JSON literals: free text waits for "[" before any tool's call
    "recent-shapes/llama4-like",
    "recent-shapes/gemma3tc-like",
]
# The model's own tokenizer where ../shared has it (markers that are special tokens there are tokens in the
# grammar); qwen3 for the rest.
OWN_TOKENIZER = {
    "openai-gpt-oss": "gpt-oss",
    "deepseek-ai-DeepSeek": "deepseek-v3",
    "meta-llama": "llama-3.1",
}


def tokenizer_for(name: str) -> Path:
    own = next((tok for prefix, tok in OWN_TOKENIZER.items() if name.startswith(prefix)), "qwen3")
    return shared_path("tokenizers", own)


def proven(source_ref: str | Path, tokenizer: Path):
    source = load_template(str(source_ref))
    spec = analyze(source).spec
    report = validate(source, spec)
    return spec, report, load_lark_tokenizer(tokenizer)


@pytest.mark.shared
@pytest.mark.parametrize("name", PROJECT)
def test_every_project_round_trip_output_is_accepted_token_by_token(name: str) -> None:
    ref = Path(__file__).resolve().parents[1] / "templates" / f"{name}.jinja"
    spec, report, tok = proven(ref, tokenizer_for(name))
    proof = prove_lark(spec, report, tok)
    assert proof.passed, [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]
    assert sum(c.status == "pass" for c in proof.cases) == len(report.applicable)


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("path", shared_templates(), ids=lambda p: p.stem)
def test_every_validated_shared_template_is_accepted_token_by_token(path: Path) -> None:
    spec, report, tok = proven(path, tokenizer_for(path.stem))
    if spec.tools.format == "none":
        with pytest.raises(Unsupported, match="no tool calls"):
            build_lark(spec, ROUND_TRIP_TOOLS)
        return
    if not report.validated:
        pytest.skip(f"{path.stem} does not validate: {report.summary()}")
    proof = prove_lark(spec, report, tok)
    assert proof.passed, [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]


def corrupt(output: str) -> str:
    """Break the arguments: an unknown enum value or a string where an integer is due."""
    for good, bad in (('"celsius"', '"kelvin"'), ("celsius", "kelvin"), ('"UTC"', "UTC!"), ("UTC", "<<UTC")):
        if good in output:
            return output.replace(good, bad, 1)
    raise AssertionError(f"nothing to corrupt in {output!r}")


@pytest.mark.shared
@pytest.mark.parametrize(
    ("template", "tokenizer"),
    [
        ("templates/chatml-think-tools.jinja", "qwen3"),
        ("templates/xml-tagged-args.jinja", "qwen3"),
        ("templates/llama3-json.jinja", "llama-3.1"),
        ("templates/harmony-channels.jinja", "gpt-oss"),
        ("../shared/templates/deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-v3"),
    ],
)
def test_a_corrupted_call_is_rejected(template: str, tokenizer: str) -> None:
    repo = Path(__file__).resolve().parents[1]
    path = repo / template if template.startswith("templates") else SHARED / template.split("shared/", 1)[1]
    if not path.exists():
        pytest.skip(f"../shared not present ({path})")
    spec, report, tok = proven(path, shared_path("tokenizers", tokenizer))
    grammar = compile_lark(build_lark(spec, ROUND_TRIP_TOOLS, **lark_options(tok)), tok)
    case = next(c for c in report.cases if c.id == "one_call")
    ends = [m for m in spec.end_markers if m]
    assert check_lark_accepted(grammar, tok, case.output, ends) == ""
    assert check_lark_accepted(grammar, tok, corrupt(case.output), ends) != ""
    value = next(v for v in ("Paris", "UTC") if v in case.output)
    unfinished = case.output[: case.output.index(value) + 2]  # stops inside an argument
    assert "cannot end there" in check_lark_accepted(grammar, tok, unfinished, [])


def test_special_tokens_are_written_as_tokens_and_text_as_literals() -> None:
    tok = load_lark_tokenizer(shared_path("tokenizers", "qwen3"))
    spec = analyze(load_template("chatml-think-tools")).spec
    text = build_lark(spec, ROUND_TRIP_TOOLS[:1], **lark_options(tok))
    assert "<tool_call>" in text and '"<tool_call>' not in text  # a token, not bytes
    assert '"\\"get_weather\\""' in text  # the function name is schema-exact


def test_text_markers_stop_free_text_lazily() -> None:
    """Without marker tokens (a tokenizer that spells markers as text), the trigger ends a lazy free-text
    lexeme: llguidance lexes greedily, so plain free text would run past it."""
    spec = analyze(load_template("chatml-think-tools")).spec
    text = build_lark(spec, ROUND_TRIP_TOOLS[:1])
    assert '[lazy]: /(?s:.*)/ "<tool_call>"' in text
    assert "<tool_call> " not in text


def test_toolless_specs_are_named_as_unsupported() -> None:
    with pytest.raises(Unsupported, match="no tool calls"):
        build_lark(FormatSpec(), ROUND_TRIP_TOOLS)


def test_the_cli_writes_the_grammar_with_provenance(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from workbench.cli import app

    shared_path("tokenizers", "qwen3")
    out = tmp_path / "g.lark"
    result = CliRunner().invoke(
        app, ["export", "chatml-think-tools", "--target", "lark", "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["proof"]["passed"] and summary["target"] == "lark"
    text = out.read_text()
    assert text.startswith("// llguidance Lark grammar")
    assert "sha256 " + load_template("chatml-think-tools").sha256 in text
    assert "llguidance 1." in text


# Fuzzed formats whose round-trip outputs the Lark grammar refused (issue 18's fresh-seed spot checks), by
# class: a bare pythonic list ("[" + a tool's name) beside a reasoning closer that starts with "["
# ("[[/nelaru]]") or an answer marker ("[ANSWER]"); a separator or closer that starts with the blanks a
# lenient gap takes ("\n\n<</invoke>>\n<<invoke>>" beside a gap then "<</invoke>><</subo>>", " ##/action##").
LARK_FOUND_SEEDS = [850000, 850002, 850022, 850024, 850043, 860041, 860051, 860107, 860143, 860149, 860198]
# The outputs of these go on after "<|im_end|>", the end of sequence of the tokenizer the proof uses: a model
# with that tokenizer stops there, and the proof says so (not a fault of the grammar).
EOS_MID_TURN = AFTER_END_OF_SEQUENCE


def _fuzzed_proof(seed: int):
    from workbench.template.source import TemplateSource
    from workbench.testing.format_fuzz import draw_format, write_template

    draw = draw_format(seed)
    source = TemplateSource(text=write_template(draw), name=f"fuzz-{seed}", origin="<format fuzz>")
    spec = analyze(source).spec
    report = validate(source, spec, continuation=False)
    assert report.validated, report.summary()
    return prove_lark(spec, report, load_lark_tokenizer(shared_path("tokenizers", "qwen3")))


@pytest.mark.shared
@pytest.mark.parametrize("seed", [*LARK_FOUND_SEEDS, *range(40)])
def test_fuzzed_formats_round_trip_outputs_are_accepted(seed: int) -> None:
    proof = _fuzzed_proof(seed)
    failed = [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]
    assert all(EOS_MID_TURN in f for f in failed), failed


@pytest.mark.shared
def test_an_output_that_goes_on_after_the_end_of_sequence_is_named() -> None:
    """Seed 16 ends its headed messages with "<|im_end|>" and writes the next one after it."""
    proof = _fuzzed_proof(16)
    failed = [c.detail for c in proof.cases if c.status == "fail"]
    assert failed and all(EOS_MID_TURN in f and "'<|im_end|>'" in f for f in failed)


def test_a_literal_after_a_gap_has_its_blanks_apart() -> None:
    from workbench.export.lark import blanks_after_gaps
    from workbench.export.lark_ast import Alt, Regex, Rep, Seq, Text

    gap = Regex("[ \\t\\n]{0,4}")
    separator, end = Text("\n\n<</invoke>>\n<<invoke>>"), Text("<</invoke>><</subo>>")
    call = Seq((Text("{"), gap))
    tree = Seq((call, Rep(Seq((separator, call)), 0, 7), gap, end))
    fixed, ends_with_gap = blanks_after_gaps(tree)
    assert not ends_with_gap
    repeated = fixed.items[2].item.items  # the call's "{" and gap are flattened into the sequence
    assert repeated[:2] == (Text("\n\n"), Text("<</invoke>>\n<<invoke>>"))
    # not after a special token or other text: free text beside the literal must not run past a lone blank
    after_token = Seq((Text("<tool_call>"), Text("\n<function=")))
    assert blanks_after_gaps(after_token)[0] == after_token
    # after an optional gap, or a choice one of whose branches ends with one
    assert blanks_after_gaps(Seq((Alt((Text("a"), gap)), Text(" b"))))[0] == Seq(
        (Alt((Text("a"), gap)), Text(" "), Text("b"))
    )
