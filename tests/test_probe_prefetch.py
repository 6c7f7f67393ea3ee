"""The first probe variants rendered in one batch (``ProbeRenderer.prefetch_variants``): fewer worker round
trips, the same analysis.

The prefetch keeps a render only where :meth:`ProbeRenderer.render` would have kept it without a fallback;
everything else (a template that needs its calls' arguments as JSON text, ``tools=[]``, a variable callers
must pass) is rendered on demand as before.  These tests hold the analysis to the one made without the
prefetch, on templates that take each fallback, and hold a timeout to what one render at a time would have
cost.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from workbench.analysis import analyzer, renders
from workbench.analysis.renders import ProbeRenderer
from workbench.formats import analyze
from workbench.template.source import TemplateSource, load_template

REPO = Path(__file__).resolve().parents[1]
CHATML_END = "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
# Prints a call's arguments as they come: a mapping shows its Python repr, so the analysis renders the
# calls again with the arguments as JSON text.
PRINTS_REPR = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<call>{{ c.function.name }} {{ c.function.arguments }}"
    "</call>{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}" + CHATML_END
)
# Iterates ``tools`` whether or not any are given: analysed with ``tools=[]``.
ITERATES_TOOLS = (
    "{% for t in tools %}<tool>{{ t.function.name }}</tool>{% endfor %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" + CHATML_END
)
# Reads a variable only some serving stacks pass: analysed with it set to ''.
READS_A_VARIABLE = (
    "{{ date_string + '' }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{% endfor %}" + CHATML_END
)
# Hangs on the first variant with an assistant answer, renders the prompts.
HANGS_ON_ANSWERS = (
    "{% for m in messages %}{% if m.role == 'assistant' %}"
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}"
    "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" + CHATML_END
)


def comparable(value: Any) -> Any:
    """An analysis's dict without what measures the run (time, render count)."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in ("seconds", "render_count")}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def _sources() -> list[TemplateSource]:
    inline = [
        TemplateSource(text=text, name=name, origin=name)
        for name, text in (
            ("prints-repr", PRINTS_REPR),
            ("iterates-tools", ITERATES_TOOLS),
            ("reads-a-variable", READS_A_VARIABLE),
        )
    ]
    project = [load_template(p) for p in sorted((REPO / "templates").rglob("*.jinja"))[:8]]
    return inline + project


@pytest.mark.parametrize("source", _sources(), ids=lambda s: s.name)
def test_the_prefetch_changes_nothing_the_analysis_finds(
    source: TemplateSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_prefetch = analyze(source)
    monkeypatch.setattr(analyzer, "ASKED_FIRST", ())
    without = analyze(source)
    assert comparable(with_prefetch.to_dict()) == comparable(without.to_dict())


def test_the_fallbacks_still_happen_where_the_prefetch_left_a_variant() -> None:
    """The three templates above take their fallbacks with the prefetch on: the notes say so."""
    notes = {s.name: " ".join(analyze(s).notes) for s in _sources()[:3]}
    assert "JSON text" in notes["prints-repr"]
    assert "tools=[]" in notes["iterates-tools"]
    assert "date_string" in notes["reads-a-variable"]


def test_the_prefetched_variants_are_served_without_another_render(monkeypatch: pytest.MonkeyPatch) -> None:
    source = load_template(sorted((REPO / "templates").rglob("*.jinja"))[0])
    renderer = ProbeRenderer(source, time_limit=2.0)
    renderer.prefetch_variants(analyzer.ASKED_FIRST)

    def no_render(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("rendered again")

    monkeypatch.setattr(renders, "render", no_render)
    for name in ("prompt_none", "prompt", "content", "content_then_user", "tools_content"):
        assert renderer.get(name), name


def test_a_prefetch_stops_at_its_first_timeout_as_one_render_at_a_time_would() -> None:
    """The prompts render; the first answer hangs: it fails as a timeout counted against the probes, and
    nothing after it is rendered (each later variant would have cost another time limit)."""
    limit = 0.5
    source = TemplateSource(text=HANGS_ON_ANSWERS, name="hangs", origin="hangs")
    renderer = ProbeRenderer(source, time_limit=limit)
    start = time.monotonic()
    renderer.prefetch_variants(analyzer.ASKED_FIRST)
    took = time.monotonic() - start
    assert renderer.get("prompt_none") and renderer.get("prompt")
    assert set(renderer.failures) == {"content"}
    assert "timed out" in renderer.failures["content"]
    assert took < 2 * limit + 3.0, took
    assert renderer.render_count == 3  # the two prompts and the answer that hung
