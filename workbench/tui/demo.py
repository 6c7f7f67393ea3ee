"""A synthetic, deterministic step stream: what screenshots, tests and the replay benchmark show when no
recorded session is at hand.

The steps look like a Qwen3-style exchange (reasoning, then a tool call), cut into pseudo-tokens of one to
four characters.  Reasoning steps are unmasked (free region); from the tool-call marker on, a grammar is
pretended to allow a few tokens per step, with one masked favourite now and then.  Nothing here is the
engine's logic: it only produces ``Step`` records of the documented shape.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

from workbench.analysis import Analysis
from workbench.formats import analyze
from workbench.generation.step import Candidate, Step
from workbench.runtime.events import Event
from workbench.runtime.parsing import StreamParser
from workbench.template.source import DEFAULT_TEMPLATE, TemplateSource, load_template
from workbench.testing.reference_specs import QWEN3_LIKE

VOCAB = 151_936
STRIP = 64

# Event kinds as the real stream parser yields them for a Qwen3-like spec (JSON glue is marker text).
SCRIPT: tuple[tuple[str, str, int | None], ...] = (
    ("marker", "<think>", None),
    (
        "reasoning",
        "\nThe user asks for the weather in Paris. I have a get_weather tool that takes a city, "
        "so I should call it with city set to Paris.\n",
        None,
    ),
    ("marker", "</think>\n\n", None),
    ("marker", '<tool_call>\n{"name": "', 0),
    ("tool_name", "get_weather", 0),
    ("marker", '", "arguments": ', 0),
    ("tool_args", '{"city": "Paris", "unit": "c"}', 0),
    ("marker", "}\n</tool_call>", 0),
)
# Where the pretend grammar engages: at the tool-call trigger.
TRIGGER = "<tool_call>"
#: The format the demo stream is written in (Qwen3-like): what replays of it parse with.
DEMO_STREAM_SPEC = QWEN3_LIKE


def demo_parser() -> StreamParser:
    """A fresh parser for :func:`demo_steps` (replays re-parse the recorded text, as for real sessions)."""
    return StreamParser(DEMO_STREAM_SPEC)


def _pieces(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.choice((1, 2, 3, 3, 4))
        out.append(text[i : i + n])
        i += n
    return out


def demo_steps(n: int | None = None, *, seed: int = 7) -> list[Step]:
    """The demo exchange as steps; with ``n`` larger than one exchange, exchanges repeat (benchmarks)."""
    rng = random.Random(seed)
    steps: list[Step] = []
    token_base = 1000
    while n is None or len(steps) < n:
        constrained_region = False
        for kind, text, tool_index in SCRIPT:
            if kind == "marker" and text.startswith(TRIGGER):
                constrained_region = True
            parts = _pieces(text, rng) if kind != "marker" or len(text) > 12 else [text]
            for piece in parts:
                if n is not None and len(steps) >= n:
                    return steps
                steps.append(_step(len(steps), piece, kind, tool_index, constrained_region, rng, token_base))
        if n is None:
            break
    return steps


def _step(
    index: int,
    piece: str,
    kind: str,
    tool_index: int | None,
    constrained: bool,
    rng: random.Random,
    token_base: int,
) -> Step:
    token_id = token_base + (sum(map(ord, piece)) * 7919) % 140_000
    if constrained:
        allowed = rng.choice((1, 2, 3, 12, 45, 310, 2_048))
        where = tuple(  # the same draws as always (the demo stays the same); where the allowed tokens are
            min(1.0, rng.random() * allowed / 400) if rng.random() < 0.2 else 0.0 for _ in range(STRIP)
        )
        strip = _consistent_strip(where, allowed, token_id)
    else:
        allowed = VOCAB
        strip = (1.0,) * STRIP
    masked_favourite = constrained and rng.random() < 0.4
    logits = sorted((rng.gauss(12, 3) for _ in range(8)), reverse=True)
    z = sum(math.exp(v - logits[0]) for v in logits)
    candidates = []
    chosen_rank = 1 if masked_favourite else 0
    for rank, logit in enumerate(logits):
        if rank == chosen_rank:
            cid, text, ok = token_id, piece, True
        else:
            cid = token_base + (token_id * (rank + 3)) % 150_000
            text = rng.choice((" the", "\n", "{", " I", "<", "Paris", " call", '"', "weather", "ok"))
            ok = not constrained or (rank > chosen_rank and rng.random() < 0.2)
        candidates.append(
            Candidate(cid, text, round(logit, 3), round(math.exp(logit - logits[0]) / z, 4), ok)
        )
    allowed_cands = [c for c in candidates if c.allowed]
    mass = sum(c.prob for c in allowed_cands) or 1.0
    allowed_top = tuple(replace(c, prob=round(c.prob / mass, 4)) for c in allowed_cands)
    events = (Event(kind, piece, tool_index),)
    jump = '", "arguments": ' if constrained and kind == "tool_name" and piece.endswith("r") else ""
    return Step(
        index=index,
        token_id=token_id,
        token_text=piece,
        allowed_count=allowed,
        vocab_size=VOCAB,
        candidates=tuple(candidates),
        forced=False,
        constrained=constrained,
        region="constrained" if constrained else "free",
        jump_forward=jump,
        mask_strip=strip,
        events=events,
        timings_ms={"forward": 21.0, "mask": 0.4, "sample": 0.1, "parse": 0.05},
        chosen=candidates[chosen_rank],
        allowed_top=allowed_top,
    )


def _consistent_strip(weights: tuple[float, ...], allowed: int, token_id: int) -> tuple[float, ...]:
    """A heat strip that agrees with its step: ``allowed`` tokens in all, one of them in the chosen token's
    bucket, the rest spread over the buckets ``weights`` picks (the inspector draws the counts)."""
    width = VOCAB // STRIP
    counts = [0] * STRIP
    counts[min(token_id // width, STRIP - 1)] = 1
    total = sum(weights)
    rest = allowed - 1
    for b, w in enumerate(weights):
        counts[b] += int(rest * w / total) if total else 0
    counts[min(token_id // width, STRIP - 1)] += allowed - sum(counts)
    return tuple(c / (width if b < STRIP - 1 else VOCAB - width * (STRIP - 1)) for b, c in enumerate(counts))


def demo_source() -> TemplateSource:
    """The project's embedded default template (``templates/chatml-think-tools.jinja``), which the demo
    stream's Qwen3-like format matches: tests, snapshots and benchmarks show the same template the app
    opens by default."""
    return load_template(DEFAULT_TEMPLATE)


#: The demo template's text (tests compare against it).
DEMO_TEMPLATE = demo_source().text


def demo_analysis() -> Analysis:
    """The real analysis of :func:`demo_source`: what the Analysis screen shows for the default template.

    It runs the analyzer (a few dozen milliseconds) rather than describing an analysis by hand, so tests
    and snapshots exercise the screen with the analyzer's own ``Analysis`` and ``ProbeResult`` objects.
    """
    return analyze(demo_source())
