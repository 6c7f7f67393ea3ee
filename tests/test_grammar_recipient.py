"""The ``recipient`` format (Functionary v3.2): grammars for every tool choice, checked byte by byte, token by
token with a Llama-3 tokenizer, and end to end with the tiny random model.

Expected strings are written from the format's definition: the assistant turn is a run of
``>>>RECIPIENT\\nBODY`` messages, ``all`` addresses the user (text), any other recipient is a tool whose body
is its JSON arguments, and the generation prompt already wrote the first ``>>>``, so every grammar starts
right at the first recipient name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import jsonschema
import pytest
import xgrammar as xgr

from tests.conftest import SHARED, shared_path
from workbench.formats import analyze
from workbench.runtime.chat import Message, Tool
from workbench.runtime.grammar import GrammarError, build_grammar
from workbench.runtime.spec import FormatSpec, PromptSpec
from workbench.template.source import TemplateSource, load_template
from workbench.testing.reference_specs import FUNCTIONARY_V32_LIKE

WEATHER = Tool(
    "get_weather",
    "Get the weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1, "maxLength": 12},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
)
SEARCH = Tool(
    "search",
    "Search the web",
    {"type": "object", "properties": {"q": {"type": "string", "maxLength": 10}}, "required": ["q"]},
)
TOOLS = [WEATHER, SEARCH]
SCHEMAS = {t.name: t.parameters for t in TOOLS}

# What the model writes after the prompt's ">>>" (written from the format, not from the grammar).
WEATHER_CALL = 'get_weather\n{"city": "Paris", "unit": "celsius"}'
SEARCH_CALL = 'search\n{"q": "news"}'
TWO_CALLS = WEATHER_CALL + ">>>" + SEARCH_CALL
TEXT = "all\nIt is sunny in Paris."
TEXT_THEN_CALL = "all\nLet me check.>>>" + WEATHER_CALL


def functionary_template() -> TemplateSource:
    return load_template(shared_path("templates", "meetkai-functionary-medium-v3.2.jinja"))


@pytest.fixture(params=["hand-written", "analysed"])
def spec(request: pytest.FixtureRequest) -> FormatSpec:
    """The hand-written reference spec, and the analyzer's spec of the real template (../shared)."""
    if request.param == "hand-written":
        return FUNCTIONARY_V32_LIKE
    return analyze(functionary_template()).spec


def accepts(grammar_json: str | None, text: str) -> bool:
    """Whether the grammar accepts ``text`` as a complete output (byte-level, no tokenizer)."""
    assert grammar_json is not None
    compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(grammar_json)
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return matcher.accept_string(text) and matcher.is_completed()


# ------------------------------------------------------------------------------------------ strings
def test_the_analysed_template_is_the_recipient_format_opened_by_the_prompt(spec: FormatSpec) -> None:
    if spec.layout.headed:  # learned (issue 18): messages opened by ">>>", the answer addressed to "all"
        assert spec.layout.opener == ">>>"
        assert [(m.kind, m.header) for m in spec.layout.messages] == [("content", "all\n")]
    else:
        assert spec.tools.format == "recipient"
    assert spec.prompt.output_prefix == ">>>"


def test_required_forces_a_schema_valid_call_right_after_the_prompts_opener(spec: FormatSpec) -> None:
    plan = build_grammar(spec, TOOLS, tool_choice="required", parallel=False)
    assert plan.kind == "structural_tag" and plan.forced
    assert accepts(plan.text, WEATHER_CALL)
    assert accepts(plan.text, SEARCH_CALL)
    assert not accepts(plan.text, ">>>" + WEATHER_CALL)  # the prompt already wrote ">>>"
    assert not accepts(plan.text, TEXT)  # a plain answer is not a call
    assert not accepts(plan.text, TEXT_THEN_CALL)
    assert not accepts(plan.text, 'get_weather\n{"city": "Paris"}')  # "unit" is required
    assert not accepts(plan.text, 'get_weather\n{"city": "Paris", "unit": "kelvin"}')
    assert not accepts(plan.text, 'lookup\n{"q": "news"}')  # not a tool
    assert not accepts(plan.text, 'get_weather {"city": "Paris", "unit": "celsius"}')  # the header ends in \n
    assert not accepts(plan.text, TWO_CALLS)  # parallel is off


def test_parallel_calls_are_messages_back_to_back(spec: FormatSpec) -> None:
    plan = build_grammar(spec, TOOLS, tool_choice="required", parallel=True)
    assert plan.parallel
    assert accepts(plan.text, TWO_CALLS)
    assert accepts(plan.text, WEATHER_CALL + ">>>" + WEATHER_CALL)
    assert not accepts(plan.text, WEATHER_CALL + "\n" + SEARCH_CALL)  # each call needs its own opener
    assert not accepts(plan.text, WEATHER_CALL + ">>>all\nDone.")  # a call is not followed by text


def test_a_named_function_forces_that_tool_only(spec: FormatSpec) -> None:
    plan = build_grammar(spec, TOOLS, tool_choice="search")
    assert plan.tools == ("search",) and not plan.parallel
    assert accepts(plan.text, SEARCH_CALL)
    assert not accepts(plan.text, WEATHER_CALL)
    assert not accepts(plan.text, SEARCH_CALL + ">>>" + SEARCH_CALL)


def test_auto_holds_the_answer_from_its_first_token(spec: FormatSpec) -> None:
    # The trigger (">>>") is already in the prompt: waiting for it would leave the first call free.
    plan = build_grammar(spec, TOOLS, tool_choice="auto", parallel=True)
    assert plan.answer is not None and plan.text == plan.answer
    assert accepts(plan.answer, TEXT)
    assert accepts(plan.answer, "all\n")
    assert accepts(plan.answer, WEATHER_CALL)
    assert accepts(plan.answer, TWO_CALLS)
    assert accepts(plan.answer, TEXT_THEN_CALL)
    assert not accepts(plan.answer, "It is sunny.")  # no recipient
    assert not accepts(plan.answer, ">>>" + TEXT)
    assert not accepts(plan.answer, "all\nSure.>>>lookup\n{}")
    assert not accepts(plan.answer, 'all\nSure.>>>get_weather\n{"city": 5, "unit": "celsius"}')
    assert "first token" in plan.describe()


def test_none_allows_only_text_for_the_user(spec: FormatSpec) -> None:
    plan = build_grammar(spec, TOOLS, tool_choice="none")
    assert accepts(plan.answer, TEXT)
    assert not accepts(plan.answer, WEATHER_CALL)  # a call written straight after the prompt's ">>>"
    assert not accepts(plan.answer, TEXT_THEN_CALL)
    assert not accepts(plan.answer, "It is sunny.")


def test_without_an_output_prefix_the_first_message_writes_its_own_opener() -> None:
    spec = replace(FUNCTIONARY_V32_LIKE, prompt=PromptSpec(generation_prompt="<|assistant|>\n"))
    required = build_grammar(spec, TOOLS, tool_choice="required", parallel=True)
    assert accepts(required.text, ">>>" + TWO_CALLS)
    assert not accepts(required.text, TWO_CALLS)
    none = build_grammar(spec, TOOLS, tool_choice="none")
    assert accepts(none.answer, ">>>" + TEXT) and not accepts(none.answer, TEXT)


def test_a_tool_named_all_cannot_be_called() -> None:
    shadow = Tool("all", "", {"type": "object", "properties": {}})
    with pytest.raises(GrammarError, match="'all' addresses the user"):
        build_grammar(FUNCTIONARY_V32_LIKE, [shadow], tool_choice="required")
    plan = build_grammar(FUNCTIONARY_V32_LIKE, [shadow, SEARCH], tool_choice="auto")
    assert any("'all' cannot be called" in n for n in plan.notes)
    assert accepts(plan.answer, TEXT) and accepts(plan.answer, SEARCH_CALL)
    assert not accepts(plan.answer, "all\n{}>>>all\n{}")


# ------------------------------------------------------------------------------------------ tokens
@pytest.fixture(scope="module")
def llama_tokenizer() -> Any:
    """The real Llama 3.1 tokenizer (Functionary v3.2's family) from ../shared, else a small built BPE."""
    from workbench.export.structural_tag import load_grammar_tokenizer

    folder = SHARED / "tokenizers" / "llama-3.1"
    if (folder / "tokenizer.json").is_file():
        return load_grammar_tokenizer(folder)
    return load_grammar_tokenizer(use_shared=False)


def feed_tokens(tok: Any, grammar_json: str, text: str) -> tuple[int, int, bool]:
    """(tokens accepted, tokens in ``text``, whether the stop token then ends the output)."""
    matcher = xgr.GrammarMatcher(tok.compiler.compile_structural_tag(grammar_json))
    ids = tok.encode(text)
    for i, token in enumerate(ids):
        if not matcher.accept_token(token):
            return i, len(ids), False
    return len(ids), len(ids), matcher.accept_token(tok.info.stop_token_ids[0]) and matcher.is_terminated()


def test_token_by_token_with_the_models_tokenizer(llama_tokenizer: Any) -> None:
    tok, spec = llama_tokenizer, FUNCTIONARY_V32_LIKE
    required = build_grammar(spec, TOOLS, tool_choice="required", parallel=True).text
    for good in (WEATHER_CALL, TWO_CALLS):
        done, total, stopped = feed_tokens(tok, required, good)
        assert done == total and stopped, good
    # Nothing a tool name starts with is ">": the very first token of a second opener is refused.
    assert feed_tokens(tok, required, ">>>" + WEATHER_CALL)[0] == 0
    # An unfinished call cannot stop.
    assert feed_tokens(tok, required, WEATHER_CALL[:-1]) == (len(tok.encode(WEATHER_CALL[:-1])),) * 2 + (
        False,
    )
    auto = build_grammar(spec, TOOLS, tool_choice="auto").text
    for good in (TEXT, TEXT_THEN_CALL, WEATHER_CALL):
        done, total, stopped = feed_tokens(tok, auto, good)
        assert done == total and stopped, good
    done, total, _ = feed_tokens(tok, auto, 'all\nOk.>>>get_weather\n{"town": "Rome"}')
    assert done < total


def test_the_first_mask_allows_recipient_names_only(llama_tokenizer: Any) -> None:
    tok = llama_tokenizer
    plan = build_grammar(FUNCTIONARY_V32_LIKE, TOOLS, tool_choice="auto")
    matcher = xgr.GrammarMatcher(tok.compiler.compile_structural_tag(plan.text))
    mask = xgr.allocate_token_bitmask(1, tok.info.vocab_size)
    matcher.fill_next_token_bitmask(mask)
    allowed = {i for i in range(tok.info.vocab_size) if (mask[0, i // 32] >> (i % 32)) & 1}
    vocab = tok.info.decoded_vocab
    names = (b"all\n", b"get_weather\n", b"search\n")
    firsts = {bytes(vocab[i]) for i in allowed if vocab[i]}
    assert firsts and all(any(name.startswith(b) for name in names) for b in firsts), sorted(firsts)[:10]
    assert tok.encode(">>>")[0] not in allowed


# ------------------------------------------------------------------------------------------ engine
@pytest.fixture(scope="module")
def tiny() -> Any:
    from workbench.generation.tiny import load_tiny

    return load_tiny(hidden=16)


def generate(
    tiny: Any, spec: FormatSpec, template: TemplateSource, choice: str, seed: int, max_new_tokens: int = 320
) -> Any:
    from workbench.generation.generate import Generator
    from workbench.generation.sampling import SamplingConfig

    gen = Generator(
        tiny,
        spec,
        messages=[Message("user", "What is the weather in Paris?")],
        tools=TOOLS,
        tool_choice=choice,
        template=template,
        reasoning=False,
        parallel=True,
        sampling=SamplingConfig(temperature=1.0, seed=seed),
        max_new_tokens=max_new_tokens,
    )
    gen.run_to_end()
    return gen


def parsed_calls(gen: Any, spec: FormatSpec) -> list[tuple[str, Any]]:
    """Parse the generated text on its own with the same spec (not the generator's live parser)."""
    from workbench.runtime.parsing import ParseOptions, parse

    result = parse(spec, gen.text, TOOLS, options=ParseOptions(enable_thinking=False))
    return [(c.name, c.arguments_value()) for c in result.message.tool_calls]


@pytest.fixture(params=["real-template", "chatml-prompt"])
def engine_case(request: pytest.FixtureRequest) -> tuple[FormatSpec, TemplateSource]:
    """The real template and its analysed spec; without ../shared, the hand-written spec behind a ChatML
    prompt (the grammar and the parser both take the prompt's ">>>" as written, so they still meet)."""
    if request.param == "real-template":
        source = functionary_template()
        return analyze(source).spec, source
    return FUNCTIONARY_V32_LIKE, load_template("chatml-think-tools")


@pytest.mark.parametrize("choice", ["required", "search"])
def test_every_seed_of_the_tiny_model_yields_schema_valid_calls(
    tiny: Any, engine_case: tuple[FormatSpec, TemplateSource], choice: str
) -> None:
    spec, template = engine_case
    bad = []  # 320 new tokens leave room for MAX_PARALLEL_CALLS short calls
    for seed in range(6 if choice == "required" else 2):
        gen = generate(tiny, spec, template, choice, seed)
        calls = parsed_calls(gen, spec)
        problem = "" if calls else "no tool call"
        for name, args in calls:
            if name not in SCHEMAS or (choice != "required" and name != choice):
                problem = f"tool {name!r} not allowed"
                continue
            try:
                jsonschema.validate(args, SCHEMAS[name])
            except jsonschema.ValidationError as exc:
                problem = f"arguments {args!r} invalid: {exc.message}"
        if gen.finish_reason == "max_new_tokens":
            problem = problem or "did not finish"
        if problem:
            bad.append(f"seed {seed}: {problem}: {gen.text!r}")
    assert not bad, "\n".join(bad)


def test_under_none_the_tiny_model_never_calls(
    tiny: Any, engine_case: tuple[FormatSpec, TemplateSource]
) -> None:
    spec, template = engine_case
    for seed in range(2):
        gen = generate(tiny, spec, template, "none", seed, max_new_tokens=60)
        assert gen.text.startswith("all\n") and ">>>" not in gen.text
        assert parsed_calls(gen, spec) == []
