"""SmolLM2 tokens per second through the workbench, as a ratio to a bare transformers loop in the same run.

Three ways to produce the same number of tokens from the same prompt (greedy, KV cache, one torch thread):

- ``bare``: a plain transformers forward loop (prefill, then one token per forward; argmax; nothing else);
- ``generate``: ``workbench generate``'s code path, ``Generator.step()`` until finished (grammar mask, top
  candidates, streaming parser: everything the CLI does per token except printing);
- ``tui``: the TUI's generation worker, ``EngineController.generate`` with a step log and a message sink
  instead of the app (it also re-parses the message at every step, as the Generate screen shows it).

The workbench paths run under ``tool_choice=required`` (the grammar engaged from the first token), so the
mask's cost is in the figure.  Setup (grammar compile, prompt render) is timed apart, not in the rate.
Each path runs ``--repeats`` times, interleaved, and the median counts.  ``--busy`` starts one competing
busy process (a Python loop) for the whole measurement, the "under load" case of issue 12.  Goal: ratio
>= 0.9 for both paths.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/tokens_per_second.py [--tokens 48] [--repeats 3] [--busy]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from typing import Any

import torch

from workbench.chat import Message, Tool
from workbench.engine.generate import Generator
from workbench.engine.loaded import LoadedModel
from workbench.engine.model import ModelError, load_model
from workbench.template.source import DEFAULT_TEMPLATE, load_template
from workbench.tui.controllers import engine as engine_mod
from workbench.tui.controllers.engine import EngineController, GenerationRequest
from workbench.tui.steps import StepLog

WEATHER = Tool(
    "get_weather",
    "Get the current weather for a city",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
)
MESSAGES = [Message("user", "What is the weather in Paris? Answer with a tool call.")]


def spec_for_template() -> Any:
    from workbench.analysis import analyze

    return analyze(load_template(DEFAULT_TEMPLATE)).spec


def make_generator(loaded: LoadedModel, spec: Any, tokens: int) -> Generator:
    return Generator(
        loaded,
        spec,
        messages=MESSAGES,
        tools=[WEATHER],
        tool_choice="required",
        template=load_template(DEFAULT_TEMPLATE),
        reasoning=False,
        parallel=True,
        max_new_tokens=tokens,
    )


def run_generate(loaded: LoadedModel, spec: Any, tokens: int) -> tuple[int, float, float, str]:
    """(tokens, seconds, setup seconds, prompt) through the CLI's loop."""
    t0 = time.perf_counter()
    gen = make_generator(loaded, spec, tokens)
    t1 = time.perf_counter()
    while not gen.finished:
        gen.step()
    gen.message()
    return len(gen.steps), time.perf_counter() - t1, t1 - t0, gen.prompt


def run_tui(loaded: LoadedModel, spec: Any, tokens: int) -> tuple[int, float, float]:
    """(tokens, seconds, setup seconds) through the TUI's generation worker (no Textual app)."""
    log = StepLog()
    posted: list[object] = []
    controller = EngineController(log, posted.append)
    setup: list[float] = []
    real = engine_mod.make_generator

    def timed(request: GenerationRequest) -> Generator:
        t = time.perf_counter()
        gen = make_generator(request.loaded, request.spec, tokens)
        setup.append(time.perf_counter() - t)
        return gen

    request = GenerationRequest(
        loaded=loaded,
        model_name=loaded.name,
        spec=spec,
        template=load_template(DEFAULT_TEMPLATE),
        messages=list(MESSAGES),
        tools=[WEATHER],
        tool_choice="required",
        constrain=True,
        kwargs={"enable_thinking": False},
    )
    engine_mod.make_generator = timed  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        controller.generate(request)
        total = time.perf_counter() - t0
    finally:
        engine_mod.make_generator = real  # type: ignore[assignment]
    return len(log), total - setup[0], setup[0]


def run_bare(loaded: LoadedModel, prompt: str, tokens: int) -> float:
    """Seconds for ``tokens`` greedy tokens with a bare forward loop (the same number of forwards)."""
    ids = loaded.tokenizer.encode(prompt, add_special_tokens=False)
    model = loaded.model
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([ids]), use_cache=True, logits_to_keep=1)
        cache = out.past_key_values
        token = int(out.logits[0, -1].argmax())
        for _ in range(tokens - 1):
            out = model(input_ids=torch.tensor([[token]]), past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            token = int(out.logits[0, -1].argmax())
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48, help="max new tokens (the call may end sooner)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", action="store_true", help="run one competing busy process meanwhile")
    parser.add_argument("--model", default="default", help="default (SmolLM2-135M-Instruct) or a folder")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        loaded = load_model(args.model)
    except ModelError as exc:
        print(f"cannot load the model: {exc} (workbench model fetch gets SmolLM2)", file=sys.stderr)
        return 1
    spec = spec_for_template()
    busy = None
    if args.busy:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        n, _, _, prompt = run_generate(loaded, spec, args.tokens)  # warm-up: compiles and caches
        run_bare(loaded, prompt, n)
        rates: dict[str, list[float]] = {"bare": [], "generate": [], "tui": []}
        setups: dict[str, list[float]] = {"generate": [], "tui": []}
        for _ in range(args.repeats):
            count, secs, setup, _ = run_generate(loaded, spec, args.tokens)
            rates["generate"].append(count / secs)
            setups["generate"].append(setup)
            count_tui, secs, setup = run_tui(loaded, spec, args.tokens)
            rates["tui"].append(count_tui / secs)
            setups["tui"].append(setup)
            rates["bare"].append(count / run_bare(loaded, prompt, count))
    finally:
        if busy is not None:
            busy.terminate()
            busy.wait()
    bare = statistics.median(rates["bare"])
    load = "one competing busy process" if args.busy else "no extra load"
    print(f"{loaded.name}, {n} tokens (tool_choice=required), 1 torch thread, {load}")
    print(f"median of {args.repeats} interleaved runs per path")
    print(f"{'path':<10} {'tok/s':>8} {'ratio':>7} {'setup s':>8}")
    print(f"{'bare':<10} {bare:>8.1f} {1.0:>7.2f} {'-':>8}")
    for path in ("generate", "tui"):
        rate = statistics.median(rates[path])
        print(f"{path:<10} {rate:>8.1f} {rate / bare:>7.2f} {statistics.median(setups[path]):>8.2f}")
    worst = min(statistics.median(rates[p]) for p in ("generate", "tui")) / bare
    print(f"goal ratio >= 0.90: {'met' if worst >= 0.9 else 'NOT met'} (worst {worst:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
