"""The exported plug-ins answer real OpenAI requests in a running ``vllm serve`` and SGLang server (issue 19).

For two project templates (``chatml-think-tools``: JSON calls and reasoning; ``xml-tagged-args``: tagged
arguments) the vLLM plug-in is exported and served in one form each: ``chatml-think-tools`` as the single
file (``--tool-parser-plugin FILE``), ``xml-tagged-args`` as the pip package (installed with pip into a
folder on the server's path, found through its ``vllm.general_plugins`` entry point).  ``vllm serve`` runs
a tiny random Qwen3-style model built here (head size 32, the real Qwen3 tokenizer from ../shared, the
template as its chat template) on 127.0.0.1.  SGLang's server runs the same model for
``chatml-think-tools`` through the exported launcher (which must register the detectors in every SGLang
process).  One server per template and form serves every request of that pair; the fixture's finalizer
stops its whole process group, also when a test fails.

Each form is served once, crossed with the templates (each start-up costs a minute and a half of the
suite's two cores; all four pairs took 8 minutes): what only a server shows -- the plug-in loaded in the
server's processes, its request adjustments, the structural tag through the engine, streaming -- depends on
the form, not on the template; both forms of every validated template go through vLLM's own parsers in
``test_engine_plugins.py``, and the package's entry point through vLLM's plug-in loader in
``test_plugin_install.py``.

Each request kind (``required``, a named tool, ``auto`` with a strict tool, no tools; thinking on and off)
is sent once in one piece and once streamed, with the same seed.  Checks:

* every call the server returns names a request tool and has JSON arguments valid for its schema;
  ``required`` and named calls are there, and the model finished (not cut by ``max_tokens``);
* the streamed deltas add up to the one-shot answer (vLLM: from the same tokens, ``return_token_ids``);
* reasoning, content and calls land in their fields: the answer equals what the workbench's parser
  reads from the same output tokens (decoded with special tokens, as the plug-in asks the server to);
* a ``max_tokens`` that cuts the call gives no call and ``finish_reason: "length"``.

The random model is steered with standard request fields only: ``seed``, and a ``logit_bias`` that favours
the tokens of one well-formed answer for the template (markers, the tool's name, a value) and disfavours
whitespace-only tokens, so it gets to a call, closes its reasoning and ends within ``max_tokens``.  The
grammar is the plug-in's own, unchanged; without the steering the random model still gets to a required
call with thinking off (4 of 5 seeds at least), since the tag bounds the whitespace before and inside the
call and has no reasoning block there when thinking is off.

Skips with the reason when the engines venv (``make engines``) or ../shared's Qwen3 tokenizer is absent.
Slow: one server start-up each (2-5 minutes on two busy cores), then a few seconds per request.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import PROJECT_TEMPLATES, REPO, shared_path
from tests.engines.servers import (
    Answer,
    Server,
    build_tiny_model,
    chat,
    chat_stream,
    clean_env,
    free_port,
    one_shot_answer,
    start_server,
    streamed_answer,
)
from workbench.engines.plugin_proof import build_plugin, write_files
from workbench.engines.plugins import PluginNames
from workbench.engines.venv import engines_missing_reason, engines_python
from workbench.export.spec_target import spec_with_provenance
from workbench.formats import analyze
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import StreamParser
from workbench.runtime.parsing.options import ParseOptions
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template

pytestmark = [pytest.mark.slow, pytest.mark.serve]

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 16, "description": "The city."}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {"zone": {"type": "string", "enum": ["UTC", "CET", "JST"]}},
            "required": ["zone"],
            "additionalProperties": False,
        },
    },
}
STRICT_WEATHER = {**WEATHER, "function": {**WEATHER["function"], "strict": True}}
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


@dataclass(frozen=True)
class Template:
    """A template under test and one well-formed answer in its syntax (the text the steering favours)."""

    name: str
    call_text: str
    reasoning_text: str = ""


TEMPLATES = {
    "chatml-think-tools": Template(
        "chatml-think-tools",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "<think>\nThe user asks.\n</think>\n\n",
    ),
    "xml-tagged-args": Template(
        "xml-tagged-args",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    ),
}
# vLLM: each form of its plug-in, crossed with the templates; SGLang: its exported launcher, for one template.
SERVERS = [("chatml-think-tools", "file"), ("xml-tagged-args", "package"), ("chatml-think-tools", "sglang")]
SHIMS = REPO / "scripts" / "engines_shims"  # torchvision stand-in for SGLang's server (see its README)


@dataclass(frozen=True)
class Kind:
    """One kind of request: its tools and tool choice, and what the answer must hold."""

    name: str
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: Any = None
    must_call: str | None = None  # "" any tool, or the one tool's name

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self.tools:
            body["tools"] = list(self.tools)
        if self.tool_choice is not None:
            body["tool_choice"] = self.tool_choice
        return body


KINDS = {
    "required": Kind("required", (WEATHER, TIME), "required", must_call=""),
    "named": Kind(
        "named", (WEATHER, TIME), {"type": "function", "function": {"name": "get_weather"}}, "get_weather"
    ),
    "auto_strict": Kind("auto_strict", (STRICT_WEATHER, TIME), "auto"),
    "no_tools": Kind("no_tools"),
}


# ------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def engines() -> Path:
    python = engines_python()
    if python is None:
        pytest.skip(engines_missing_reason())
    if not (python.parent / "vllm").is_file():
        pytest.skip(f"no `vllm` command beside {python}: run `make engines`")
    return python


@pytest.fixture(scope="module")
def qwen3_tokenizer() -> Path:
    return shared_path("tokenizers", "qwen3")


@dataclass
class Served:
    """A running server and what the tests need to read its answers."""

    server: Server
    template: Template
    spec: FormatSpec
    tokenizer: Any
    whitespace: list[int]


def _export(template: Template, folder: Path, target: str) -> tuple[FormatSpec, PluginNames]:
    source = load_template(PROJECT_TEMPLATES / f"{template.name}.jinja")
    spec = spec_with_provenance(
        analyze(source).spec, None, template_sha256=source.sha256, template_name=source.name
    )
    names = PluginNames.for_template(source.name)
    write_files(folder, build_plugin(target, spec, names))
    return spec, names


def _pip_install(engines: Path, package: Path, site: Path) -> None:
    """The package, installed by the engines venv's pip into ``site`` (offline; nothing lands in the venv)."""
    done = subprocess.run(
        [str(engines), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "--target", str(site), str(package)],
        capture_output=True, text=True, env=clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1"), timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module", params=SERVERS, ids=[f"{t}-{form}" for t, form in SERVERS])
def served(
    request: pytest.FixtureRequest,
    engines: Path,
    qwen3_tokenizer: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    name, form = request.param
    template = TEMPLATES[name]
    root = tmp_path_factory.mktemp(f"serve-{name}-{form}")
    model = build_tiny_model(
        root / "model", (PROJECT_TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8"), qwen3_tokenizer
    )
    export = root / "export"
    port = free_port()
    if form == "sglang":
        spec, names = _export(template, export, "sglang-plugin")
        env = clean_env(PYTHONPATH=str(SHIMS))
        argv = [
            str(engines), str(export / f"launch_{names.slug}.py"), "--model-path", str(model),
            "--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port),
            "--device", "cpu", "--attention-backend", "torch_native", "--disable-cuda-graph",
            "--max-total-tokens", "4096",
        ]  # fmt: skip
    else:
        spec, names = _export(template, export, "vllm-plugin")
        flags = ["--enable-auto-tool-choice", "--tool-call-parser", names.parser]
        flags += ["--reasoning-parser", names.parser]
        # The model runs inside the engine-core process (the "uni" executor) rather than in a third process
        # of its own: one vLLM import fewer a server (about 10 s idle, 15-20 s on a busy machine).  The API
        # server and the engine core, where the plug-in must load, stay two processes.
        env = clean_env(VLLM_CPU_KVCACHE_SPACE="1", VLLM_ENABLE_V1_MULTIPROCESSING="0")
        if form == "file":
            plugin = str(export / f"{names.slug}_vllm.py")
            flags += ["--tool-parser-plugin", plugin, "--reasoning-parser-plugin", plugin]
        else:
            _pip_install(engines, export / "package", root / "site")
            env["PYTHONPATH"] = str(root / "site")
        argv = [
            str(engines.parent / "vllm"), "serve", str(model), "--served-model-name", "tiny",
            "--host", "127.0.0.1", "--port", str(port),
            "--enforce-eager", "--max-model-len", "2048", "--max-num-seqs", "4", *flags,
        ]  # fmt: skip
    title = f"{'SGLang' if form == 'sglang' else 'vllm serve'} ({name}, {form})"
    server = start_server(title, argv, env=env, cwd=root, log=root / "server.log")
    server.streams_token_ids = form != "sglang"
    try:
        from transformers import AutoTokenizer

        print(f"\n{server.name}: healthy after {server.started_in:.0f} s")
        tokenizer = AutoTokenizer.from_pretrained(str(model))
        yield Served(server, template, spec, tokenizer, whitespace_tokens(tokenizer))
    finally:
        server.stop()


# ------------------------------------------------------------------------------------------ helpers
def whitespace_tokens(tokenizer: Any) -> list[int]:
    """The tokens that decode to whitespace only (441 in Qwen3's vocabulary)."""
    ids = []
    for i in range(len(tokenizer)):
        text = tokenizer.decode([i])
        if text and not text.strip():
            ids.append(i)
    return ids


def steering(served: Served, kind: Kind, thinking: bool) -> dict[str, float]:
    """``logit_bias`` favouring one well-formed answer's tokens: the call (kinds with tools), the reasoning
    block (thinking on, when the template reasons), a short text, and the end of the turn; whitespace-only
    tokens are disfavoured (a random model otherwise picks them wherever the format allows whitespace)."""
    tok = served.tokenizer
    texts = ["Sunny in Paris."]
    if kind.tools:
        texts.append(served.template.call_text)
    if thinking and served.template.reasoning_text:
        texts.append(served.template.reasoning_text)
    bias: dict[str, float] = {str(i): -8.0 for i in served.whitespace}
    for text in texts:
        for token in tok.encode(text, add_special_tokens=False):
            if str(token) not in bias:
                bias[str(token)] = 9.0
    bias[str(tok.convert_tokens_to_ids("<|im_end|>"))] = 7.0
    return bias


def request_body(served: Served, kind: Kind, thinking: bool, *, seed: int, **extra: Any) -> dict[str, Any]:
    return {
        "model": served.server.model,
        "messages": QUESTION,
        "max_tokens": 160,
        "seed": seed,
        # SGLang's seed did not give a one-shot and a streamed request the same tokens here: greedy does.
        "temperature": 0.0 if served.server.name.startswith("SGLang") else 1.0,
        "logit_bias": steering(served, kind, thinking),
        "chat_template_kwargs": {"enable_thinking": thinking},
        "return_token_ids": True,
        **kind.body(),
        **extra,
    }


def _tools(kind: Kind) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in kind.tools}


def assert_calls_valid(answer: Answer, kind: Kind, where: str) -> None:
    """Every call names a request tool and has JSON arguments valid for that tool's schema."""
    tools = _tools(kind)
    for name, arguments in answer.calls:
        assert name in tools, f"{where}: a call to {name!r}, not a request tool ({sorted(tools)})"
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{where}: {name} arguments are not JSON ({exc}): {arguments!r}") from None
        jsonschema.validate(value, tools[name]["parameters"])


def reference(served: Served, answer: Answer, kind: Kind, thinking: bool) -> Answer:
    """What the workbench's parser reads from the answer's own output tokens (special tokens kept, as the
    plug-in asks the server to decode them), as the server should report it."""
    raw = served.tokenizer.decode(answer.token_ids, skip_special_tokens=False)
    tools = [Tool.from_openai(t) for t in kind.tools] or None
    parser = StreamParser(served.spec, tools, options=ParseOptions(enable_thinking=thinking))
    parser.feed(raw)
    message = parser.finish().message
    return Answer(
        content=message.content or "",
        reasoning=message.reasoning_content or "",
        calls=[(c.name, c.arguments) for c in message.tool_calls],
        finish_reason=answer.finish_reason,
        token_ids=answer.token_ids,
    )


def same_message(a: Answer, b: Answer) -> tuple[Any, ...]:
    """The parts of a message two answers must agree on: text without surrounding whitespace (vLLM drops
    whitespace-only text from a one-shot answer, a stream sends it), calls by name and argument value."""
    return (
        a.content.strip(),
        a.reasoning.strip(),
        [(name, json.loads(args)) for name, args in a.calls],
    )


# ------------------------------------------------------------------------------------------ tests
#: SGLang 0.5.23 keeps a request's grammar off until the reasoning end marker whenever thinking is on
#: (serving_chat: ``require_reasoning = thinking_mode``), also for a template whose outputs open their own
#: block: a model that answers without reasoning is never constrained, so ``required`` and a named tool
#: do not get their call.  The vLLM plug-in asks vLLM to constrain from the first token for such formats
#: (``_grammar_from_parser``); SGLang has no such hook.  Found by this test, not fixed.
SGLANG_GATE = pytest.mark.xfail(
    strict=True, reason="SGLang waits for </think> before it applies the grammar when thinking is on"
)


@pytest.mark.parametrize("thinking", [True, False], ids=["thinking", "no_thinking"])
@pytest.mark.parametrize("kind_name", list(KINDS))
def test_served_answer_is_schema_valid_and_streams_as_one_shot(
    served: Served, kind_name: str, thinking: bool, request: pytest.FixtureRequest
) -> None:
    kind = KINDS[kind_name]
    if served.server.name.startswith("SGLang") and thinking and kind.must_call is not None:
        request.applymarker(SGLANG_GATE)
    body = request_body(served, kind, thinking, seed=7)
    one = one_shot_answer(chat(served.server, body))
    streamed = streamed_answer(chat_stream(served.server, body))
    where = f"{served.server.name}, {kind.name}, thinking={thinking}"

    assert one.token_ids, f"{where}: no token ids in the answer"
    if streamed.token_ids:  # vLLM sends them with each chunk; SGLang only in one piece
        assert streamed.token_ids == one.token_ids, f"{where}: the stream generated other tokens"
    assert_calls_valid(one, kind, where)
    assert_calls_valid(streamed, kind, where + " (streamed)")
    if kind.must_call is not None:
        assert one.finish_reason in ("stop", "tool_calls"), f"{where}: the call was cut ({one.finish_reason})"
        assert one.calls, f"{where}: no call under tool_choice={kind.tool_choice!r}"
        if kind.must_call:
            assert {name for name, _ in one.calls} == {kind.must_call}
    if not kind.tools:
        assert not one.calls
    assert same_message(streamed, one) == same_message(one, one), f"{where}: streamed != one-shot"
    expected = reference(served, one, kind, thinking)
    assert same_message(one, one) == same_message(expected, expected), (
        f"{where}: the server's fields differ from the workbench parser's on the same output "
        f"{served.tokenizer.decode(one.token_ids, skip_special_tokens=False)!r}"
    )


def test_a_required_call_completes_without_steering(served: Served) -> None:
    """Under ``required`` with thinking off, the random model with no ``logit_bias`` at all completes a
    schema-valid call within 160 tokens for at least 4 of 5 seeds: only a grammar that bounds what may
    come before the call and the whitespace inside it gets a random model there.  The assembler bounds both
    (issue 19), and with thinking off the plug-in's tag has no reasoning block before the call: when it had
    one, chatml-think-tools made 3 of 5 (seeds 1 and 4 opened ``<think>`` and wrote free text until
    ``max_tokens``); 5 of 5 since, like xml-tagged-args."""
    if served.server.name.startswith("SGLang"):
        pytest.skip("one server per template: chatml-think-tools's tag is checked on its vLLM server")
    kind = KINDS["required"]
    outcomes = []  # per seed: the finish reason and the output's length in tokens
    made = 0
    for seed in range(5):
        body = request_body(served, kind, False, seed=seed)
        del body["logit_bias"]
        answer = one_shot_answer(chat(served.server, body))
        assert_calls_valid(answer, kind, f"{served.server.name}, seed {seed}")
        made += bool(answer.calls) and answer.finish_reason in ("stop", "tool_calls")
        outcomes.append(f"{seed}: {answer.finish_reason}, {len(answer.token_ids)} tokens")
    print(f"\n{served.server.name}: a call in {made} of 5 seeds ({'; '.join(outcomes)})")
    assert made >= 4, f"{served.server.name}: a call in {made} of 5 seeds ({'; '.join(outcomes)})"


def _tokens_into_the_arguments(served: Served, kind: Kind, token_ids: list[int]) -> int:
    """How many of ``token_ids`` end the output inside the first call's arguments: the first prefix whose
    parse has a named call with some arguments (not yet a whole JSON object)."""
    tools = [Tool.from_openai(t) for t in kind.tools]
    for n in range(1, len(token_ids) + 1):
        parser = StreamParser(served.spec, tools, options=ParseOptions(enable_thinking=False))
        parser.feed(served.tokenizer.decode(token_ids[:n], skip_special_tokens=False))
        result = parser.finish()
        if result.cut_calls and result.message.tool_calls[result.cut_calls[0]].arguments:
            return n
    raise AssertionError("the steered output never reaches a call's arguments")


def test_a_call_cut_by_max_tokens_is_not_a_call_and_finishes_by_length(served: Served) -> None:
    """``max_tokens`` ends the output inside the call's arguments (found from the whole answer's tokens:
    the same seed gives the same tokens): the one-shot answer has no call with broken arguments (the
    plug-in leaves it out, as the engines' own parsers do) and says ``length``; the stream, which already
    sent the call's first pieces, also ends with ``length``."""
    kind = KINDS["named"]
    whole = one_shot_answer(chat(served.server, request_body(served, kind, False, seed=7)))
    assert whole.calls, "the steered model did not call"
    cut = _tokens_into_the_arguments(served, kind, whole.token_ids)
    body = request_body(served, kind, False, seed=7, max_tokens=cut)
    one = one_shot_answer(chat(served.server, body))
    streamed = streamed_answer(chat_stream(served.server, body))
    assert one.token_ids == whole.token_ids[:cut], "the cut answer is not a prefix of the whole one"
    assert one.finish_reason == streamed.finish_reason == "length", (one.finish_reason, streamed)
    assert one.calls == [], f"a cut call came back: {one.calls}"
