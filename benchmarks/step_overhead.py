"""Per-step time split of constrained generation, and the grammar's overhead relative to the forward pass.

Prints, for each model, the median milliseconds per step of: forward (the model), mask (xgrammar bitmask
fill, selecting the allowed tokens, accepting the token), sample, record (top candidates, mask summary,
jump-forward string) and parse (detokenize + streaming parser), then the overhead ratio
(mask + record + parse) / forward.

Models: SmolLM2-135M-Instruct (49k vocabulary) when it is cached or can be fetched (``--no-fetch`` to only
use the cache), and the tiny random model at the Qwen3 tokenizer's 151k vocabulary (the 2 ms target is
about that one: its forward pass is so cheap that the overhead shows in absolute terms).

Run:  .venv/bin/python benchmarks/step_overhead.py [--steps 96] [--no-fetch]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from workbench.generation.generate import Generator
from workbench.generation.loaded import LoadedModel
from workbench.generation.model import ModelError, default_model_cached, load_model
from workbench.generation.sampling import SamplingConfig
from workbench.generation.step import Step
from workbench.runtime.chat import Message, Tool
from workbench.template.source import load_template
from workbench.testing.reference_specs import QWEN3_LIKE

WEATHER = Tool(
    name="get_weather",
    description="Get the current weather for a city",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name", "maxLength": 40},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
KEYS = ("forward", "mask", "sample", "record", "parse")


def collect(loaded: LoadedModel, steps: int, sampling: SamplingConfig) -> list[Step]:
    """Constrained steps only (tool_choice=required), over as many generations as it takes."""
    template = load_template("chatml-think-tools")
    out: list[Step] = []
    seed = 0
    while len(out) < steps:
        gen = Generator(
            loaded,
            QWEN3_LIKE,
            messages=[Message("user", "What is the weather in Paris?")],
            tools=[WEATHER],
            tool_choice="required",
            template=template,
            reasoning=False,
            parallel=False,
            sampling=SamplingConfig(sampling.temperature, seed=seed),
            max_new_tokens=min(128, steps - len(out) + 1),
        )
        gen.step()  # the first step includes the prompt's prefill: not a decode step
        out.extend(s for s in gen.run_to_end() if s.constrained)
        seed += 1
    return out[:steps]


def report(name: str, loaded: LoadedModel, steps: list[Step]) -> None:
    med = {k: statistics.median(s.timings_ms[k] for s in steps) for k in KEYS}
    overhead = med["mask"] + med["record"] + med["parse"]
    print(f"\n{name}: vocab {loaded.vocab_size:,}, {len(steps)} constrained decode steps (medians, ms)")
    print("  " + "  ".join(f"{k} {med[k]:7.3f}" for k in KEYS))
    print(f"  overhead (mask + record + parse) = {overhead:.3f} ms per step")
    print(f"  overhead / forward = {overhead / med['forward']:.1%}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=96)
    ap.add_argument("--no-fetch", action="store_true", help="use SmolLM2 only when already cached")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch threads: {args.threads}")
    if args.no_fetch and not default_model_cached():
        print("\nSmolLM2: not cached (run without --no-fetch to fetch it)")
    else:
        try:
            smol = load_model("default", progress=lambda m: print("  " + m, file=sys.stderr))
        except ModelError as exc:
            print(f"\nSmolLM2 unavailable: {exc}")
        else:
            t = time.perf_counter()
            report("SmolLM2-135M-Instruct (greedy)", smol, collect(smol, args.steps, SamplingConfig()))
            print(f"  ({time.perf_counter() - t:.1f} s)")
    tiny = load_model("tiny")
    report("tiny random model + Qwen3 tokenizer (greedy)", tiny, collect(tiny, args.steps, SamplingConfig()))
    report(
        "tiny random model + Qwen3 tokenizer (temperature 1)",
        tiny,
        collect(tiny, args.steps, SamplingConfig(temperature=1.0)),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
