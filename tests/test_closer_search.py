"""The closer of a block the generation prompt opens, found by rendering (``prompt.opened_block_closer``).

A template whose prompt ends with an opened block it never renders closed (Nemotron Nano v2: ``<think>\\n``)
names the closer only where it strips an earlier answer's reasoning.  Each literal of the template is tried
as that closer, a render each; a template that prints an answer holding every candidate at once, unchanged,
has none of them as a closer, and is answered by that one render.  These tests hold both halves: the closer
is still found where one is tested for, and a template without one costs one render, not one per literal.
"""

from __future__ import annotations

from typing import Any

import pytest

from workbench.analysis.probes import CONTENT_TEXT, REASONING_TEXT
from workbench.analysis.renders import ProbeRenderer
from workbench.formats import analyze
from workbench.template.source import TemplateSource

# Many string literals, none of them a closer: the answer is printed as it is.
LITERALS = "".join(f"{{% if m.role == 'r{i}x' %}}[lit{i}]{{% endif %}}" for i in range(30))
PRINTS_WHOLE = (
    "{% for m in messages %}<|turn|>{{ m.role }}\n" + LITERALS + "{{ m.content }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|turn|>assistant\n<|open|>\n{% endif %}"
)
# The same, but an earlier answer's reasoning is cut at a closer the template only tests for.
CUTS_AT_CLOSER = (
    "{% for m in messages %}<|turn|>{{ m.role }}\n" + LITERALS + "{% set c = m.content %}"
    "{% if '<|shut|>' in c and not loop.last %}{% set c = c.split('<|shut|>')[-1] %}{% endif %}"
    "{{ c }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|turn|>assistant\n<|open|>\n{% endif %}"
)


@pytest.fixture
def closer_tries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The answers rendered to try closers: reasoning, then what is tried, then the answer text."""
    tried: list[str] = []
    original = ProbeRenderer.render_conversations

    def recorded(self: ProbeRenderer, requests: Any) -> list[str | None]:
        for messages, _tools, _prompt in requests:
            for m in messages:
                content = m.get("content")
                if (
                    m.get("role") == "assistant"
                    and isinstance(content, str)
                    and content.startswith(REASONING_TEXT)
                    and content.endswith(CONTENT_TEXT)
                ):
                    tried.append(content[len(REASONING_TEXT) : -len(CONTENT_TEXT)])
        return original(self, requests)

    monkeypatch.setattr(ProbeRenderer, "render_conversations", recorded)
    return tried


def test_a_template_without_a_closer_costs_one_render_not_one_per_literal(closer_tries: list[str]) -> None:
    analysis = analyze(TemplateSource(text=PRINTS_WHOLE, name="prints-whole", origin="prints-whole"))
    assert analysis.spec.reasoning.mode == "none"
    assert len(closer_tries) == 1  # one per literal (30 and more) without the combined answer
    assert all(f"[lit{i}]" in closer_tries[0] for i in range(30))


def test_a_closer_the_template_only_tests_for_is_still_found(closer_tries: list[str]) -> None:
    analysis = analyze(TemplateSource(text=CUTS_AT_CLOSER, name="cuts-at-closer", origin="cuts-at-closer"))
    assert (analysis.spec.reasoning.start.strip(), analysis.spec.reasoning.end) == ("<|open|>", "<|shut|>")
    assert analysis.spec.reasoning.mode == "forced_open"
    assert len(closer_tries) > 1  # the combined answer was cut: the literals were tried one by one
    assert "<|shut|>" in closer_tries
