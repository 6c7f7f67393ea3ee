"""The generator with a tiny random model: gating, controls, rewind, forcing, and the per-step record.

A random model writes noise, so whatever these tests see comes from the grammar and the gate, never from a
model that happens to know the format.  Markers are written with ``force`` where a test needs the model to
cross a phase boundary.
"""

from __future__ import annotations

import pytest

from workbench.generation.generate import ForceRefused, GenerationError, Generator
from workbench.generation.loaded import LoadedModel
from workbench.generation.sampling import SamplingConfig
from workbench.generation.step import Step
from workbench.generation.tiny import load_tiny
from workbench.runtime.chat import Message, Tool
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template
from workbench.testing.reference_specs import DEEPSEEK_V31_LIKE, QWEN3_LIKE

WEATHER = Tool(
    "get_weather",
    "Get the weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 12},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
MESSAGES = [Message("user", "What is the weather in Paris?")]


@pytest.fixture(scope="module")
def tiny() -> LoadedModel:
    return load_tiny()


def make(tiny: LoadedModel, spec: FormatSpec = QWEN3_LIKE, **kw: object) -> Generator:
    options: dict[str, object] = {
        "tools": [WEATHER],
        "tool_choice": "required",
        "reasoning": False,
        "parallel": False,
        "max_new_tokens": 160,
    }
    options.update(kw)
    return Generator(tiny, spec, messages=MESSAGES, template=load_template("chatml-think-tools"), **options)  # type: ignore[arg-type]


def token_id(tiny: LoadedModel, text: str) -> int:
    found = tiny.single_token_id(text)
    assert found is not None, f"{text!r} should be one token of the tiny model's tokenizer"
    return found


def test_auto_with_reasoning_masks_nothing_while_thinking_and_engages_at_the_trigger(
    tiny: LoadedModel,
) -> None:
    gen = make(tiny, tool_choice="auto", reasoning=True, sampling=SamplingConfig(temperature=1.0, seed=3))
    first = gen.force(token_id(tiny, "<think>"))
    assert first.phase == "lead" and first.allowed_count == first.vocab_size and not first.constrained
    thinking = gen.run(6)
    assert [s.phase for s in thinking] == ["reasoning"] * 6
    assert all(s.allowed_count == s.vocab_size and s.region == "free" and not s.constrained for s in thinking)
    gen.force(token_id(tiny, "</think>"))
    free_text = gen.run(3)
    assert all(s.phase == "text" and s.allowed_count == s.vocab_size for s in free_text)
    gen.force(token_id(tiny, "<tool_call>"))
    after = gen.run_to_end()
    assert after and after[0].phase == "tool"
    assert all(s.constrained and s.region == "constrained" and s.allowed_count < s.vocab_size for s in after)
    assert gen.finish_reason in ("stop token", "grammar complete")
    calls = gen.message().message.tool_calls
    assert [c.name for c in calls] == ["get_weather"]


def test_required_with_reasoning_lets_the_model_open_it_or_answer(tiny: LoadedModel) -> None:
    gen = make(tiny, reasoning=True, sampling=SamplingConfig(temperature=1.0, seed=1))
    assert gen.matcher.phase == "lead"
    first = gen.force(token_id(tiny, "<think>"))  # allowed by the lead grammar, which masks everything else
    assert first.constrained and first.allowed_count < first.vocab_size
    thinking = gen.run(4)
    assert all(s.phase == "reasoning" and s.allowed_count == s.vocab_size for s in thinking)
    gen.force(token_id(tiny, "</think>"))
    assert gen.matcher.phase == "answer"
    rest = gen.run_to_end()
    assert all(s.constrained for s in rest)
    assert [c.name for c in gen.message().message.tool_calls] == ["get_weather"]


def test_a_prompt_that_opened_reasoning_starts_inside_it(tiny: LoadedModel) -> None:
    # The prompt ends with "<think>" (DeepSeek V3.1 with thinking on): the first tokens are reasoning.
    gen = Generator(
        tiny,
        DEEPSEEK_V31_LIKE,
        messages=MESSAGES,
        tools=[WEATHER],
        tool_choice="required",
        template=load_template("deepseek-v31-like"),
        reasoning=True,
        max_new_tokens=40,
    )
    assert gen.plan.reasoning is not None and gen.plan.reasoning.starts_inside
    steps = gen.run(5)
    assert all(s.phase == "reasoning" and s.allowed_count == s.vocab_size for s in steps)


def test_marker_that_is_an_added_token_is_allowed_by_the_mask(tiny: LoadedModel) -> None:
    gen = make(tiny)
    step = gen.force(token_id(tiny, "<tool_call>"))  # an added token: one id, not the BPE pieces of its text
    assert step.constrained and step.token_text == "<tool_call>"
    # From there the grammar alone decides the next characters (one tool, no parallel calls):
    assert gen.step().jump_forward == '\n{"name": "get_weather", "arguments": {"city": "'


def test_xgrammar_sees_added_tokens_as_plain_text(tiny: LoadedModel) -> None:
    info = tiny.tokenizer_info()
    assert list(info.special_token_ids) == []  # nothing is excluded from masks as "special"
    for marker in ("<tool_call>", "</tool_call>", "<think>", "</think>"):
        assert tiny.token_bytes()[token_id(tiny, marker)] == marker.encode()


def test_forcing_a_masked_token_is_refused_with_the_reason_and_changes_nothing(tiny: LoadedModel) -> None:
    gen = make(tiny)
    with pytest.raises(
        ForceRefused, match=r"masked by the answer grammar at step 0 \(\d+ of \d+ tokens allowed"
    ):
        gen.force(token_id(tiny, "<think>"))  # reasoning is off: the answer must start with the call
    assert gen.steps == [] and gen.matcher.accepted_count == 0
    with pytest.raises(ForceRefused, match="outside the vocabulary"):
        gen.force(gen.vocab_size + 5)
    assert gen.step().index == 0  # generation carries on normally


def test_rewind_then_greedy_rerun_reproduces_the_same_tokens(tiny: LoadedModel) -> None:
    gen = make(tiny, max_new_tokens=60)  # greedy, under the grammar
    gen.run_to_end()
    original, text = list(gen.token_ids), gen.text
    for k in (1, 7, len(original)):
        kept = gen.rewind(k)
        assert kept == len(original) - k and gen.token_ids == original[:kept]
        gen.run_to_end()
        assert gen.token_ids == original and gen.text == text


def test_rewind_restores_grammar_phase_and_parser_state(tiny: LoadedModel) -> None:
    gen = make(tiny, sampling=SamplingConfig(temperature=1.0, seed=11))
    gen.run_to_end()
    final = gen.message().message
    n = len(gen.steps)
    gen.rewind(n - 3)
    assert len(gen.steps) == 3 and not gen.finished and gen.matcher.phase == "answer"
    gen.run_to_end()  # per-step seeds: the same draws again
    assert len(gen.steps) == n
    assert gen.message().message == final


def test_sampled_runs_are_reproducible_from_the_seed(tiny: LoadedModel) -> None:
    a = make(tiny, sampling=SamplingConfig(temperature=1.0, seed=5))
    b = make(tiny, sampling=SamplingConfig(temperature=1.0, seed=5))
    assert [s.token_id for s in a.run(20)] == [s.token_id for s in b.run(20)]


def test_switching_the_constraint_off_then_on_follows_the_grammar_until_it_is_lost(tiny: LoadedModel) -> None:
    gen = make(tiny)
    gen.set_constrained(False)
    free = gen.force(token_id(tiny, "<think>"))  # reasoning is off: the grammar would never allow this
    assert not free.constrained and free.allowed_count == free.vocab_size
    assert "lost track" in free.note
    gen.set_constrained(True)
    assert not gen.step().constrained  # still lost: nothing sensible to enforce
    gen.rewind(2)
    assert gen.step().constrained  # back before the divergence: the grammar holds again


def test_step_records_candidates_timings_and_a_mask_strip(tiny: LoadedModel) -> None:
    step = make(tiny).step()
    assert len(step.candidates) == 8
    logits = [c.logit for c in step.candidates]
    assert logits == sorted(logits, reverse=True)
    assert all(0.0 <= c.prob <= 1.0 for c in step.candidates)
    assert set(step.timings_ms) == {"forward", "mask", "sample", "record", "parse"}
    assert len(step.mask_strip) == 64 and all(0.0 <= x <= 1.0 for x in step.mask_strip)
    assert step.allowed_count < step.vocab_size
    assert Step.from_dict(step.to_dict()) == Step.from_dict(Step.from_dict(step.to_dict()).to_dict())
    assert Step.from_dict(step.to_dict()).phase == "answer"


def test_finished_generation_refuses_more_steps(tiny: LoadedModel) -> None:
    gen = make(tiny, max_new_tokens=3, tool_choice="auto")
    gen.run_to_end()
    assert gen.finished and gen.finish_reason == "max_new_tokens" and len(gen.steps) == 3
    with pytest.raises(GenerationError, match="has finished"):
        gen.step()


def test_pause_stops_a_run_after_the_current_step(tiny: LoadedModel) -> None:
    gen = make(tiny, tool_choice="auto", max_new_tokens=50)
    gen.pause()
    assert gen.run(0) == []
    out = gen.run(4)
    assert len(out) == 4  # run() clears an earlier pause request


def test_fallback_tokenizer_works_without_shared_files() -> None:
    small = load_tiny(prefer_shared=False)
    assert small.vocab_size < 2000
    gen = Generator(
        small,
        QWEN3_LIKE,
        messages=MESSAGES,
        tools=[WEATHER],
        tool_choice="required",
        template=load_template("chatml-think-tools"),
        reasoning=False,
        parallel=False,
        sampling=SamplingConfig(temperature=1.0, seed=2),
        max_new_tokens=200,
    )
    gen.run_to_end()
    calls = gen.message().message.tool_calls
    assert [c.name for c in calls] == ["get_weather"]


def test_a_reasoning_marker_listed_as_end_marker_does_not_end_the_turn(tiny: LoadedModel) -> None:
    # Harmony lists <|end|> (the end of the analysis message) among its end markers; here </think> plays it.
    spec = QWEN3_LIKE.with_edit(end_markers=("<|im_end|>", "</think>"))
    gen = make(tiny, spec, tool_choice="auto", reasoning=True, max_new_tokens=20)
    assert token_id(tiny, "</think>") not in gen.stop_ids and token_id(tiny, "<|im_end|>") in gen.stop_ids
    gen.force(token_id(tiny, "<think>"))
    step = gen.force(token_id(tiny, "</think>"))
    assert not step.finished and gen.matcher.phase == "text"
