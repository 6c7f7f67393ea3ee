"""The exported plug-ins never raise, whatever a client sends and whatever a model writes.

A server calls a plug-in's methods with requests its clients wrote (any tools, any ``tool_choice``, any
``chat_template_kwargs``) and outputs a model wrote (cut anywhere, markers repeated, stray text).  An
exception escaping a plug-in method is a failed request (vLLM answers HTTP 500, SGLang drops the stream), so
the contract is: what the plug-in cannot read it logs once and returns as content.

Hypothesis draws the requests and outputs here; :mod:`workbench.engines.harness.fuzz` builds each
request through the engine's own request models (vLLM's ``ChatCompletionRequest``, SGLang's ``Tool`` and
``ToolChoice``: what they refuse never reaches a plug-in) and runs every method the engine calls, one-shot,
as token deltas and as random chunks of tokens.  For every project template:

* no exception escapes any plug-in method;
* the streamed message (token deltas, and random chunks) is the one-shot message.

The outputs are mutations of the template's own round-trip outputs (cut, spliced, markers repeated, random
text inserted), so that they reach deep into each format's parser rather than bouncing off as plain text.
Needs the engines venv (``make engines``); skips with the reason without it.
"""

from __future__ import annotations

import collections
import contextlib
import json
import queue
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import PROJECT_TEMPLATES
from workbench.engines.harness.fuzz import BY_THE_PLUGIN
from workbench.engines.harness.launch import harness_env, harness_invocation
from workbench.engines.plugin_proof import build_plugin, write_files
from workbench.engines.plugins import PluginNames
from workbench.engines.tokenizers import tokenizer_for
from workbench.engines.venv import engines_missing_reason, engines_python
from workbench.export.spec_target import spec_with_provenance
from workbench.formats import analyze
from workbench.template.source import load_template
from workbench.validate import UNSUPPORTED, validate

pytestmark = [pytest.mark.slow, pytest.mark.shared]

#: Drawn cases per engine (each a few tens of milliseconds in the long-lived harness).
EXAMPLES = 150
ANSWER_TIMEOUT = 120.0


@cache
def exported() -> tuple[dict[str, Any], ...]:
    """Each project template whose spec has something to parse: its plug-ins written to a temporary folder,
    and its round-trip outputs (the material the outputs are mutated from)."""
    root = Path(tempfile.mkdtemp(prefix="wb-plugin-fuzz-"))
    out = []
    for path in sorted(PROJECT_TEMPLATES.rglob("*.jinja")):
        source = load_template(path)
        spec = analyze(source).spec
        report = validate(source, spec)
        outputs = sorted({c.output for c in report.cases if c.status != UNSUPPORTED and c.output})
        if not outputs:
            continue
        spec = spec_with_provenance(spec, None, template_sha256=source.sha256, template_name=source.name)
        names = PluginNames.for_template(source.name)
        folder = root / names.slug
        write_files(folder, build_plugin("vllm-plugin", spec, names))
        write_files(folder, build_plugin("sglang-plugin", spec, names))
        prefix = next((c.generation_prefix for c in report.cases if c.generation_prefix), "")
        out.append(
            {
                "key": source.name,
                "parser": names.parser,
                "tokenizer": str(tokenizer_for(source.name, spec=spec)),
                "vllm": {"file": str(folder / f"{names.slug}_vllm.py")},
                "sglang": {
                    "module": str(folder / f"{names.slug}_sglang.py"),
                    "reasoning": [spec.reasoning.start.strip(), spec.reasoning.end.strip()],
                },
                "outputs": outputs,
                "prefix": prefix,
            }
        )
    return tuple(out)


# ------------------------------------------------------------------------------------------ strategies
_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_names = st.one_of(st.sampled_from(["get_weather", "search", "a.b", "x-y", ""]), _text)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
_schema_keys = st.sampled_from(
    ["type", "properties", "required", "anyOf", "oneOf", "enum", "const", "items", "additionalProperties",
     "minLength", "maxLength", "pattern", "$ref", "format", "default", "nullable"]
)  # fmt: skip
_properties = st.dictionaries(
    _names,
    st.dictionaries(
        _schema_keys,
        _json | st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"]),
        max_size=3,
    ),
    max_size=3,
)
_object_schema = st.builds(
    lambda p, r: {"type": "object", "properties": p, "required": r}, _properties, st.lists(_names, max_size=2)
)
# Mostly what a client would send (so that most requests pass the engines' checks and reach the plug-in),
# sometimes anything at all.
_schema = st.one_of(_object_schema, _object_schema, st.dictionaries(_schema_keys, _json, max_size=4), _json)
_tool = st.fixed_dictionaries(
    {"type": st.just("function"), "function": st.fixed_dictionaries(
        {"name": _names}, optional={"parameters": _schema, "description": _text, "strict": st.booleans()})}
)  # fmt: skip


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    tools = draw(st.lists(_tool, max_size=3))
    named = [t["function"]["name"] for t in tools]
    any_name = st.builds(lambda n: {"type": "function", "function": {"name": n}}, _names)
    own_name = (
        st.builds(lambda n: {"type": "function", "function": {"name": n}}, st.sampled_from(named))
        if named
        else any_name
    )
    modes = st.sampled_from(["auto", "none", "required"])
    choice = draw(st.one_of(modes, modes, own_name, own_name, own_name, any_name, _json))
    request: dict[str, Any] = {"model": "workbench", "messages": [{"role": "user", "content": "x"}]}
    rarely = draw(st.integers(0, 7)) == 0  # now and then what the engines refuse: [] tools, a stray choice
    if tools or rarely:
        request["tools"] = tools
    if (tools and draw(st.booleans())) or rarely:
        request["tool_choice"] = choice
    # (not ``include_reasoning``: vLLM's serving layer drops the reasoning after the parsers, on both paths)
    optional = {
        "chat_template_kwargs": st.dictionaries(
            st.sampled_from(["enable_thinking", "thinking", "reasoning_effort", "tools", "x"]),
            _json,
            max_size=2,
        ),
        "parallel_tool_calls": st.booleans(),
        "skip_special_tokens": st.booleans(),
        "max_tokens": st.integers(1, 64),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            request[key] = draw(strategy)
    return request


@st.composite
def outputs(draw: st.DrawFn, material: list[str]) -> str:
    """A mutation of the template's own outputs: a cut, a splice of two, a piece repeated, stray text."""
    base = draw(st.sampled_from(material))
    other = draw(st.sampled_from(material))
    kind = draw(st.sampled_from(["cut", "splice", "repeat", "insert", "as-is", "random"]))
    i = draw(st.integers(0, len(base)))
    j = draw(st.integers(0, len(other)))
    if kind == "cut":
        return base[:i]
    if kind == "splice":
        return base[:i] + other[j:]
    if kind == "repeat":
        return base[:i] + other[:j] + base[i:]
    if kind == "insert":
        return base[:i] + draw(_text) + base[i:]
    if kind == "random":
        return draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
    return base


# ------------------------------------------------------------------------------------------------ test
class Harness:
    """The engines-venv harness as one long-lived process: a JSON line in, a JSON line out."""

    def __init__(self) -> None:
        python = engines_python()
        assert python is not None
        env = harness_env({"OMP_NUM_THREADS": "1"})  # no PYTHONPATH: the plug-ins load without us
        # the harness runs as a module from a folder holding only the workbench package, for its lifetime
        self._folder = contextlib.ExitStack()
        command, cwd = self._folder.enter_context(harness_invocation("fuzz", python))
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env=env, cwd=cwd,
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def ask(self, engine: str, job: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"engine": engine, "job": job, "case": case}) + "\n")
        self.process.stdin.flush()
        try:
            line = self.lines.get(timeout=ANSWER_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"{engine} took more than {ANSWER_TIMEOUT:.0f} s on {case!r:.300}")
        assert line, "the harness died"
        return dict(json.loads(line))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._folder.close()


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    if engines_python() is None:
        pytest.skip(engines_missing_reason())
    if not exported():
        pytest.skip("no project template with round-trip outputs")
    running = Harness()
    try:
        yield running
    finally:
        running.close()


def _visible(message: dict[str, Any]) -> dict[str, Any]:
    """What a client sees: whitespace-only text is no text (the engines drop it); calls by name and
    arguments (ids are the engine's to make up per path)."""
    return {
        "content": (message.get("content") or "").strip() and message["content"],
        "reasoning_content": (message.get("reasoning_content") or "").strip()
        and message["reasoning_content"],
        "tool_calls": [(c.get("name"), c.get("arguments")) for c in message.get("tool_calls") or []],
    }


def _without_cut_call(streamed: dict[str, Any], one_shot: dict[str, Any]) -> dict[str, Any]:
    """The streamed message less the calls whose arguments never became a whole JSON value, when the
    one-shot answer has fewer calls: the one-shot parse leaves such a call out (the output ended inside it,
    or -- in a spliced output -- the next call began before its arguments closed), but a stream has already
    sent its name and the arguments so far (the last case: with ``finish_reason: "length"``; the spliced
    case is a known gap of streaming a malformed output, in the closing note).  A call the one-shot answer
    has and the stream lacks, or any other difference, stays."""
    calls = streamed["tool_calls"]
    if len(calls) > len(one_shot["tool_calls"]):
        return streamed | {"tool_calls": [c for c in calls if isinstance(c[1], dict)]}
    return streamed


REACHED: dict[str, list[int]] = {}  # per engine: requests that reached the plug-in, requests the engine kept
REFUSALS: dict[str, list[str]] = {}


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@settings(max_examples=EXAMPLES, suppress_health_check=list(HealthCheck), deadline=None)
@given(data=st.data())
def test_no_plugin_method_raises_and_streaming_gives_the_one_shot_message(
    harness: Harness, engine: str, data: st.DataObject
) -> None:
    item = data.draw(st.sampled_from(exported()), label="template")
    case = {
        "request": data.draw(requests(), label="request"),
        "output": data.draw(outputs(item["outputs"]), label="output"),
        "groups": data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=5), label="chunk sizes"),
        "prefix": item["prefix"],
    }
    job = {k: v for k, v in item.items() if k not in ("outputs", "prefix")}
    answer = harness.ask(engine, job, case)
    assert answer["accepted"], f"{item['key']}: {answer['reason']}\n{answer.get('trace', '')}"
    counts = REACHED.setdefault(engine, [0, 0])
    # A refusal by the plug-in's own request adjustment (an HTTP 400 with its reason) reached the plug-in;
    # only the engine's request validation keeps a request from it.
    by_engine = bool(answer["refused"]) and not answer["refused"].startswith(BY_THE_PLUGIN)
    counts[by_engine] += 1
    if by_engine:
        REFUSALS.setdefault(engine, []).append(answer["refused"])
    if answer["refused"]:
        return
    raised = [f"{r['stage']}: {r['error']}\n{r['trace']}" for r in answer["raised"]]
    assert not raised, f"{item['key']}: a plug-in method raised:\n" + "\n".join(raised)
    one = _visible(answer["one_shot"])
    for how in ("streamed", "chunked"):
        assert _without_cut_call(_visible(answer[how]), one) == one, (
            f"{item['key']} {how} differs from one-shot"
        )


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_most_fuzzed_requests_reach_the_plugin(engine: str) -> None:
    """Not vacuous: the engines' own request validation let most drawn requests through to the plug-in
    (a plug-in that refuses a request with a 400 was reached).  The run that found this miscounted: 74
    reached, 76 "refused", of which 21 by the plug-in itself; counted right, about 95 to 55."""
    reached, refused = REACHED.get(engine, [0, 0])
    if reached + refused == 0:
        pytest.skip("the fuzz test did not run (no engines venv)")
    why = collections.Counter(r[:70] for r in REFUSALS.get(engine, [])).most_common(8)
    assert reached >= refused, (
        f"only {reached} requests reached the {engine} plug-in, {refused} refused: {why}"
    )
    print(f"{engine}: {reached} fuzzed requests reached the plug-in, {refused} were refused with HTTP 400")


#: Outputs hypothesis found (sessions 5 and 6), kept as fixed cases: (engine, template, request, output).
FOUND = [
    # tool_choice "none" (no tools): vLLM strips the calls of every delta but not of the parser's last
    # flush, whose closing "{}" reached the client as a call without a name.
    ("vllm", "typed-attr-args", {"model": "workbench", "messages": [{"role": "user", "content": "x"}]},
     '<calls><call name="configure">'),
    # one token at a time, the layout's lead and the reasoning start came apart, and the lead ended the
    # reasoning stage: no reasoning streamed.
    ("sglang", "assistant-prefix",
     {"model": "workbench", "messages": [{"role": "user", "content": "x"}], "tools": [],
      "tool_choice": "auto"},
     "Assistant: (thinking) The user asks a question.\nI should answer with the number. (done)\nIt is 42."),
    # session 6: an answer message whose model header is missing, after the reasoning message.  In one
    # piece our parser read the end marker, that header and its text as one marker event and the reasoning
    # stage owned all of it (the text was lost); in small pieces the stage ended at the header.
    ("vllm", "model-headers", {"model": "workbench", "messages": [{"role": "user", "content": "x"}]},
     "<|content_think|>The user wants the weather, so I call the tool.<|message_end|><|content_text|>Let me "
     "check the weather.<|message_end|><|message_model|>get_weather<|content_invoke|>"
     '{"city": "Paris", "unit": "celsius"}<|message_end|>'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("engine", "key", "request_", "output"), FOUND, ids=[f"{e}-{k}" for e, k, *_ in FOUND]
)
def test_the_outputs_the_fuzzer_found_stream_as_one_shot(
    harness: Harness, engine: str, key: str, request_: dict[str, Any], output: str
) -> None:
    item = next(i for i in exported() if i["key"] == key)
    job = {k: v for k, v in item.items() if k not in ("outputs", "prefix")}
    for groups in ([1], [3, 1, 2]):
        answer = harness.ask(engine, job, {"request": request_, "output": output, "groups": groups,
                                           "prefix": item["prefix"]})  # fmt: skip
        assert answer["accepted"] and not answer["refused"] and not answer["raised"], answer
        one = _visible(answer["one_shot"])
        for how in ("streamed", "chunked"):
            assert _visible(answer[how]) == one, (how, groups)
