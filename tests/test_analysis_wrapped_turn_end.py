"""A template that wraps the answer in markers of its own and then closes the turn with another marker
(`<|say|>…<|/say|><|/bot|>`): the turn's end marker is the one after the wrapper's closer.

Found in the TUI walkthrough (docs/tui.md): P2 took the wrapper's closer as the end of the turn, the content
analysis then removed it (calls may follow it), and no end marker was left, so every call was followed by
`<|/bot|>` read as content.  A closer written as one literal of two tags (`<|/bot|><|eot|>`) is one
marker."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.formats import analyze
from workbench.template.source import load_template
from workbench.validate import validate

TURN = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' -%}<|usr|>{{ m.content }}<|/usr|>\n"
    "{%- elif m.role == 'assistant' -%}<|bot|>"
    "{%- if m.reasoning_content %}<|mind|>{{ m.reasoning_content }}<|/mind|>{% endif -%}"
    "{%- if m.content %}<|say|>{{ m.content }}<|/say|>{% endif -%}"
    "{%- for c in m.tool_calls or [] %}<|act|>{{ c.function.name }}\n"
    "{{ c.function.arguments | tojson }}<|/act|>{% endfor -%}"
    "{{ CLOSE }}\n"
    "{%- elif m.role == 'tool' -%}<|res|>{{ m.content }}<|/res|>\n"
    "{%- endif -%}{%- endfor -%}"
    "{%- if add_generation_prompt %}<|bot|>{% endif -%}"
)


@pytest.mark.parametrize("close", ["<|/bot|>", "<|/bot|><|eot|>"])
def test_the_marker_after_the_answer_wrapper_ends_the_turn(tmp_path: Path, close: str) -> None:
    path = tmp_path / "wrapped.jinja"
    path.write_text(TURN.replace("{{ CLOSE }}", close), encoding="utf-8")
    source = load_template(path)
    spec = analyze(source).spec
    assert spec.content.start == "<|say|>" and spec.content.end == "<|/say|>"
    # The turn's end is what the template writes after the wrapper, as it writes it: one literal
    # ``<|/bot|><|eot|>`` is one marker (no render separates its two halves; markers come from comparison,
    # not from their shape, issue 18).
    assert close in spec.end_markers
    assert "<|/say|>" not in spec.end_markers  # the wrapper's closer only ends the answer
    report = validate(source)
    assert report.validated, report.summary()
