"""A template whose thinking switch is not ``enable_thinking`` (issue 20): the prompt facts, ``--kw``,
parsing, generation and validation all act on the switch the analysis found, and a ``--kw`` key the template
never reads is a warning naming the keys it does read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.test_switches import THINKING_OFF_BY_DEFAULT
from workbench.analysis.switches import (
    ENABLE_THINKING,
    ThinkingSwitch,
    kwargs_warning,
    thinking_switch,
    with_thinking_switch,
)
from workbench.cli import app
from workbench.formats import analyze
from workbench.template.render import render
from workbench.template.source import TemplateSource, load_template
from workbench.validate import PASS, validate

runner = CliRunner()

#: Qwen3's shape with its own variable: ``thinking`` (default on); ``thinking=false`` closes an empty block in
#: the generation prompt.  ``enable_thinking`` is never read.
THINKING = """
{%- for message in messages -%}
    {%- if message.role == 'assistant' -%}
        {{- '<|assistant|>' -}}
        {%- if message.reasoning_content -%}
            {{- '<think>' + message.reasoning_content + '</think>' -}}
        {%- endif -%}
        {{- message.content + '<|end|>' -}}
    {%- else -%}
        {{- '<|' + message.role + '|>' + message.content + '<|end|>' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|assistant|>' -}}
    {%- if thinking is defined and not thinking -%}{{- '<think></think>' -}}{%- endif -%}
{%- endif -%}
"""
OUTPUT = "<think>Let me see.</think>It is 42."


def source(text: str = THINKING, name: str = "thinking-switch") -> TemplateSource:
    return TemplateSource(text=text, name=name, origin="<test>")


@pytest.fixture(scope="module")
def template_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("switch") / "thinking-switch.jinja"
    path.write_text(THINKING, encoding="utf-8")
    return path


def test_the_template_ignores_enable_thinking() -> None:
    user = [{"role": "user", "content": "hi"}]
    on = render(THINKING, user, add_generation_prompt=True, enable_thinking=True)
    assert render(THINKING, user, add_generation_prompt=True, enable_thinking=False) == on
    assert render(THINKING, user, add_generation_prompt=True, thinking=False) == on + "<think></think>"


def test_the_prompt_facts_come_from_the_thinking_switch() -> None:
    analysis = analyze(source())
    spec = analysis.spec
    assert "thinking" in spec.prompt.switches
    p = spec.prompt
    assert p.supports_thinking_toggle is True
    assert p.thinking_closed_when_disabled is True
    assert p.suffix_when_not_thinking == "<think></think>"
    assert p.thinking_opened is False
    assert spec.reasoning.mode == "forced_closed"  # Qwen3's mode: a closed block when off, the model opens it
    assert thinking_switch(spec) == ThinkingSwitch(
        "thinking", True, False, "<|assistant|>", "<|assistant|><think></think>"
    )
    assert thinking_switch(spec).kwargs(False) == {"thinking": False}
    p1 = next(p for p in analysis.probes if p.id == "P1")
    assert "enable_thinking changes nothing; the thinking switch is 'thinking'" in p1.outcome


def test_a_template_that_reads_enable_thinking_keeps_it_as_its_switch() -> None:
    spec = analyze(load_template("chatml-think-tools")).spec
    assert thinking_switch(spec) == ENABLE_THINKING
    assert with_thinking_switch(spec, False, {}) == {}  # callers pass enable_thinking themselves


def test_reasoning_off_sets_the_templates_own_switch() -> None:
    spec = analyze(source()).spec
    assert with_thinking_switch(spec, False) == {"thinking": False}
    assert with_thinking_switch(spec, True) == {}  # on is the template's default: nothing to pass
    assert with_thinking_switch(spec, False, {"thinking": True}) == {"thinking": True}  # the caller's wins
    # where the default is off, thinking on is passed explicitly
    off_by_default = analyze(source(THINKING_OFF_BY_DEFAULT, "thinking-off")).spec
    assert with_thinking_switch(off_by_default, True) == {"thinking": True}
    assert with_thinking_switch(off_by_default, False) == {}


def test_parse_no_enable_thinking_acts_on_the_switch(template_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text(OUTPUT, encoding="utf-8")
    on = runner.invoke(app, ["parse", "--template", str(template_file), str(out), "--json"])
    assert on.exit_code == 0, on.output
    assert json.loads(on.stdout)["reasoning_content"] == "Let me see."
    off = runner.invoke(
        app, ["parse", "--template", str(template_file), str(out), "--json", "--no-enable-thinking"]
    )
    assert off.exit_code == 0, off.output
    got = json.loads(off.stdout)
    assert (got["reasoning_content"], got["content"]) == ("", OUTPUT)  # reasoning is off: the tags are text
    switched = runner.invoke(
        app, ["parse", "--template", str(template_file), str(out), "--json", "--kw", "thinking=false"]
    )
    assert switched.exit_code == 0, switched.output
    assert json.loads(switched.stdout)["content"] == OUTPUT
    assert "never reads" not in switched.stderr


def test_a_kw_key_the_template_never_reads_is_a_warning_naming_what_it_reads(
    template_file: Path, tmp_path: Path
) -> None:
    assert kwargs_warning(source(), ["enable_thinking"]) == (
        "the template never reads 'enable_thinking', so it changes nothing; the template reads: thinking"
    )
    assert kwargs_warning(source(), ["thinking"]) == ""
    out = tmp_path / "out.txt"
    out.write_text(OUTPUT, encoding="utf-8")
    parsed = runner.invoke(
        app, ["parse", "--template", str(template_file), str(out), "--kw", "enable_thinking=false"]
    )
    assert parsed.exit_code == 0, parsed.output
    assert "warning: the template never reads 'enable_thinking'" in parsed.stderr
    assert "the template reads: thinking" in parsed.stderr
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    rendered = runner.invoke(
        app, ["render", str(template_file), "--messages", str(messages), "--kw", "enable_thinking=false"]
    )
    assert rendered.exit_code == 0
    assert "the template reads: thinking" in rendered.stderr
    validated = runner.invoke(app, ["validate", str(template_file), "--kw", "enable_thinking=false"])
    assert "the template reads: thinking" in validated.stderr


def test_the_generator_renders_the_prompt_with_the_switch_off() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("xgrammar")
    from workbench.generation.generate import Generator
    from workbench.generation.tiny import load_tiny
    from workbench.runtime.chat import Message

    src = source()
    spec = analyze(src).spec
    loaded = load_tiny()
    messages = [Message(role="user", content="Hi")]
    on = Generator(loaded, spec, messages=messages, template=src, max_new_tokens=1)
    assert on.prompt.endswith("<|assistant|>") and on.reasoning
    off = Generator(loaded, spec, messages=messages, template=src, max_new_tokens=1, reasoning=False)
    assert off.prompt.endswith("<|assistant|><think></think>")
    assert off.template_kwargs == {"thinking": False}
    assert not off.reasoning


def test_validation_renders_the_cases_with_the_switch_on() -> None:
    src = source(THINKING_OFF_BY_DEFAULT, "thinking-off")
    report = validate(src)
    assert next(c for c in report.cases if c.id == "reasoning_content").status == PASS
    assert "rendered with the template switches thinking=True" in report.notes
    assert report.validated, report.summary()
