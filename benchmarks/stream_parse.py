"""Streaming parse cost per token: is it linear, and how does it compare with SGLang's detector?

Feeds reasoning + tool-call outputs of 1k, 10k and 100k tokens to ``StreamParser`` one token at a time and
prints the best-of-N microseconds per token and the ratio of the per-token cost at the largest size to the
smallest (1.0 = perfectly linear; the goal is <= 1.5).  The same is measured for prose with Llama 3 bare
JSON calls, whose trigger (``{``) is ordinary text: the parser holds each such call back whole (up to
``WEAK_HOLD_LIMIT`` characters) to check it is a call before sending its name, the costliest path.

When SGLang's function-call detectors can be imported, the same 10k-token stream is also fed to SGLang's
detector for the same wire format (``Qwen25Detector``: ``<tool_call>\\n{json}\\n</tool_call>``) and the ratio
is printed.  SGLang is never a dependency of this project: point ``--sglang`` at a folder holding the
``sglang`` wheel (``pip download --no-deps sglang -d DIR``) and, for its partial-JSON dependency, the
``partial_json_parser`` wheel (``pip download --no-deps partial-json-parser -d DIR``).  The detector package
is extracted to a temporary folder and the modules it imports but does not need for parsing (the OpenAI
protocol models, env flags, orjson) are stubbed.  Without the wheels the comparison is reported as skipped.

The scale part (``--only shapes``) feeds hostile output *shapes* of 64 KB to 8 MB, one-shot and streamed
(4-character chunks, a :class:`~workbench.runtime.parsing.DeltaTracker` taking deltas after every chunk, as an
engine plug-in streams): many small calls, marker soup, near-markers (text full of ``<`` and marker
prefixes), deep nesting, and long prose. For each shape and mode it prints microseconds per kilobyte and the
per-byte cost ratio largest/smallest (goal <= 1.5: the parser is linear in every shape).  The shapes are
timed in CPU seconds of this process, best of 3 (one run above 1 MB), after a warm-up run and a
``gc.collect()``; ``--shape NAME`` (repeatable) measures only some shapes, e.g. one per process.

Usage: ``python benchmarks/stream_parse.py [--sizes 1000 10000 100000] [--repeat 3] [--sglang DIR]
[--shape-sizes 65536 1048576 2097152 8388608] [--only tokens|shapes]``
"""

from __future__ import annotations

import argparse
import gc
import glob
import importlib
import json
import os
import random
import sys
import tempfile
import time
import types
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.runtime.parsing import DeltaTracker, StreamParser, parse  # noqa: E402
from workbench.runtime.spec import (  # noqa: E402
    CallPattern,
    FormatSpec,
    ReasoningSpec,
    ToolsSpec,
    ValueEncoding,
)
from workbench.testing.reference_specs import XLAM_LIKE  # noqa: E402

SPEC = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>\n\n"),
    tools=ToolsSpec(format="json_native", section_start="<tool_call>\n", section_end="</tool_call>"),
    end_markers=("<|im_end|>",),
)
# The delimited-strings format (templates/new-formats/delimited-strings.jinja): calls written
# ``<|tool_call|>call:NAME{key:<|q|>text<|q|>,n:1}<|/tool_call|>``, values in an encoding of their own.
DELIMITED = FormatSpec(
    tools=ToolsSpec(
        format="call_pattern",
        call_start="<|tool_call|>call:",
        call_end="<|/tool_call|>",
        parallel=True,
        pattern=CallPattern(
            call=("$name", "$args"),
            args="object",
            encoding=ValueEncoding(
                string_open="<|q|>",
                string_close="<|q|>",
                escape="none",
                key_quote="",
                key_sep=":",
                item_sep=",",
            ),
        ),
    ),
    end_markers=("<end_of_turn>",),
)
# Markers as long as a spec may hold them (``spec.MAX_SPEC_TEXT``, 256 characters; real ones are under 50).
LONG_START, LONG_END = "<" + "think" * 50 + ">", "</" + "think" * 50 + ">"
LONG_CALL = "<" + "tool_call" * 27 + ">"
LONG_MARKERS = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start=LONG_START, end=LONG_END),
    tools=ToolsSpec(format="json_native", section_start=LONG_CALL, section_end="</" + LONG_CALL[1:]),
    end_markers=("<|im_end|>",),
)
# A reply written as one JSON object (xLAM's): the answer a JSON string member, the calls a list member.
ENVELOPE = XLAM_LIKE
BARE_JSON = FormatSpec(
    tools=ToolsSpec(format="json_native", args_field="parameters"), end_markers=("<|eot_id|>",)
)
WORDS = (
    "the",
    "model",
    "weighs",
    "which",
    "tool",
    "fits",
    "city",
    "weather",
    "call",
    "json",
    "because",
    "it",
)


def make_tokens(n: int, *, seed: int = 7) -> list[str]:
    """An output of about ``n`` tokens: half reasoning, half one tool call with a long string argument."""
    rng = random.Random(seed)
    toks = ["<think>", "\n"]
    while len(toks) < n // 2:
        toks.append(" " + rng.choice(WORDS) + ("." if rng.random() < 0.1 else ""))
    toks += ["</think>", "\n\n", "<tool_call>", "\n", '{"', "name", '":', ' "', "write", "_note", '",']
    toks += [' "', "arguments", '":', ' {"', "text", '":', ' "']
    while len(toks) < n - 5:
        toks.append(rng.choice(WORDS) + (" " if rng.random() < 0.8 else ", "))
    toks += ['"}}', "\n", "</tool_call>", "<|im_end|>"]
    return toks


def make_bare_tokens(n: int, *, seed: int = 7) -> list[str]:
    """About ``n`` tokens of prose with a Llama 3 bare JSON call (~100 tokens) after every sentence or so.

    Each call starts with ``{`` in running text, so each is held back whole and checked before its name
    is sent: the per-token cost covers the hold, at every size.
    """
    rng = random.Random(seed)
    toks: list[str] = []
    while len(toks) < n - 110:
        toks += [" " + rng.choice(WORDS) for _ in range(rng.randrange(5, 15))] + [". ", '{"', "name", '":']
        toks += [' "', "write", "_note", '",', ' "', "parameters", '":', ' {"', "text", '":', ' "']
        toks += [rng.choice(WORDS) + " " for _ in range(rng.randrange(60, 120))] + ['"}}', " "]
    toks.append("<|eot_id|>")
    return toks


# ------------------------------------------------------------------------------------------ shapes
def _fill(unit: Callable[[random.Random], str], size: int, seed: int = 11) -> str:
    """Concatenate ``unit`` outputs to ``size`` characters (the last unit may be cut)."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        piece = unit(rng)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def shape_many_calls(size: int) -> str:
    """Thousands of small Qwen-style calls back to back."""

    def unit(rng: random.Random) -> str:
        args = json.dumps({"n": rng.randrange(1000)})
        return f'<tool_call>\n{{"name": "write_note", "arguments": {args}}}\n</tool_call>\n'

    return _fill(unit, size) + "<|im_end|>"


def shape_marker_soup(size: int) -> str:
    """Markers and marker fragments in random order: every position is a possible start of something."""
    pieces = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_", "</thi", "{", '"', "}", "\n")

    def unit(rng: random.Random) -> str:
        return rng.choice(pieces)

    return _fill(unit, size)


def shape_near_markers(size: int) -> str:
    """Prose full of ``<`` and marker prefixes that never complete."""
    pieces = ("a < b ", "<tool_cal ", "<thin ", "<|im_en ", "</tool_cal ", "<< ", "x<y ")

    def unit(rng: random.Random) -> str:
        return rng.choice(pieces) + rng.choice(WORDS) + " "

    return _fill(unit, size)


def shape_deep_nesting(size: int) -> str:
    """Calls whose arguments nest 40 levels deep, repeated."""

    def unit(rng: random.Random) -> str:
        depth = 40
        value = '{"k": ' * depth + str(rng.randrange(10)) + "}" * depth
        return f'<tool_call>\n{{"name": "write_note", "arguments": {value}}}\n</tool_call>\n'

    return _fill(unit, size) + "<|im_end|>"


def shape_prose(size: int) -> str:
    """Reasoning then plain prose: the common case, as a baseline for the others."""

    def unit(rng: random.Random) -> str:
        return " " + rng.choice(WORDS) + ("." if rng.random() < 0.1 else "")

    return "<think>" + _fill(unit, size // 2) + "</think>\n\n" + _fill(unit, size // 2) + "<|im_end|>"


def shape_delimited_soup(size: int) -> str:
    """The delimited-strings format's markers, delimiters and brackets in random order (issue 22: 1 MB of
    this parsed for more than 180 s one-shot)."""
    pieces = ("<|tool_call|>call:", "<|/tool_call|>", "<|q|>", "<|tool_", "<|q", "{", "}", ":", ",", "[", "]")
    pieces += ("call:f{", "a", "\n", "<end_of_turn>")

    def unit(rng: random.Random) -> str:
        return rng.choice(pieces)

    return _fill(unit, size)


def shape_object_calls(size: int) -> str:
    """One delimited-strings call whose ``object``-encoded arguments fill the output (issue 22: 256 KB took
    0.7 s, 1 MB 8.1 s)."""

    rng = random.Random(11)
    members = []
    total = 0
    while total < size:  # whole members (a cut one would end the call early)
        members.append(f"k{len(members)}:<|q|>v {rng.choice(WORDS)}<|q|>")
        total += len(members[-1]) + 1
    return "<|tool_call|>call:write_note{" + ",".join(members) + "}<|/tool_call|><end_of_turn>"


def shape_long_markers(size: int) -> str:
    """Prefixes of 256-character markers that never complete, between words: every position is held."""

    def unit(rng: random.Random) -> str:
        marker = rng.choice((LONG_START, LONG_END, LONG_CALL))
        return marker[: rng.randrange(1, len(marker))] + " " + rng.choice(WORDS) + " "

    return _fill(unit, size)


def shape_envelope(size: int) -> str:
    """A reply written as one JSON object (spec v6): an answer of escaped text filling the output, then
    calls (every character of the text is decoded; escapes are a tenth of it)."""

    def unit(rng: random.Random) -> str:
        return rng.choice(WORDS) + rng.choice((" ", " ", " ", "\\n", '\\"', "\\u00e9 ", "\\ud83d\\ude00 "))

    calls = ", ".join(f'{{"name": "write_note", "arguments": {{"n": {i}}}}}' for i in range(20))
    text = _fill(unit, size).rsplit(" ", 1)[0]  # whole units: no escape cut in half
    return '{"thought": "' + text + '", "tool_calls": [' + calls + "]}</s>"


#: name -> (make the text of a size, the spec it is parsed with)
SHAPES: dict[str, tuple[Callable[[int], str], FormatSpec]] = {
    "many calls": (shape_many_calls, SPEC),
    "marker soup": (shape_marker_soup, SPEC),
    "near-markers": (shape_near_markers, SPEC),
    "deep nesting": (shape_deep_nesting, SPEC),
    "prose": (shape_prose, SPEC),
    "delimited soup": (shape_delimited_soup, DELIMITED),
    "object calls": (shape_object_calls, DELIMITED),
    "long markers": (shape_long_markers, LONG_MARKERS),
    "envelope": (shape_envelope, ENVELOPE),
}


def time_one_shot(text: str, spec: FormatSpec = SPEC) -> float:
    gc.collect()  # garbage of the previous run is not this run's cost
    start = time.process_time()
    parse(spec, text)
    return time.process_time() - start


def time_streamed(text: str, spec: FormatSpec = SPEC, chunk: int = 4) -> float:
    gc.collect()
    parser = StreamParser(spec)
    tracker = DeltaTracker(parser)
    start = time.process_time()
    for i in range(0, len(text), chunk):
        parser.feed(text[i : i + chunk])
        tracker.take()
    parser.finish()
    tracker.take()
    return time.process_time() - start


def measure_shapes(
    sizes: list[int], repeat: int = 3, shapes: list[str] | None = None
) -> dict[tuple[str, str], dict[int, float]]:
    """Microseconds of CPU per KB, best of ``repeat`` (one run above 1 MB), per (shape, mode) and size.

    CPU time of this process (``time.process_time``), not wall time: on a shared machine other jobs' load
    moved wall-clock figures by +-50 % between runs, far more than the growth this measures.
    """
    out: dict[tuple[str, str], dict[int, float]] = {}
    for name, (make, spec) in SHAPES.items():
        if shapes and name not in shapes:
            continue
        texts = {n: make(n) for n in sizes}
        for mode, timer in (("one-shot", time_one_shot), ("streamed", time_streamed)):
            timer(texts[min(sizes)], spec)  # warm-up: lazy imports and caches are not the per-byte cost
            per_kb: dict[int, float] = {}
            for n in sizes:
                runs = repeat if n <= 1 << 20 else 1
                per_kb[n] = min(timer(texts[n], spec) for _ in range(runs)) / len(texts[n]) * 1024 * 1e6
            out[(name, mode)] = per_kb
    return out


def run_shapes(
    sizes: list[int], repeat: int = 3, shapes: list[str] | None = None
) -> dict[tuple[str, str], dict[int, float]]:
    """Per-kilobyte cost of every shape, one-shot and streamed, and its growth from smallest to largest."""
    print("scale: CPU per KB by output shape (goal: ratio largest/smallest <= 1.5)")
    print(f"  {'shape':<14} {'mode':<9}" + "".join(f"{_size_label(n):>12}" for n in sizes) + "     ratio")
    results = measure_shapes(sizes, repeat, shapes)
    for (name, mode), per_kb in results.items():
        ratio = per_kb[max(sizes)] / per_kb[min(sizes)]
        cells = "".join(f"{per_kb[n]:>9.0f} us" for n in sizes)
        print(f"  {name:<14} {mode:<9}{cells}   {ratio:6.2f}  (us per KB)", flush=True)
    return results


def _size_label(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def time_ours(tokens: list[str], spec: FormatSpec = SPEC) -> float:
    parser = StreamParser(spec)
    start = time.perf_counter()
    for tok in tokens:
        parser.feed(tok)
    result = parser.finish()
    elapsed = time.perf_counter() - start
    if {c.name for c in result.message.tool_calls} != {"write_note"}:
        raise SystemExit("benchmark output did not parse as expected: " + repr(result.to_contract())[:300])
    return elapsed


def best_time(fn: Callable[[list[str]], float], tokens: list[str], repeat: int) -> float:
    """The fastest of ``repeat`` runs: on a shared machine the slower runs measure the other processes."""
    return min(fn(tokens) for _ in range(repeat))


# ------------------------------------------------------------------------------------------ SGLang
def _stub(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


class _Env:
    """``sglang.srt.environ.envs``: every flag reads as unset."""

    def __getattr__(self, name: str) -> Any:
        return types.SimpleNamespace(get=lambda: False, value=False)


def load_sglang_detector(folder: str) -> tuple[type, Callable[[list[str]], Any]] | None:
    """SGLang's Qwen25Detector and a tool-list factory, or None when the wheels are not in ``folder``."""
    wheels = sorted(glob.glob(os.path.join(folder, "sglang-*.whl")))
    pjp = sorted(glob.glob(os.path.join(folder, "partial_json_parser-*.whl")))
    if not wheels or not pjp:
        return None
    target = tempfile.mkdtemp(prefix="sglang-fc-")
    with zipfile.ZipFile(wheels[-1]) as zf:
        wanted = [n for n in zf.namelist() if n.startswith("sglang/srt/function_call/") and n.endswith(".py")]
        zf.extractall(target, wanted)
    with zipfile.ZipFile(pjp[-1]) as zf:  # pure Python, but with namespace sub-packages zipimport cannot load
        zf.extractall(target, [n for n in zf.namelist() if n.startswith("partial_json_parser/")])
    sys.path.insert(0, target)
    for pkg in ("sglang", "sglang.srt", "sglang.srt.entrypoints", "sglang.srt.entrypoints.openai"):
        mod = _stub(pkg)
        mod.__path__ = [os.path.join(target, *pkg.split("."))]  # type: ignore[attr-defined]

    class Function:
        def __init__(self, name: str, parameters: dict[str, Any] | None = None) -> None:
            self.name, self.parameters, self.strict, self.description = name, parameters or {}, False, ""

    class Tool:
        def __init__(self, function: Function) -> None:
            self.type, self.function = "function", function

    _stub("sglang.srt.entrypoints.openai.protocol", Tool=Tool, ToolChoice=object, Function=Function)
    _stub("sglang.srt.environ", envs=_Env())
    if "orjson" not in sys.modules:
        try:
            importlib.import_module("orjson")
        except ImportError:
            _stub(
                "orjson",
                loads=json.loads,
                dumps=lambda obj, *a, **k: json.dumps(obj).encode(),
                JSONDecodeError=json.JSONDecodeError,
            )
    try:
        module = importlib.import_module("sglang.srt.function_call.qwen25_detector")
    except Exception as exc:  # an SGLang release whose imports this stubbing does not cover
        print(f"SGLang detector could not be imported ({type(exc).__name__}: {exc})")
        return None
    return module.Qwen25Detector, lambda names: [Tool(Function(n)) for n in names]


def time_sglang(detector_cls: type, make_tools: Callable[[list[str]], Any], tokens: list[str]) -> float:
    detector = detector_cls()
    tools = make_tools(["write_note"])
    start = time.perf_counter()
    names = []
    for tok in tokens:
        result = detector.parse_streaming_increment(tok, tools)
        names += [c.name for c in result.calls if c.name]
    elapsed = time.perf_counter() - start
    if names != ["write_note"]:
        raise SystemExit(f"SGLang's detector did not find the call: {names}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--sglang",
        default=os.environ.get("WORKBENCH_SGLANG_DIR", "/tmp/sglang_dl"),
        help="folder with the sglang and partial_json_parser wheels",
    )
    ap.add_argument("--shape-sizes", type=int, nargs="+", default=[1 << 16, 1 << 20, 1 << 21, 1 << 23])
    ap.add_argument("--only", choices=("tokens", "shapes"), default=None)
    ap.add_argument("--shape", action="append", choices=tuple(SHAPES), help="Only this shape (repeatable).")
    args = ap.parse_args()

    if args.only != "tokens":
        run_shapes(args.shape_sizes, shapes=args.shape)
        if args.only == "shapes":
            return

    for title, maker, spec in (
        ("reasoning + one tool call", make_tokens, SPEC),
        ("prose + Llama 3 bare JSON calls (weak trigger: each held back whole)", make_bare_tokens, BARE_JSON),
    ):
        per_token: dict[int, float] = {}
        print(f"workbench StreamParser, {title}, fed token by token")
        for n in args.sizes:
            tokens = maker(n)
            repeat = args.repeat if n <= 10000 else max(2, args.repeat // 2)
            t = best_time(lambda toks, s=spec: time_ours(toks, s), tokens, repeat)
            per_token[n] = t / len(tokens) * 1e6
            print(f"  {len(tokens):>7} tokens: {per_token[n]:7.2f} us/token  ({t * 1000:8.1f} ms total)")
        small, large = min(per_token), max(per_token)
        print(f"  per-token cost {large} / {small}: {per_token[large] / per_token[small]:.2f} (goal <= 1.5)")

    loaded = load_sglang_detector(args.sglang)
    if loaded is None:
        print(f"SGLang comparison skipped (no sglang + partial_json_parser wheels in {args.sglang})")
        return
    detector_cls, make_tools = loaded
    tokens = make_tokens(10000)
    ours = best_time(time_ours, tokens, args.repeat)
    theirs = best_time(lambda toks: time_sglang(detector_cls, make_tools, toks), tokens, args.repeat)
    print("SGLang Qwen25Detector.parse_streaming_increment on the same 10k-token stream")
    print(f"  ours   {ours / len(tokens) * 1e6:8.2f} us/token")
    print(f"  SGLang {theirs / len(tokens) * 1e6:8.2f} us/token")
    print(f"  ours is {theirs / ours:.1f}x faster (goal >= 5x)")


if __name__ == "__main__":
    main()
