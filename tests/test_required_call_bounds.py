"""A required call's tag bounds the whitespace around the call (issue 19, item 3).

Under ``tool_choice="required"`` (or a named tool) nothing but the call may come, so a grammar that allowed
any run of blanks before it, after it or inside its JSON let a model (a random one at once) write whitespace
until ``max_tokens`` and never call.  The assembler allows at most four blanks before the call (or before a
reasoning block the output opens) and after it, and at most two in a row inside the call's JSON; under
``auto`` the JSON keeps any whitespace, so templates that indent their JSON are still read.

For every spec in ``specs/`` and every reference spec with tool calls, the call the format's own sample
writer produces is the reference: with up to four blanks in front it is accepted, with many more it is not
(a format's own lead, the blank line after a reasoning block, comes on top of the four).

A reasoning block is free text, so a tag may let one come first only when the model may reason on the
request (:meth:`FormatSpec.may_reason`): with thinking off on a template that controls reasoning, the
vLLM plug-in's tag had an optional block before a required call anyway, and a random model opened it and
wrote reasoning until ``max_tokens`` in 2 of 5 seeds in ``vllm serve`` (14 of 40 in the simulation below).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import xgrammar as xgr
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.runtime.chat import Tool
from workbench.runtime.formats.base import SampleCall
from workbench.runtime.grammar.elements import FORCED_JSON_WHITESPACE
from workbench.runtime.parsing.samples import write_calls
from workbench.runtime.serving.tags import request_tag
from workbench.runtime.spec import FormatSpec
from workbench.spec_io import load_spec
from workbench.testing import reference_specs

REPO = Path(__file__).resolve().parents[1]
SPECS: dict[str, FormatSpec] = {
    **{p.stem: load_spec(p) for p in sorted((REPO / "specs").glob("*.json"))},
    **{n: v for n, v in vars(reference_specs).items() if isinstance(v, FormatSpec)},
}
WITH_CALLS = sorted(name for name, spec in SPECS.items() if spec.tools.format != "none")
CITY = Tool(
    "get_weather",
    "Get the weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CALL = SampleCall("get_weather", {"city": "Paris"})


def accepts(tag: dict[str, Any], text: str) -> bool:
    compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(json.dumps(tag))
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return bool(matcher.accept_string(text)) and matcher.is_completed()


def required(spec: FormatSpec, choice: str = "required") -> dict[str, Any]:
    return request_tag(spec, [CITY.to_openai()], choice, reasoning=False)


def the_call(spec: FormatSpec) -> str:
    """The format's own spelling of one call (no reasoning, no content), without what the generation
    prompt already wrote (``output_prefix``: the tag starts after it)."""
    call = write_calls(spec, [CALL], tools=[CITY])
    prefix = spec.prompt.output_prefix
    return call[len(prefix) :] if prefix and call.startswith(prefix) else call


def _read_under_auto(name: str) -> bool:
    spec = SPECS[name]
    auto = request_tag(spec, [CITY.to_openai()], "auto", reasoning=False)
    return accepts(auto, the_call(spec).strip(" \t\n"))


#: The specs whose sample call the ``auto`` tag reads as it is (the others write more than this one call:
#: ids, a closing marker the sample leaves to the end of the turn).
READ = [name for name in WITH_CALLS if _read_under_auto(name)]


def test_most_specs_take_part() -> None:
    assert len(READ) >= len(WITH_CALLS) - 2, sorted(set(WITH_CALLS) - set(READ))


@pytest.mark.parametrize("name", READ)
@settings(max_examples=15, deadline=None)
@given(blanks=st.text(alphabet=" \t\n", max_size=16))
def test_a_required_call_takes_a_few_blanks_before_it_not_many(name: str, blanks: str) -> None:
    spec = SPECS[name]
    tag, call = required(spec), the_call(spec).strip(" \t\n")
    assert accepts(tag, call), f"{name}: the plain call {call!r} is not accepted"
    if len(blanks) <= 4:
        assert accepts(tag, blanks + call), repr(blanks)
    if len(blanks) > 8:
        assert not accepts(tag, blanks + call), repr(blanks)


@pytest.mark.parametrize("name", READ)
def test_a_required_call_takes_at_most_four_blanks_after_it(name: str) -> None:
    spec = SPECS[name]
    tag, call = required(spec, "get_weather"), the_call(spec).strip(" \t\n")
    assert accepts(tag, call + "\n\n")
    assert not accepts(tag, call + "\n" * 5)


@pytest.mark.parametrize("spaces", range(FORCED_JSON_WHITESPACE + 3))
def test_the_json_of_a_required_call_holds_at_most_two_blanks_in_a_row_and_auto_any(spaces: int) -> None:
    """Qwen3-style calls (JSON in a tag): the run of blanks after the arguments' colon."""
    spec = reference_specs.QWEN3_LIKE
    arguments = '{"city":' + " " * spaces + '"Paris"}'
    call = '<tool_call>\n{"name": "get_weather", "arguments": ' + arguments + "}\n</tool_call>"
    auto = request_tag(spec, [CITY.to_openai()], "auto", reasoning=False)
    assert accepts(auto, call)
    assert accepts(required(spec), call) == (spaces <= FORCED_JSON_WHITESPACE)


def test_glm_blank_line_before_its_reasoning_block_is_still_accepted_and_a_long_run_is_not() -> None:
    spec = load_spec(REPO / "specs" / "glm47.json")
    tag = request_tag(spec, [CITY.to_openai()], "required", reasoning=True)
    call = the_call(spec).lstrip(" \t\n")
    assert accepts(tag, "\n<think>plan</think>" + call)
    assert not accepts(tag, "\n" * 5 + "<think>plan</think>" + call)


#: Specs whose template controls reasoning (thinking off: no reasoning) and whose output opens its own block:
#: the vLLM plug-in's tag covers the whole output for them, a reasoning block first only while thinking is on.
CONTROLLED = [
    name
    for name in READ
    if SPECS[name].reasoning.start.strip()
    and SPECS[name].may_reason(enable_thinking=True)
    and not SPECS[name].may_reason(enable_thinking=False)
    and not SPECS[name].output_starts_in_reasoning()
]


def test_some_specs_have_template_controlled_reasoning() -> None:
    assert len(CONTROLLED) >= 1, "no spec to show the thinking-off rule on"


@pytest.mark.parametrize("name", CONTROLLED)
@settings(max_examples=10, deadline=None)
@given(plan=st.text(alphabet="ab <>/\n", max_size=12))
def test_thinking_off_leaves_no_reasoning_block_before_a_required_call(name: str, plan: str) -> None:
    """The tag the vLLM plug-in builds for a format whose outputs open their own reasoning block: with
    thinking on, a reasoning block may come before the required call; with thinking off (the template's
    prompt closed the block, the parser reads one as content) only the call may come."""
    spec = SPECS[name]
    call = the_call(spec).strip(" \t\n")
    block = spec.reasoning.start.strip() + plan.replace(spec.reasoning.end.strip(), "") + spec.reasoning.end
    on = request_tag(spec, [CITY.to_openai()], "required", reasoning=spec.may_reason(enable_thinking=True))
    off = request_tag(spec, [CITY.to_openai()], "required", reasoning=spec.may_reason(enable_thinking=False))
    assert accepts(on, block + call) and accepts(on, call)
    assert accepts(off, call)
    assert not accepts(off, block + call), f"{name}: thinking off, yet {block + call!r} is accepted"


def test_may_reason_follows_the_template_thinking_switch() -> None:
    """Thinking off silences reasoning the template controls (a switch, forced modes), not a format whose
    template ignores the switch (the model may still reason there)."""
    qwen3 = reference_specs.QWEN3_LIKE  # tag_based, with a thinking switch
    assert qwen3.may_reason(enable_thinking=True) and not qwen3.may_reason(enable_thinking=False)
    glm = SPECS["glm47"]  # tag_based, no switch recorded
    assert glm.may_reason(enable_thinking=True) and glm.may_reason(enable_thinking=False)
    assert not SPECS["step3"].may_reason(enable_thinking=False)  # forced_open, no switch
    no_reasoning = next(s for s in SPECS.values() if s.reasoning.mode == "none")
    assert not no_reasoning.may_reason(enable_thinking=True)


# ------------------------------------------------------------------------------------------ a random model
#: The end-to-end test's tools (tests/engines/test_serve_e2e.py): a string with a maxLength and an enum.
E2E_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "maxLength": 16}}, "required": ["city"],
        "additionalProperties": False}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET", "JST"]}},
        "required": ["zone"], "additionalProperties": False}}},
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("template", ["chatml-think-tools", "xml-tagged-args"])
def test_a_random_model_under_required_ends_its_call_within_160_tokens(template: str) -> None:
    """What ``test_serve_e2e.py::test_a_required_call_completes_without_steering`` asks of a served random
    model, without the server: each next token drawn at random (seeded normal logits over the real Qwen3
    vocabulary) among those the tag allows, the output ends (the grammar accepts the stop token) within
    160 tokens for every one of 20 seeds.  The tag is the one the vLLM plug-in builds for the e2e request
    (thinking off: a reasoning block only where the model may reason).  With any whitespace allowed before
    the call and inside its JSON (before the bound) it ended for none: the draw found whitespace at every
    step; with the reasoning block allowed under thinking off it ended for 26 of 40 seeds (chatml-think-
    tools: the draw opened ``<think>`` and wrote free text to the end)."""
    import numpy as np
    import torch

    from tests.conftest import PROJECT_TEMPLATES, shared_path
    from workbench.export.structural_tag import load_grammar_tokenizer
    from workbench.formats import analyze
    from workbench.template.source import load_template

    tok = load_grammar_tokenizer(shared_path("tokenizers", "qwen3"))
    spec = analyze(load_template(PROJECT_TEMPLATES / f"{template}.jinja")).spec
    tag = request_tag(spec, E2E_TOOLS, "required", reasoning=spec.may_reason(enable_thinking=False))
    compiled = tok.compiler.compile_structural_tag(json.dumps(tag))
    lengths = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        matcher = xgr.GrammarMatcher(compiled)
        mask = xgr.allocate_token_bitmask(1, tok.info.vocab_size)
        n = 0
        while n < 160 and not matcher.is_terminated():
            matcher.fill_next_token_bitmask(mask)
            logits = torch.tensor(rng.standard_normal(tok.info.vocab_size), dtype=torch.float32)[None]
            xgr.apply_token_bitmask_inplace(logits, mask)
            assert matcher.accept_token(int(torch.argmax(logits)))
            n += 1
        lengths.append(n if matcher.is_terminated() else None)
    assert None not in lengths, f"{template}: tokens to the end per seed: {lengths}"
