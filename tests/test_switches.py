"""Template switches other than ``enable_thinking`` (issue 10 item 6): found in the template's AST, probed by
rendering, recorded in ``PromptSpec.switches``, used by the reasoning analysis, shown by ``analyze`` and
accepted by ``parse`` / ``validate`` through ``--kw``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import PROJECT_TEMPLATES
from workbench.cli import app
from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec, SpecError
from workbench.template.source import TemplateSource, load_template
from workbench.template.variables import find_switches
from workbench.validate import validate

EFFORT = PROJECT_TEMPLATES / "new-formats" / "effort-switches.jinja"

#: Reasoning is off unless ``thinking`` is passed true: then the prompt opens <think> and turns keep it.
THINKING_OFF_BY_DEFAULT = """
{%- set think = thinking if thinking is defined else false -%}
{%- for message in messages -%}
    {%- if message.role == 'assistant' -%}
        {{- '<|assistant|>' -}}
        {%- if think and message.reasoning_content -%}
            {{- '<think>' + message.reasoning_content + '</think>' -}}
        {%- endif -%}
        {{- message.content + '<|end|>' -}}
    {%- else -%}
        {{- '<|' + message.role + '|>' + message.content + '<|end|>' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>' + ('<think>' if think else '') -}}{%- endif -%}
"""

#: Reasoning is rendered only for ``reasoning_mode == 'on'`` (default 'off'); the prompt never changes.
MODE_CHOICE = """
{%- set mode = reasoning_mode if reasoning_mode is defined else 'off' -%}
{%- for message in messages -%}
    {%- if message.role == 'assistant' -%}
        {{- '<|assistant|>' -}}
        {%- if mode == 'on' and message.reasoning_content -%}
            {{- '[R]' + message.reasoning_content + '[/R]' -}}
        {%- endif -%}
        {{- message.content + '<|end|>' -}}
    {%- else -%}
        {{- '<|' + message.role + '|>' + message.content + '<|end|>' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>' -}}{%- endif -%}
"""

#: The prompt opens a block inside the role header's literal; history writes an empty block for an answer
#: (so no render of an answer differs from one with reasoning by markers), and ``brief`` closes the block
#: in the prompt, the next segment's header after it.
CLOSED_BY_A_SWITCH = """
{%- for message in messages -%}
    {%- if message.role == 'user' -%}
        {{- '<|seg|>user<|text|>' + message.content + '<|stop|>' -}}
    {%- elif message.role == 'assistant' -%}
        {{- '<|seg|>assistant<|mind|>' + (message.reasoning_content or '') + '<|stop|>' -}}
        {{- '<|seg|>assistant<|text|>' + message.content + '<|stop|>' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|seg|>assistant<|mind|>' -}}
    {%- if brief is defined and brief -%}{{- '<|stop|><|seg|>assistant' -}}{%- endif -%}
{%- endif -%}
"""


def source(text: str, name: str) -> TemplateSource:
    return TemplateSource(text=text, name=name, origin="<test>")


def effects(spec: FormatSpec, name: str) -> dict[object, dict[str, object]]:
    return {json.dumps(e["value"]): e for e in spec.prompt.switches[name]["effects"]}


# ------------------------------------------------------------------------------------------ the AST
def test_candidates_and_their_values_come_from_the_ast() -> None:
    found = {c.name: c for c in find_switches(EFFORT.read_text(encoding="utf-8"))}
    assert set(found) == {"reasoning_effort", "clear_thinking"}
    # compared with 'none' (through the local alias ``effort``), falls back to 'low'
    assert found["reasoning_effort"].kind == "choice"
    assert set(found["reasoning_effort"].values) == {"none", "low"}
    # tested for truth through two aliases (clear -> keep)
    assert (found["clear_thinking"].kind, found["clear_thinking"].values) == ("flag", (True, False))


def test_loop_locals_and_machinery_variables_are_not_switches() -> None:
    text = (
        "{{ bos_token }}{% for m in messages %}{% set content = m.content %}"
        "{% if content == 'x' %}X{% endif %}{{ content }}{% endfor %}"
        "{% if add_generation_prompt %}A:{% endif %}{% if tools %}T{% endif %}"
    )
    assert find_switches(text) == ()


def test_a_template_that_does_not_parse_has_no_switches() -> None:
    assert find_switches("{% if %}") == ()


# ------------------------------------------------------------------------------------------ probing
def test_effort_switches_are_recorded_with_what_each_value_changes() -> None:
    spec = analyze(load_template(EFFORT)).spec
    assert set(spec.prompt.switches) == {"reasoning_effort", "clear_thinking"}
    effort = effects(spec, "reasoning_effort")
    assert effort['"none"']["generation_prompt"] == "[ASSISTANT][THINK][/THINK]"
    assert effort['"none"']["start"] == "content"  # the prompt closed reasoning: reasoning is off
    assert effort['"none"']["renders_reasoning"] is False
    assert effort['"low"']["changes"] == []  # the default
    assert effort['"low"']["start"] == "start"
    clear = effects(spec, "clear_thinking")
    assert clear["false"]["keeps_history_reasoning"] is True
    assert clear["true"]["keeps_history_reasoning"] is False
    assert clear["false"]["changes"] == ["earlier turns keep their reasoning"]
    # the reasoning found by default (reasoning_effort defaults to 'low')
    assert (spec.reasoning.start, spec.reasoning.end) == ("[THINK]", "[/THINK]")


def test_reasoning_off_by_default_is_found_through_the_switch_that_turns_it_on() -> None:
    analysis = analyze(source(THINKING_OFF_BY_DEFAULT, "thinking-off"))
    spec = analysis.spec
    assert (spec.reasoning.start, spec.reasoning.end) == ("<think>", "</think>")
    thinking = effects(spec, "thinking")
    assert thinking["true"]["start"] == "reasoning"  # the prompt opens <think>
    assert thinking["true"]["renders_reasoning"] is True
    assert thinking["false"]["renders_reasoning"] is False
    r1 = next(p for p in analysis.probes if p.id == "R1")
    assert "thinking=True" in r1.outcome


def test_reasoning_rendered_only_for_another_choice_value_is_found() -> None:
    spec = analyze(source(MODE_CHOICE, "mode-choice")).spec
    assert (spec.reasoning.start, spec.reasoning.end) == ("[R]", "[/R]")
    mode = effects(spec, "reasoning_mode")
    assert mode['"on"']["changes"] == ["reasoning rendered", "earlier turns keep their reasoning"]
    assert mode['"off"']["changes"] == []


def test_a_block_the_prompt_opens_and_a_switch_closes_is_the_reasoning() -> None:
    spec = analyze(source(CLOSED_BY_A_SWITCH, "closed-by-a-switch")).spec
    reasoning = (spec.reasoning.mode, spec.reasoning.start, spec.reasoning.end)
    assert reasoning == ("forced_open", "<|mind|>", "<|stop|>")
    assert spec.content.start == "<|seg|>assistant<|text|>"
    report = validate(source(CLOSED_BY_A_SWITCH, "closed-by-a-switch"), spec)
    assert report.features()["reasoning"]["status"] == "pass", report.features()["reasoning"]


def test_templates_without_switches_record_none() -> None:
    spec = analyze(load_template("chatml-think-tools")).spec
    assert spec.prompt.switches == {}


# ------------------------------------------------------------------------------------------ the spec
def test_switches_survive_the_spec_json_and_bad_ones_are_refused() -> None:
    spec = analyze(load_template(EFFORT)).spec
    assert FormatSpec.from_json(spec.to_json()) == spec
    data = spec.to_dict()
    data["prompt"]["switches"]["reasoning_effort"]["kind"] = "dial"
    with pytest.raises(SpecError, match=r"prompt\.switches\.reasoning_effort\.kind"):
        FormatSpec.from_dict(data)
    data = spec.to_dict()
    data["prompt"]["switches"]["reasoning_effort"]["effects"][0]["start"] = "middle"
    with pytest.raises(SpecError, match="start 'middle'"):
        FormatSpec.from_dict(data)
    data = spec.to_dict()
    data["prompt"]["switches"] = ["reasoning_effort"]
    with pytest.raises(SpecError, match=r"prompt\.switches"):
        FormatSpec.from_dict(data)


# ------------------------------------------------------------------------------------------ the CLI
runner = CliRunner()


def invoke(*args: object) -> object:
    return runner.invoke(app, [str(a) for a in args])


def test_analyze_shows_the_switches_in_text_and_json() -> None:
    text = invoke("analyze", EFFORT, "--no-check")
    assert text.exit_code == 0, text.output
    assert "template switches" in text.output and "reasoning_effort" in text.output
    as_json = invoke("analyze", EFFORT, "--json", "--no-check")
    data = json.loads(as_json.output)
    assert set(data["spec"]["prompt"]["switches"]) == {"reasoning_effort", "clear_thinking"}


OUTPUT = "[THINK]plan[/THINK]The answer.</s>"


@pytest.mark.parametrize("given", ["template", "spec"])
def test_parse_reads_the_output_from_where_the_switched_prompt_leaves_it(given: str, tmp_path: Path) -> None:
    """With reasoning_effort=none the prompt closed reasoning: the same text is then all answer."""
    out = tmp_path / "out.txt"
    out.write_text(OUTPUT, encoding="utf-8")
    if given == "template":
        where = ["--template", EFFORT]
    else:
        spec = tmp_path / "spec.json"
        spec.write_text(analyze(load_template(EFFORT)).spec.to_json(), encoding="utf-8")
        where = ["--spec", spec]
    default = json.loads(invoke("parse", *where, out, "--json").stdout)
    assert (default["reasoning_content"], default["content"]) == ("plan", "The answer.")
    switched = json.loads(invoke("parse", *where, out, "--json", "--kw", "reasoning_effort=none").stdout)
    assert (switched["reasoning_content"], switched["content"]) == ("", "[THINK]plan[/THINK]The answer.")


def test_parse_warns_about_a_switch_value_the_spec_does_not_record(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text(OUTPUT, encoding="utf-8")
    spec = tmp_path / "spec.json"
    spec.write_text(analyze(load_template(EFFORT)).spec.to_json(), encoding="utf-8")
    result = invoke("parse", "--spec", spec, out, "--json", "--kw", "reasoning_effort=extreme")
    assert result.exit_code == 0
    assert "records no switch value reasoning_effort='extreme'" in result.stderr
    assert json.loads(result.stdout)["reasoning_content"] == "plan"


def test_validate_renders_the_cases_with_the_switches() -> None:
    result = invoke("validate", EFFORT, "--json", "--kw", "reasoning_effort=none")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["validated"]
    assert any("reasoning_effort='none'" in note for note in report["notes"])
    # with reasoning off the template drops reasoning: unsupported, not failed
    assert report["features"]["reasoning"]["status"] == "unsupported"
    assert invoke("validate", EFFORT, "--kw", "clear_thinking=false").exit_code == 0


def test_generate_renders_the_prompt_with_the_switches() -> None:
    """A switch that closes reasoning in the prompt turns the generator's reasoning phase off."""
    pytest.importorskip("torch")
    pytest.importorskip("xgrammar")
    from workbench.generation.generate import Generator
    from workbench.generation.tiny import load_tiny
    from workbench.runtime.chat import Message

    src = load_template(EFFORT)
    spec = analyze(src).spec
    loaded = load_tiny()
    messages = [Message(role="user", content="Hi")]
    default = Generator(loaded, spec, messages=messages, template=src, max_new_tokens=1)
    assert default.prompt.endswith("[ASSISTANT]") and default.reasoning
    switched = Generator(
        loaded,
        spec,
        messages=messages,
        template=src,
        max_new_tokens=1,
        template_kwargs={"reasoning_effort": "none"},
    )
    assert switched.prompt.endswith("[ASSISTANT][THINK][/THINK]")
    assert "Reasoning: none" in switched.prompt
    assert not switched.reasoning


#: Loops for as long as it is allowed when ``slow`` is set: probing that value must not cost more than the
#: analysis' usual allowance of timed-out renders.
SLOW_SWITCH = """
{%- for message in messages -%}{{- '<|' + message.role + '|>' + message.content + '<|end|>' -}}{%- endfor -%}
{%- if slow -%}
    {%- for i in range(100000) -%}{%- for j in range(100000) -%}{%- endfor -%}{%- endfor -%}
{%- endif -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>' -}}{%- endif -%}
"""


def test_a_switch_value_that_never_finishes_rendering_is_dropped_not_waited_for() -> None:
    analysis = analyze(source(SLOW_SWITCH, "slow-switch"), time_limit=0.3)
    assert "slow" not in analysis.spec.prompt.switches
    assert analysis.spec.end_markers == ("<|end|>",)
    assert not [w for w in analysis.warnings if "timed out" in w]  # the probes proper kept their budget
