"""Templates that read message text only from typed parts (a vision model's processor template).

vLLM and SGLang detect a template that iterates message content and hand it every string content as
``[{"type": "text", "text": ...}]`` (their "openai" content format); such a template writes nothing for a
plain string.  The analysis and validation find this by comparing two renders of a user turn and then pass
content that way in every render (a :class:`~workbench.analysis.renders.RenderLadder` fallback, noted).
"""

from __future__ import annotations

import pytest

from workbench.analysis.probes import USER_TEXT
from workbench.analysis.renders import ProbeRenderer
from workbench.formats import analyze
from workbench.runtime.chat import Message
from workbench.template.render import (
    TemplateError,
    check_template_kwargs,
    content_as_parts,
    render,
    render_many,
)
from workbench.template.source import TemplateSource
from workbench.validate import validate

#: Text read only from typed parts: a plain string is iterated as characters, which have no ``type``.
PARTS = (
    "{%- macro text(c) -%}{%- for p in c -%}{%- if p.type is defined and p.type == 'text' -%}{{- p.text -}}"
    "{%- endif -%}{%- endfor -%}{%- endmacro -%}"
)
#: A ChatML-like template with <think> reasoning and <tool_call> JSON calls whose every text goes through
#: ``text`` (``{TEXT}`` is replaced by the macro call).
BODY = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}<|im_start|>assistant\n"
    "{%- if m.reasoning_content -%}<think>{{ m.reasoning_content }}</think>{%- endif -%}"
    "{%- if m.content -%}{TEXT}{%- endif -%}"
    "{%- for tc in m.tool_calls or [] -%}<tool_call>{{ {'name': tc.function.name, "
    "'arguments': tc.function.arguments} | tojson }}</tool_call>{%- endfor -%}<|im_end|>\n"
    "{%- else -%}<|im_start|>{{ m.role }}\n{TEXT}<|im_end|>\n{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}"
)
PARTS_ONLY = PARTS + BODY.replace("{TEXT}", "{{- text(m.content) -}}")
#: The usual shape: a string as it is, a list of parts by their text.
_STRING_FIRST = "{%- if c is string -%}{{- c -}}{%- else -%}{%- for p in c -%}"
EITHER = PARTS.replace("{%- for p in c -%}", _STRING_FIRST).replace(
    "{%- endfor -%}{%- endmacro -%}", "{%- endfor -%}{%- endif -%}{%- endmacro -%}"
) + BODY.replace("{TEXT}", "{{- text(m.content) -}}")
USER = [{"role": "user", "content": "Hello there"}]


def _source(text: str) -> TemplateSource:
    return TemplateSource(text=text, name="parts", origin="<test>")


def test_content_as_parts_wraps_string_content_only() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
        {"role": "assistant", "tool_calls": []},
        Message(role="user", content="typed"),
    ]
    out = content_as_parts(messages)
    assert out[0] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert out[1] == messages[1]
    assert "content" not in out[2]
    assert out[3]["content"] == [{"type": "text", "text": "typed"}]
    assert messages[0]["content"] == "hi"  # the caller's messages are left as they were


def test_render_and_render_many_pass_parts_when_asked() -> None:
    assert "Hello there" not in render(PARTS_ONLY, USER)
    assert "Hello there" in render(PARTS_ONLY, USER, content_as_parts=True)
    plain, parts = render_many(PARTS_ONLY, [{"messages": USER}, {"messages": USER, "content_as_parts": True}])
    assert isinstance(plain, str) and "Hello there" not in plain
    assert isinstance(parts, str) and "Hello there" in parts


def test_content_as_parts_is_a_render_argument_not_a_template_variable() -> None:
    with pytest.raises(TemplateError, match="content_as_parts"):
        check_template_kwargs({"content_as_parts": True})


def test_the_probes_pass_parts_to_a_template_that_reads_only_parts() -> None:
    renderer = ProbeRenderer(_source(PARTS_ONLY), time_limit=2.0)
    assert any("typed parts" in note for note in renderer.notes)
    assert USER_TEXT in renderer.render("prompt_none")


def test_a_template_that_reads_strings_takes_no_fallback() -> None:
    renderer = ProbeRenderer(_source(EITHER), time_limit=2.0)
    assert not any("typed parts" in note for note in renderer.notes)


@pytest.mark.parametrize("text", [PARTS_ONLY, EITHER], ids=["parts_only", "string_or_parts"])
def test_both_analyse_and_validate_alike(text: str) -> None:
    source = _source(text)
    analysis = analyze(source)
    assert analysis.spec.reasoning.start == "<think>"
    report = validate(source, analysis.spec)
    features = report.features()
    for feature in ("content", "reasoning", "tool_call", "parallel_calls", "content_with_call"):
        assert features[feature]["status"] == "pass", (feature, features[feature])
    parts_noted = any("typed parts" in n for n in report.notes)
    assert parts_noted == (text is PARTS_ONLY)
