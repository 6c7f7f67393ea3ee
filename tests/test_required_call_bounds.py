"""A required call's tag bounds the whitespace around the call (issue 19, item 3).

Under ``tool_choice="required"`` (or a named tool) nothing but the call may come, so a grammar that allowed
any run of blanks before it, after it or inside its JSON let a model (a random one at once) write whitespace
until ``max_tokens`` and never call.  The assembler allows at most four blanks before the call (or before a
reasoning block the output opens) and after it, and at most two in a row inside the call's JSON; under
``auto`` the JSON keeps any whitespace, so templates that indent their JSON are still read.

For every spec in ``specs/`` and every reference spec with tool calls, the call the format's own sample
writer produces is the reference: with up to four blanks in front it is accepted, with many more it is not
(a format's own lead, the blank line after a reasoning block, comes on top of the four).
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
    160 tokens for every one of 5 seeds.  With any whitespace allowed before the call and inside its JSON
    (before the bound) it ended for none: the draw found whitespace at every step."""
    import numpy as np
    import torch

    from tests.conftest import PROJECT_TEMPLATES, shared_path
    from workbench.export.structural_tag import load_grammar_tokenizer
    from workbench.formats import analyze
    from workbench.template.source import load_template

    tok = load_grammar_tokenizer(shared_path("tokenizers", "qwen3"))
    spec = analyze(load_template(PROJECT_TEMPLATES / f"{template}.jinja")).spec
    tag = request_tag(spec, E2E_TOOLS, "required", reasoning=True)
    compiled = tok.compiler.compile_structural_tag(json.dumps(tag))
    lengths = []
    for seed in range(5):
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
