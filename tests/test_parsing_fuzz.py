"""Fuzzing: random bytes, marker soup and truncated real outputs, across every spec, never raise.

Each input is parsed one-shot and streamed in random chunks; neither may raise, report an internal error
(``E-INTERNAL``, the parser's last line of defence), lose or invent a character in its events, or give a
different message.  The in-suite run is small; ``-m slow`` runs the full 100,000 inputs.
"""

from __future__ import annotations

import random

import pytest

from tests.test_parsing_properties import CALLS, TOOLS, all_specs, marker_alphabet, samples_for
from workbench.engines.policies import parse_options
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.spec import FormatSpec

OPTIONS = [
    ParseOptions(),
    ParseOptions(extract_reasoning=False),
    ParseOptions(thinking_opened=True),
    ParseOptions(enable_thinking=False, exclusive_tool_calls=True),
    ParseOptions(parse_tools=False),
    parse_options("vllm"),
    parse_options("sglang"),
]


def random_input(rng: random.Random, spec: FormatSpec) -> str:
    kind = rng.randrange(3)
    if kind == 0:  # random bytes, decoded the way a server would decode a bad byte stream
        return bytes(rng.randrange(256) for _ in range(rng.randrange(64))).decode("utf-8", errors="replace")
    if kind == 1:  # marker soup
        alphabet = marker_alphabet(spec)
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(24)))
    text = rng.choice(samples_for(spec))  # a real output, cut anywhere, with one marker spliced in
    at = rng.randrange(len(text) + 1)
    text = text[:at] + rng.choice(marker_alphabet(spec)) + text[at:]
    return text[: rng.randrange(len(text) + 1)]


def check_one(spec: FormatSpec, text: str, rng: random.Random) -> None:
    options = rng.choice(OPTIONS)
    tools = TOOLS if rng.random() < 0.7 else None
    one = parse(spec, text, tools, options)
    parser = StreamParser(spec, tools, options=options)
    events = []
    i = 0
    while i < len(text):
        step = rng.randint(1, 16)
        events += parser.feed(text[i : i + step])
        i += step
    result = parser.finish()
    events += parser.final_events
    assert "E-INTERNAL" not in [d.code for d in result.diagnostics], (text, result.diagnostics)
    assert "".join(e.text for e in events) == text
    assert result.message == one.message, text


def run_fuzz(n: int, seed: int) -> int:
    rng = random.Random(seed)
    specs = [s for _, s in all_specs()]
    for _ in range(n):
        spec = rng.choice(specs)
        check_one(spec, random_input(rng, spec), rng)
    return n


def test_fuzz_small_never_raises() -> None:
    assert run_fuzz(2_000, seed=11) == 2_000


@pytest.mark.slow
def test_fuzz_100k_never_raises() -> None:
    assert run_fuzz(100_000, seed=2026) == 100_000


def test_fuzz_inputs_cover_real_outputs() -> None:
    """The generator must produce truncations of real outputs with calls, not only noise."""
    rng = random.Random(1)
    spec = dict(all_specs())["spec:Qwen3-Coder"]
    texts = [random_input(rng, spec) for _ in range(300)]
    assert any(CALLS[0].name in t and "<function=" in t for t in texts)
