"""SmolLM2 tokens per second through the workbench, as a ratio to a bare transformers loop in the same run.

Three ways to produce the same number of tokens from the same prompt (greedy, KV cache, one torch thread):

- ``bare``: a plain transformers forward loop (prefill, then one token per forward; argmax; nothing else);
- ``generate``: ``workbench generate``'s code path, ``Generator.step()`` until finished (grammar mask, top
  candidates, streaming parser: everything the CLI does per token except printing);
- ``tui``: the TUI's generation worker, ``EngineController.generate`` with a step log and a message sink
  instead of the app (it also re-parses the message at every step, as the Generate screen shows it).

The workbench paths run under ``tool_choice=required`` (the grammar engaged from the first token), so the
mask's cost is in the figure.  Setup (grammar compile, prompt render) is timed apart, not in the rate.
Each path runs ``--repeats`` times, interleaved in a rotating order, and the best run counts (on a shared
machine the fastest run is the least disturbed).  CPU seconds of the process are reported beside wall time:
contention stretches wall time, not the CPU the work takes.  ``--busy`` starts one competing
busy process (a Python loop) for the whole measurement, the "under load" case of issue 12.  Goal: ratio
>= 0.9 for both paths.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/tokens_per_second.py [--tokens 48] [--repeats 3] [--busy]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import torch

from workbench.generation.generate import Generator
from workbench.generation.kv import cache_name, forward_with_cache
from workbench.generation.loaded import LoadedModel
from workbench.generation.model import ModelError, load_model
from workbench.runtime.chat import Message, Tool
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
    from workbench.formats import analyze

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


@dataclass(frozen=True)
class Run:
    """One measured run: tokens, seconds for all of them (prefill included), seconds for the decode steps
    after the first token (prefill excluded), and the one-time setup (grammar compile, prompt render)."""

    tokens: int
    total: float
    decode: float
    setup: float
    cpu: float = 0.0  # this process's CPU seconds for all the tokens: what contention does not stretch

    @property
    def rate(self) -> float:
        return self.tokens / self.total

    @property
    def cpu_rate(self) -> float:
        return self.tokens / self.cpu if self.cpu > 0 else 0.0

    @property
    def decode_rate(self) -> float:
        return (self.tokens - 1) / self.decode if self.decode > 0 else 0.0


def run_generate(loaded: LoadedModel, spec: Any, tokens: int) -> tuple[Run, str]:
    """The CLI's loop, and the prompt it rendered."""
    t0 = time.perf_counter()
    gen = make_generator(loaded, spec, tokens)
    t1, c1 = time.perf_counter(), time.process_time()
    gen.step()  # the prompt's prefill and the first token
    t2 = time.perf_counter()
    while not gen.finished:
        gen.step()
    gen.message()
    t3, c3 = time.perf_counter(), time.process_time()
    return Run(len(gen.steps), t3 - t1, t3 - t2, t1 - t0, c3 - c1), gen.prompt


def run_tui(loaded: LoadedModel, spec: Any, tokens: int) -> Run:
    """The TUI's generation worker (no Textual app); the step log stamps each step's arrival."""
    log = StepLog()
    posted: list[object] = []
    controller = EngineController(log, posted.append)
    setup: list[float] = []
    setup_cpu: list[float] = []
    real = engine_mod.make_generator

    def timed(request: GenerationRequest) -> Generator:
        t, c = time.perf_counter(), time.process_time()
        gen = make_generator(request.loaded, request.spec, tokens)
        setup.append(time.perf_counter() - t)
        setup_cpu.append(time.process_time() - c)
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
        t0, c0 = time.perf_counter(), time.process_time()
        controller.generate(request)
        t3, c3 = time.perf_counter(), time.process_time()
    finally:
        engine_mod.make_generator = real  # type: ignore[assignment]
    first = log._times[0]  # when the first step (prefill included) reached the log
    return Run(len(log), t3 - t0 - setup[0], t3 - first, setup[0], c3 - c0 - setup_cpu[0])


def run_bare(loaded: LoadedModel, prompt: str, tokens: int) -> Run:
    """``tokens`` greedy tokens with a bare forward loop (the same number of forwards)."""
    ids = loaded.tokenizer.encode(prompt, add_special_tokens=False)
    model = loaded.model
    t0, c0 = time.perf_counter(), time.process_time()
    name = cache_name(model)  # the KV-cache argument's name in this transformers (no deprecation warning)
    with torch.inference_mode():
        logits, cache = forward_with_cache(model, name, torch.tensor([ids]), None, logits_to_keep=1)
        token = int(logits[0, -1].argmax())
        t1 = time.perf_counter()
        for _ in range(tokens - 1):
            logits, cache = forward_with_cache(model, name, torch.tensor([[token]]), cache)
            token = int(logits[0, -1].argmax())
    t2, c2 = time.perf_counter(), time.process_time()
    return Run(tokens, t2 - t0, t2 - t1, 0.0, c2 - c0)


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
        first, prompt = run_generate(loaded, spec, args.tokens)  # warm-up: compiles and caches
        n = first.tokens
        run_bare(loaded, prompt, n)
        runs: dict[str, list[Run]] = {"bare": [], "generate": [], "tui": []}
        jobs = {
            "bare": lambda: run_bare(loaded, prompt, n),
            "generate": lambda: run_generate(loaded, spec, args.tokens)[0],
            "tui": lambda: run_tui(loaded, spec, args.tokens),
        }
        order = list(jobs)
        for i in range(args.repeats):  # the order rotates, so a load that drifts hits every path alike
            for path in order[i % 3 :] + order[: i % 3]:
                runs[path].append(jobs[path]())
    finally:
        if busy is not None:
            busy.terminate()
            busy.wait()
    prompt_tokens = len(loaded.tokenizer.encode(prompt, add_special_tokens=False))
    load = "one competing busy process" if args.busy else "no extra load"
    print(f"{loaded.name}: {prompt_tokens}-token prompt, {n} new tokens (tool_choice=required)")
    print(f"1 torch thread, {load}, best of {args.repeats} interleaved runs per path")
    print("all = prefill + every token; decode = the tokens after the first (prefill excluded);")
    print("cpu = tokens per CPU second of this process (all tokens): the overhead, whatever the load")

    def median(path: str, what: str) -> float:
        """The best of the runs: on a shared machine the fastest run is the least disturbed one."""
        return max(getattr(r, what) for r in runs[path])

    cols = ("rate", "decode_rate", "cpu_rate")
    print(
        f"{'path':<9}" + "".join(f" {name + ' tok/s':>12} {'ratio':>6}" for name in ("all", "decode", "cpu"))
    )
    worst = float("inf")
    for path in ("bare", "generate", "tui"):
        line = f"{path:<9}"
        for what in cols:
            value, ratio = median(path, what), median(path, what) / median("bare", what)
            line += f" {value:>12.2f} {ratio:>6.2f}"
            if path != "bare":
                worst = min(worst, ratio)
        print(line)
    print(f"goal ratio >= 0.90: {'met' if worst >= 0.9 else 'NOT met'} (worst {worst:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
