"""Continuation: the parser starts in the stage the prompt left (the DeepSeek RFC's "stage detection from the
prompt", issue 10 item 5).

A prompt may already have opened a reasoning block (a generation prompt ending in ``<think>\\n``; a
``continue_final_message`` render of partial reasoning), opened the answer wrapper (``<answer>\\n``, a partial
answer being continued), or closed reasoning (a partial plain answer after ``</think>``).  The stage is read
off the *rendered* prompt (``FormatSpec.output_start_stage``) and handed to the parser as
``ParseOptions.start_stage``; parsed one-shot or streamed one character at a time, the continuation gives the
message the model added.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT_TEMPLATES, shared_path
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.spec import FormatSpec
from workbench.template.render import render
from workbench.template.source import TemplateSource, load_template

USER = {"role": "user", "content": "What is six times seven?"}
OPENED_ANSWER = PROJECT_TEMPLATES / "new-formats" / "opened-answer.jinja"


@functools.cache
def analysed(path: str) -> tuple[TemplateSource, FormatSpec]:
    from workbench.formats import analyze

    source = load_template(path)
    return source, analyze(source).spec


def prompt_of(source: TemplateSource, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    return render(source.text, messages, **source.render_kwargs(), **kwargs)


def read(spec: FormatSpec, prompt: str, output: str, *, enable_thinking: bool = True) -> dict[str, Any]:
    """Parse ``output`` in the stage ``prompt`` left, one-shot; streamed char by char must agree."""
    stage = spec.output_start_stage(generation_prompt=prompt, enable_thinking=enable_thinking)
    options = ParseOptions(enable_thinking=enable_thinking, start_stage=stage)
    one = parse(spec, output, None, options)
    parser = StreamParser(spec, None, options=options)
    for ch in output:
        parser.feed(ch)
    assert parser.finish().message == one.message
    contract = one.to_contract()
    return {
        "stage": stage,
        "reasoning": contract["reasoning_content"].strip(),
        "content": contract["content"].strip(),
    }


# ------------------------------------------------------------------------------ the project template
def opened_answer() -> tuple[TemplateSource, FormatSpec]:
    return analysed(str(OPENED_ANSWER))


@pytest.mark.parametrize("thinking", [True, False], ids=["thinking", "not-thinking"])
def test_generation_prompt_opens_the_block_the_output_starts_in(thinking: bool) -> None:
    source, spec = opened_answer()
    prompt = prompt_of(source, [USER], add_generation_prompt=True, enable_thinking=thinking)
    if thinking:
        got = read(spec, prompt, "Six sevens.\n</think>\n<answer>\n42\n</answer>")
        assert got == {"stage": "reasoning", "reasoning": "Six sevens.", "content": "42"}
    else:
        got = read(spec, prompt, "42, and <think> is just a word here\n</answer>", enable_thinking=False)
        assert got == {"stage": "answer", "reasoning": "", "content": "42, and <think> is just a word here"}


@pytest.mark.parametrize("thinking", [True, False], ids=["thinking", "not-thinking"])
def test_continuing_a_partial_answer_stays_in_the_answer(thinking: bool) -> None:
    """Thinking on, the spec alone says "the output starts in reasoning" (the template's generation prompt
    opens ``<think>``); the continued prompt is inside ``<answer>``, and that is what counts."""
    source, spec = opened_answer()
    partial = {"role": "assistant", "content": "The answer is"}
    prompt = prompt_of(source, [USER, partial], continue_final_message=True, enable_thinking=thinking)
    assert prompt.endswith("<answer>\nThe answer is")
    got = read(spec, prompt, " 42.\n</answer>", enable_thinking=thinking)
    assert got == {"stage": "answer", "reasoning": "", "content": "42."}


def test_without_the_stage_a_continued_answer_is_misread_as_reasoning() -> None:
    """What the stage fixes: the spec's default (forced_open) reads the continuation as reasoning."""
    _, spec = opened_answer()
    # ("</answer>" closes the answer, not the turn: read as reasoning, it stays in the reasoning text.)
    assert parse(spec, " 42.\n</answer>").message.reasoning_content.strip().startswith("42.")


@pytest.mark.parametrize("thinking", [True, False], ids=["thinking", "not-thinking"])
def test_continuing_partial_reasoning_stays_in_reasoning(thinking: bool) -> None:
    source, spec = opened_answer()
    partial = {"role": "assistant", "reasoning_content": "Six times seven", "content": ""}
    prompt = prompt_of(
        source, [USER, partial], continue_final_message="reasoning_content", enable_thinking=thinking
    )
    assert prompt.endswith("<think>\nSix times seven")
    got = read(spec, prompt, " is 42.\n</think>\n<answer>\n42\n</answer>", enable_thinking=thinking)
    assert got == {"stage": "reasoning", "reasoning": "is 42.", "content": "42"}


def test_continuing_an_answer_after_its_reasoning() -> None:
    source, spec = opened_answer()
    partial = {"role": "assistant", "reasoning_content": "Easy.", "content": "It is"}
    prompt = prompt_of(source, [USER, partial], continue_final_message=True)
    got = read(spec, prompt, " 42\n</answer>")
    assert got == {"stage": "answer", "reasoning": "", "content": "42"}


# ------------------------------------------------------------------------------ Qwen3 (../shared)
def qwen3() -> tuple[TemplateSource, FormatSpec]:
    return analysed(str(shared_path("templates", "Qwen-Qwen3-0.6B.jinja")))


@pytest.mark.parametrize("thinking", [True, False], ids=["thinking", "not-thinking"])
def test_qwen3_continue_final_message_on_partial_reasoning(thinking: bool) -> None:
    """Qwen3's reasoning is ``forced_closed``: its generation prompt never opens ``<think>``, so without the
    stage a continuation of partial reasoning would be read as content with a stray ``</think>``."""
    source, spec = qwen3()
    partial = {"role": "assistant", "reasoning_content": "Six times seven", "content": ""}
    prompt = prompt_of(
        source, [USER, partial], continue_final_message="reasoning_content", enable_thinking=thinking
    )
    assert prompt.rstrip().endswith("Six times seven")
    output = " is 42.\n</think>\n\nIt is 42."
    got = read(spec, prompt, output, enable_thinking=thinking)
    assert got == {"stage": "reasoning", "reasoning": "is 42.", "content": "It is 42."}
    assert "</think>" in parse(spec, output).message.content  # the spec's default starts outside


def test_qwen3_continue_final_message_on_a_partial_answer() -> None:
    """After the (empty) reasoning block the prompt closed, a reasoning tag the answer mentions is text."""
    source, spec = qwen3()
    partial = {"role": "assistant", "content": "The tag"}
    prompt = prompt_of(source, [USER, partial], continue_final_message=True)
    got = read(spec, prompt, "<think> opens reasoning.")
    assert got == {"stage": "content", "reasoning": "", "content": "<think> opens reasoning."}


# ------------------------------------------------------------------------------ the rule itself
def test_stage_rule_reads_only_the_current_turn() -> None:
    """Closed blocks of earlier turns do not count; the content wrapper and reasoning are read in order."""
    _, spec = opened_answer()
    history = "<|im_start|>assistant\n<think>\nold\n</think>\n<answer>\nold\n</answer><|im_end|>\n"
    assert (
        spec.output_start_stage(generation_prompt=history + "<|im_start|>assistant\n<think>\n") == "reasoning"
    )
    assert spec.output_start_stage(generation_prompt=history + "<|im_start|>assistant\n") == "start"
    assert (
        spec.output_start_stage(generation_prompt="<|im_start|>assistant\n<think>\nx\n</think>\n")
        == "content"
    )
    assert spec.output_start_stage() == "reasoning"  # no prompt: the spec's facts (forced_open)


def test_start_stage_must_be_a_known_stage() -> None:
    with pytest.raises(ValueError, match="start_stage"):
        ParseOptions(start_stage="middle")


def test_parse_cli_reads_the_output_from_where_the_prompt_leaves_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from workbench.cli import app

    source, _ = opened_answer()
    partial = {"role": "assistant", "content": "The answer is"}
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(prompt_of(source, [USER, partial], continue_final_message=True), encoding="utf-8")
    out = tmp_path / "out.txt"
    out.write_text(" 42.\n</answer>", encoding="utf-8")
    args = ["parse", "--template", str(OPENED_ANSWER), str(out), "--json"]
    default = json.loads(CliRunner().invoke(app, args).stdout)
    assert default["reasoning_content"].strip().startswith("42.")  # the spec's default: inside <think>
    continued = json.loads(CliRunner().invoke(app, [*args, "--prompt", str(prompt)]).stdout)
    assert (continued["reasoning_content"], continued["content"].strip()) == ("", "42.")
