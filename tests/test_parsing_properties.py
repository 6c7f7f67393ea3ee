"""Property tests: any chunking of an output gives the same events text and message as one-shot parsing.

Specs: the hand-written fixtures (one per shared template), the hand-written specs under ``specs/``, and,
when the analysis stage is available, the specs analysed from the project's own templates and from the
shared templates.  Outputs: written from each spec (reasoning, content, several calls), llama.cpp's case
inputs, and "marker soup" built by hypothesis from the spec's own markers and characters around them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import PROJECT_TEMPLATES, REPO, shared_templates
from workbench.engines.policies import parse_options
from workbench.runtime.chat import Message, Tool
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.parsing.samples import SampleCall, sample_output
from workbench.runtime.spec import FormatSpec

TOOLS = [
    Tool(
        "get_weather",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    ),
    Tool(
        "search",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}, "filters": {"type": "array"}},
        },
    ),
]
CALLS = [
    SampleCall("get_weather", {"city": "Paris", "days": 3}),
    SampleCall("search", {"query": 'a <b> "c"', "filters": [1]}),
]


@functools.cache
def all_specs() -> tuple[tuple[str, FormatSpec], ...]:
    out: list[tuple[str, FormatSpec]] = []
    for path in sorted((REPO / "specs").rglob("*.json")):
        out.append((f"spec:{path.stem}", FormatSpec.from_json(path.read_text(encoding="utf-8"))))
    try:
        from workbench.formats import analyze
        from workbench.template.source import load_template
    except ImportError:
        return tuple(out)
    for path in sorted(PROJECT_TEMPLATES.glob("*.jinja")) + shared_templates():
        try:
            out.append((f"analysed:{path.stem}", analyze(load_template(str(path))).spec))
        except Exception:  # an analysis failure is the analyzer's test's business, not this one's
            continue
    return tuple(out)


def samples_for(spec: FormatSpec) -> list[str]:
    has_tools = spec.tools.format != "none"
    variants = [
        sample_output(
            spec, reasoning="Let me think.\nSure.", content="Hello <there>!", calls=CALLS if has_tools else ()
        ),
        sample_output(spec, content="Just text, with {braces} and [brackets] and <tags>."),
        sample_output(spec, reasoning="r", calls=CALLS[:1] if has_tools else (), end=False),
    ]
    return variants


def options_for(spec: FormatSpec) -> list[ParseOptions]:
    """The request switches that change the machine's path, and the engine profiles' policies."""
    return [
        ParseOptions(),
        ParseOptions(extract_reasoning=False),
        ParseOptions(enable_thinking=False, exclusive_tool_calls=True),
        parse_options("vllm"),
        parse_options("sglang"),
    ]


def chunk(text: str, cuts: Sequence[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(text[last:p])
        last = p
    pieces.append(text[last:])
    return [p for p in pieces if p]


def assert_stream_matches_one_shot(
    spec: FormatSpec, text: str, cuts: Sequence[int], options: ParseOptions
) -> None:
    one = parse(spec, text, TOOLS, options)
    parser = StreamParser(spec, TOOLS, options=options)
    events = []
    previous = Message(role="assistant")
    for piece in chunk(text, cuts):
        events += parser.feed(piece)
        now = parser.current()
        assert_grows(previous, now, drops_allowed=bool(parser.diagnostics))
        previous = now
    result = parser.finish()
    events += parser.final_events
    assert "".join(e.text for e in events) == text
    assert result.message == one.message
    assert [d.code for d in result.diagnostics] == [d.code for d in one.diagnostics]
    assert "E-INTERNAL" not in [d.code for d in result.diagnostics]
    assert_grows(previous, result.message, drops_allowed=bool(result.diagnostics))


def assert_grows(before: Message, after: Message, *, drops_allowed: bool = False) -> None:
    """Text only grows; every call sent before continues (same name and id, arguments extended), except
    calls dropped with a diagnostic (an invalid call is reported when it closes, after it was sent)."""
    assert (after.content or "").startswith(before.content or "")
    assert (after.reasoning_content or "").startswith(before.reasoning_content or "")
    remaining = list(after.tool_calls)
    for old in before.tool_calls:
        if (
            remaining
            and remaining[0].name == old.name
            and (not old.id or old.id == remaining[0].id)
            and remaining[0].arguments.startswith(old.arguments)
        ):
            remaining.pop(0)
        else:
            assert drops_allowed, f"call {old} was taken back"


def spec_ids() -> list[str]:
    return [name for name, _ in all_specs()]


@pytest.mark.parametrize("name", spec_ids())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40), which=st.integers(0, 14))
def test_any_chunking_of_a_spec_written_output_matches_one_shot(
    name: str, cuts: list[int], which: int
) -> None:
    spec = dict(all_specs())[name]
    texts = samples_for(spec)
    opts = options_for(spec)
    assert_stream_matches_one_shot(
        spec, texts[which % len(texts)], cuts, opts[which // len(texts) % len(opts)]
    )


def marker_alphabet(spec: FormatSpec) -> list[str]:
    markers = [m for m in spec.all_markers() if m]
    pieces = [*markers, *(m[: len(m) // 2] for m in markers if len(m) > 1)]
    pieces += [
        '{"name": "get_weather", "arguments": {"city": "X"}}',
        "get_weather",
        "search",
        '{"a": 1}',
        "[",
        "]",
        "(",
        ")",
        "=",
        '"',
        "'",
        ",",
        ":",
        " ",
        "\n",
        "x",
        "é",
        "{",
        "}",
        "<|start|>",
        "<|channel|>",
        "<|message|>",
        "<|end|>",
        "<|call|>",
        " to=functions.search",
        "analysis",
        "final",
        ">>>",
    ]
    return pieces


@pytest.mark.parametrize("name", spec_ids())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_chunking_of_marker_soup_matches_one_shot(name: str, data: st.DataObject) -> None:
    """Written outputs with marker fragments spliced in and cut short anywhere, or pure marker soup."""
    spec = dict(all_specs())[name]
    alphabet = marker_alphabet(spec)
    if data.draw(st.booleans()):
        text = data.draw(st.sampled_from(samples_for(spec)))
        for at, piece in data.draw(
            st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(alphabet)), max_size=6)
        ):
            at %= len(text) + 1
            text = text[:at] + piece + text[at:]
        text = text[: data.draw(st.integers(0, len(text)))]
    else:
        text = "".join(data.draw(st.lists(st.sampled_from(alphabet), max_size=30)))
    cuts = data.draw(st.lists(st.integers(0, 10_000), max_size=30))
    opts = data.draw(st.sampled_from(options_for(spec)))
    assert_stream_matches_one_shot(spec, text, cuts, opts)


def test_specs_were_collected_from_every_source() -> None:
    names = spec_ids()
    assert any(n.startswith("spec:") for n in names)
    if Path(PROJECT_TEMPLATES).is_dir():
        try:
            import workbench.analysis  # noqa: F401
        except ImportError:
            pytest.skip("workbench.analysis not available")
        assert any(n.startswith("analysed:") for n in names)
