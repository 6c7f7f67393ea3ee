"""A fixed clock while analysing and validating (issue 18, item 5).

A template that prints the time (``strftime_now('%H:%M:%S')``, the date in its system block) used to give
probe renders that differed where nothing was varied, and another spec on every run.  Analysis, self-check
and validation now render at one instant (``template.render.fixed_clock``); ``workbench render`` keeps
the real clock, as transformers does.
"""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from workbench.formats import analyze
from workbench.template.render import ANALYSIS_INSTANT, fixed_clock, render
from workbench.template.source import TemplateSource
from workbench.validate import validate

CLOCK_TEMPLATE = """\
{%- if messages[0].role == 'system' -%}
    {%- set sys = messages[0].content -%}{%- set rest = messages[1:] -%}
{%- else -%}
    {%- set sys = '' -%}{%- set rest = messages -%}
{%- endif -%}
{{- '<|im_start|>system\\nCurrent time: ' ~ strftime_now('%H:%M:%S') -}}
{{- '\\nToday is ' ~ strftime_now('%d %B %Y') -}}
{%- if sys -%}{{- '\\n' ~ sys -}}{%- endif -%}
{%- if tools -%}
    {{- '\\n<tools>' -}}{%- for t in tools -%}{{- '\\n' ~ (t | tojson) -}}{%- endfor -%}{{- '\\n</tools>' -}}
{%- endif -%}
{{- '<|im_end|>\\n' -}}
{%- for m in rest -%}
    {{- '<|im_start|>' ~ m.role ~ '\\n' -}}
    {%- if m.role == 'assistant' -%}
        {%- if m.reasoning_content is defined and m.reasoning_content -%}
            {{- '<think>\\n' ~ m.reasoning_content ~ '\\n</think>\\n\\n' -}}
        {%- endif -%}
        {%- if m.content is string -%}{{- m.content -}}{%- endif -%}
        {%- for c in (m.tool_calls or []) -%}
            {{- '<tool_call>\\n{"name": "' ~ c.function.name ~ '", "arguments": ' -}}
            {{- (c.function.arguments | tojson) ~ '}\\n</tool_call>' -}}
        {%- endfor -%}
    {%- else -%}{{- m.content -}}{%- endif -%}
    {{- '<|im_end|>\\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}
"""


def _source() -> TemplateSource:
    return TemplateSource(text=CLOCK_TEMPLATE, name="clock", origin="<test>")


def test_renders_inside_the_fixed_clock_see_one_instant_and_outside_the_real_one() -> None:
    with fixed_clock():
        first = render(CLOCK_TEMPLATE, [{"role": "user", "content": "hi"}])
        time.sleep(1.05)
        second = render(CLOCK_TEMPLATE, [{"role": "user", "content": "hi"}])
    assert first == second
    assert ANALYSIS_INSTANT.strftime("%H:%M:%S") in first
    outside = render(CLOCK_TEMPLATE, [{"role": "user", "content": "hi"}])
    assert datetime.now().strftime("%d %B %Y") in outside


def test_a_nested_fixed_clock_keeps_the_outer_instant_unless_given_one() -> None:
    chosen = datetime(2031, 7, 4, 23, 59, 58)
    with fixed_clock(chosen):
        with fixed_clock() as inner:
            assert inner == chosen
            assert "23:59:58" in render(CLOCK_TEMPLATE, [{"role": "user", "content": "hi"}])
        with fixed_clock(ANALYSIS_INSTANT) as own:
            assert own == ANALYSIS_INSTANT


def test_the_analysis_of_a_template_printing_the_time_keeps_clock_digits_out_of_the_spec() -> None:
    spec = analyze(_source()).spec
    assert spec.reasoning.start.strip() == "<think>" and spec.tools.call_start.strip() == "<tool_call>"
    for marker in spec.all_markers():
        assert ANALYSIS_INSTANT.strftime("%H:%M") not in marker
    assert validate(_source(), spec).validated


@pytest.mark.slow
def test_analyze_json_is_byte_identical_across_two_processes(tmp_path: Path) -> None:
    template = tmp_path / "clock.jinja"
    template.write_text(CLOCK_TEMPLATE, encoding="utf-8")
    command = [sys.executable, "-m", "workbench", "analyze", str(template), "--json"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    time.sleep(1.1)  # the second run starts at another second of the real clock
    second = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    assert first.stdout, first.stderr
    assert first.stdout == second.stdout
    assert ANALYSIS_INSTANT.strftime("%H:%M:%S") in first.stdout  # the probes' renders show the fixed instant
