"""A call whose label is the id the history passes (Kimi-K2-Thinking, K2.5, Kimi-Linear).

Kimi's newer templates write ``<|tool_call_begin|>`` + the call's ``id`` when the history's call has one, and
``functions.NAME:IDX`` (the label the model itself writes) only when it has none.  Rendered with ids, as
every probe and validation case is, no call shows its function's name, and the analysis used to report
"the template does not render tool calls": a false green.  Now the analysis renders the calls again without
ids when a call shows its id but no name, and validation reads its cases so; a template that never writes
the name at all fails the tool-call features instead of calling them unsupported.  The templates are written
here for the test (the shape of the public K2-Thinking template, not a copy).
"""

from __future__ import annotations

from workbench.formats import analyze
from workbench.template.source import TemplateSource
from workbench.validate import validate

_CALLS = """\
{%- macro calls(message) -%}
<|tool_calls_section_begin|>
{%- for tool_call in message['tool_calls'] -%}
{%- LABEL -%}
<|tool_call_begin|>{{ label }}<|tool_call_argument_begin|>
{{- tool_call['function']['arguments'] | tojson }}<|tool_call_end|>
{%- endfor -%}
<|tool_calls_section_end|>
{%- endmacro -%}
{%- if tools -%}<|im_system|>tool_declare<|im_middle|>{{ tools | tojson }}<|im_end|>{%- endif -%}
{%- for message in messages -%}
{%- if message['role'] == 'user' -%}<|im_user|>user<|im_middle|>{{ message['content'] }}<|im_end|>
{%- elif message['role'] == 'assistant' -%}<|im_assistant|>assistant<|im_middle|>
{%- if message.get('reasoning_content') -%}<think>{{ message['reasoning_content'] }}</think>
{%- else -%}<think></think>{%- endif -%}
{{- message['content'] or '' -}}
{%- if message.get('tool_calls') -%}{{ calls(message) }}{%- endif -%}<|im_end|>
{%- elif message['role'] == 'tool' -%}
<|im_system|>tool<|im_middle|>## Return of {{ message.get('tool_call_id') }}
{{ message['content'] }}<|im_end|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}
"""
#: The id when the call has one, else the label the model writes (K2-Thinking).
ID_OR_LABEL = _CALLS.replace(
    "{%- LABEL -%}",
    "{%- if tool_call['id'] is defined -%}{%- set label = tool_call['id'] -%}{%- else -%}"
    "{%- set label = 'functions.' + tool_call['function']['name'] + ':' + loop.index0 | string -%}"
    "{%- endif -%}",
)
#: The id only: the function's name is written nowhere.
ID_ONLY = _CALLS.replace("{%- LABEL -%}", "{%- set label = tool_call['id'] -%}")


def _source(text: str, name: str) -> TemplateSource:
    return TemplateSource(text=text, name=name, origin="<test>")


def test_a_label_written_only_for_a_call_without_an_id_is_learned_and_validates() -> None:
    source = _source(ID_OR_LABEL, "id-or-label")
    analysis = analyze(source)
    tools = analysis.spec.tools
    assert tools.supported and tools.function_namespace == "functions."
    assert any("without ids" in note for note in analysis.notes)
    report = validate(source, analysis.spec)
    assert report.validated, report.verdict
    features = report.features()
    assert features["tool_call"]["status"] == features["parallel_calls"]["status"] == "pass"


def test_a_call_that_never_names_its_function_fails_instead_of_passing_as_unsupported() -> None:
    source = _source(ID_ONLY, "id-only")
    report = validate(source, analyze(source).spec)
    assert not report.validated
    features = report.features()
    assert features["tool_call"]["status"] == "fail"
    assert "function's name" in features["tool_call"]["reason"] or any(
        "function's name" in c.reason for c in report.cases if c.id == "one_call"
    )
