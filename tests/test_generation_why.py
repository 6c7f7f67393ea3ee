"""``workbench.generation.why`` and the generator's stepping record, with the tiny random model.

The questions the inspector asks ("where is the grammar", "why is this token masked", "would this string
be accepted") must be answered by the live matcher without moving it, and the generator's record must let
the inspector show the chosen token and the allowed tokens' renormalised distribution.
"""

from __future__ import annotations

import json

import pytest

from workbench.generation import why
from workbench.generation.generate import GenerationError, Generator
from workbench.generation.loaded import LoadedModel
from workbench.generation.sampling import SamplingConfig
from workbench.generation.step import Step
from workbench.generation.tiny import load_tiny
from workbench.runtime.chat import Message, Tool
from workbench.template.source import load_template
from workbench.testing.reference_specs import QWEN3_LIKE

WEATHER = Tool(
    "get_weather",
    "Get the weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture(scope="module")
def tiny() -> LoadedModel:
    return load_tiny()


def make(tiny: LoadedModel, **kw: object) -> Generator:
    options: dict[str, object] = {
        "tools": [WEATHER],
        "tool_choice": "required",
        "reasoning": False,
        "parallel": False,
        "max_new_tokens": 120,
    }
    options.update(kw)
    return Generator(
        tiny,
        QWEN3_LIKE,
        messages=[Message("user", "Weather in Paris?")],
        template=load_template("chatml-think-tools"),
        **options,  # type: ignore[arg-type]
    )


def tid(tiny: LoadedModel, text: str) -> int:
    found = tiny.single_token_id(text)
    assert found is not None
    return found


def test_position_names_the_grammar_its_ebnf_and_what_may_come_next(tiny: LoadedModel) -> None:
    gen = make(tiny)
    where = why.position(gen)
    assert (where.phase, where.grammar, where.masked) == ("answer", "answer", True)
    assert "tool_call" in where.ebnf  # xgrammar's EBNF of the answer grammar
    assert 0 < where.allowed_count < 50
    assert "<" in dict(where.first_chars)  # the call's marker may start the answer
    gen.force(tid(tiny, "<tool_call>"))
    where = why.position(gen)
    assert where.inside == "<tool_call>"
    assert where.jump_forward.startswith('\n{"name": "get_weather"')
    assert "jump-forward" in where.expects()


def test_a_trial_string_is_accepted_or_rejected_at_the_first_bad_character(tiny: LoadedModel) -> None:
    gen = make(tiny)
    ok = why.try_string(gen, CALL)
    assert ok.accepted and ok.complete
    bad_text = '<tool_call>\n{"name": "get_wx'
    bad = why.try_string(gen, bad_text)
    assert not bad.accepted
    assert bad.accepted_chars == bad_text.index("x")
    assert f"rejected at char {bad_text.index('x')}" in bad.message


def test_asking_never_moves_the_matcher(tiny: LoadedModel) -> None:
    gen = make(tiny)
    before = why.position(gen)
    why.try_string(gen, CALL)
    why.why_masked(gen, "hello")
    assert gen.matcher.accepted_count == 0
    assert why.position(gen) == before
    gen.force(tid(tiny, "<tool_call>"))  # the real matcher still starts from the beginning


def test_why_masked_says_what_the_grammar_takes_of_the_text_and_what_it_expects(tiny: LoadedModel) -> None:
    gen = make(tiny)
    answer = why.why_masked(gen, "<think>")  # reasoning is off: the answer must be the call
    assert not answer.allowed
    assert "takes 2 of 7 characters" in answer.message  # "<t" is how "<tool_call>" starts too
    assert "rejects 'h'" in answer.message and "It expects" in answer.message
    assert why.why_masked(gen, "<tool_call>").allowed
    assert why.why_masked(gen, str(tid(tiny, "<tool_call>"))).allowed  # an id works as well as text
    with pytest.raises(why.WhyError):
        why.why_masked(gen, str(gen.vocab_size + 5))


def test_in_free_text_nothing_is_masked_and_a_trial_string_engages_at_the_trigger(tiny: LoadedModel) -> None:
    gen = make(tiny, tool_choice="auto")
    where = why.position(gen)
    assert not where.grammar and where.free_until == "<tool_call>"
    assert why.why_masked(gen, "hello").allowed
    assert why.try_string(gen, "Sure, let me check.").accepted
    text = "Sure <tool_call>oops"
    trial = why.try_string(gen, text)
    assert trial.accepted_chars == text.index("oops") and "section grammar" in trial.message


def test_jump_forward_forces_the_string_or_refuses_when_nothing_is_forced(tiny: LoadedModel) -> None:
    gen = make(tiny)
    with pytest.raises(GenerationError, match="no jump-forward"):
        gen.apply_jump_forward()  # the answer may open with a newline or the marker: nothing forced
    gen.force(tid(tiny, "<tool_call>"))
    jump = why.position(gen).jump_forward
    steps = gen.apply_jump_forward()
    assert steps and all(s.forced for s in steps)
    assert gen.text == "<tool_call>" + jump


def test_every_step_records_the_chosen_token_and_the_renormalised_allowed_tokens(tiny: LoadedModel) -> None:
    gen = make(tiny, sampling=SamplingConfig(temperature=1.0, seed=4))
    for step in gen.run(6):
        assert step.chosen is not None and step.chosen.token_id == step.token_id and step.chosen.allowed
        probs = [c.prob for c in step.allowed_top]
        assert probs == sorted(probs, reverse=True)
        assert all(c.allowed for c in step.allowed_top)
        if step.constrained and step.allowed_count <= len(step.allowed_top):
            assert sum(probs) == pytest.approx(1.0, abs=1e-4)  # renormalised over the allowed tokens only
        if step.constrained:
            raw = {c.token_id: c.prob for c in step.candidates}
            for c in step.allowed_top:
                if c.token_id in raw:
                    assert c.prob >= raw[c.token_id]  # renormalising over fewer tokens never lowers one
    again = Step.from_dict(json.loads(json.dumps(step.to_dict())))
    assert again.chosen == step.chosen and again.allowed_top == step.allowed_top


def test_the_message_mid_run_never_shows_a_partial_call_as_content(tiny: LoadedModel) -> None:
    gen = make(tiny, tool_choice="auto")
    gen.force(tid(tiny, "<tool_call>"))
    gen.force(tiny.tokenizer.encode("\n", add_special_tokens=False)[0])
    result = gen.message()
    assert "<tool_call>" not in (result.message.content or "")
    assert gen.pending.startswith("<tool_call>")  # held back: the view draws it as pending


def test_a_run_cut_off_inside_a_call_gives_a_truncation_diagnostic(tiny: LoadedModel) -> None:
    gen = make(tiny, max_new_tokens=4)
    gen.force(tid(tiny, "<tool_call>"))
    gen.run_to_end()
    assert gen.finish_reason == "max_new_tokens"
    out = gen.message().to_contract()
    assert [d["code"] for d in out["diagnostics"]] == ["E-TRUNCATED"]
    assert out["tool_calls"] == [] and "<tool_call>" not in out["content"]


def test_prefill_reads_the_prompt_without_choosing_a_token(tiny: LoadedModel) -> None:
    gen = make(tiny)
    gen.prefill()
    assert gen.steps == [] and gen.text == ""
    assert gen.step().index == 0


def test_a_refused_jump_forward_leaves_nothing_half_written(
    tiny: LoadedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.generation.generate import ForceRefused

    gen = make(tiny)
    gen.force(tid(tiny, "<tool_call>"))
    newline = tiny.tokenizer.encode("\n", add_special_tokens=False)
    hello = tiny.tokenizer.encode("Hello", add_special_tokens=False)
    # A tokenization the grammar disagrees with half-way: the newline is accepted, "Hello" is not.
    monkeypatch.setattr(tiny.tokenizer, "encode", lambda text, **kw: newline + hello)
    with pytest.raises(ForceRefused):
        gen.apply_jump_forward()
    assert len(gen.steps) == 1 and gen.text == "<tool_call>"
    assert why.position(gen).jump_forward.startswith("\n")  # the matcher is back where it was
