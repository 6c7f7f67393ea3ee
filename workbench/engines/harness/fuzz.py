"""Feed exported plug-ins hostile requests and outputs through the engines' own request models.

Run in the engines' venv as ``python -m workbench.engines.harness.fuzz`` like the plug-in harness
(:mod:`workbench.engines.harness.plugin`, whose loaders it reuses): it imports only the harness package,
and refuses every other ``workbench`` import once running, so a plug-in still loads without the workbench.
The workbench side (``tests/engines/test_plugin_never_raises.py``) draws the cases with hypothesis; this
side only executes them, so that one vLLM import serves a whole batch.

A plug-in's contract is that every method the engine calls returns: what it cannot read it logs once and
hands back as content.  So each case is built the way the engine builds it -- the raw request through
vLLM's ``ChatCompletionRequest`` / SGLang's ``Tool`` and ``ToolChoice`` models (a request those refuse never
reaches a plug-in in a server, and is counted as refused) -- and then every method the engine calls runs:
vLLM's ``adjust_request``, ``parse`` and ``parse_delta`` (token deltas, and the same tokens regrouped into
the case's random chunks); SGLang's ``get_structure_constraint``, ``parse_non_stream`` and
``parse_stream_chunk`` / ``parse_stream_end`` (token deltas and random chunks).

stdin: one JSON object per line, ``{"engine": "vllm" | "sglang", "job": {"key", "parser", "tokenizer",
"vllm": {"file"}, "sglang": {"module", "reasoning"}}, "case": {"request": {...raw OpenAI request...},
"output": "...", "groups": [2, 1, 5], "prefix": "..."}}``; stdout: one JSON answer per line.  The
workbench side keeps one process for a whole hypothesis run, so each example costs milliseconds.

The answer is ``{"accepted": true, "refused": "...", "raised": [{"stage", "error", "trace"}], "one_shot":
MESSAGE, "streamed": MESSAGE, "chunked": MESSAGE}``: ``refused`` is the engine's own request validation
("" when it took the request), ``raised`` every exception that escaped a plug-in method (the finding this
harness exists for); ``{"accepted": false, "reason"}`` when the plug-in did not load.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from workbench.engines.harness.plugin import (
    _load_module,
    _load_vllm_file,
    _prompt_opens_reasoning,
    refuse_workbench_imports,
)
from workbench.engines.harness.response import (
    Deltas,
    Message,
    _first_line,
    _ipython_stub,
    _load_tokenizer,
    _message,
    sglang_one_shot,
    sglang_streamed,
    vllm_streamed,
)


class Grouped(Deltas):
    """The same token deltas, regrouped into chunks of ``groups[i]`` tokens (cycled): a server may hand a
    parser several tokens at once (speculative decoding, a slow client)."""

    def __init__(self, tokenizer: Any, groups: list[int]) -> None:
        super().__init__(tokenizer)
        self.groups = [max(1, int(g)) for g in groups] or [1]

    def split(self, text: str) -> list[tuple[str, list[int]]]:
        pieces = super().split(text)
        out: list[tuple[str, list[int]]] = []
        at = n = 0
        while at < len(pieces):
            size = self.groups[n % len(self.groups)]
            chunk = pieces[at : at + size]
            out.append(("".join(t for t, _ in chunk), [i for _, ids in chunk for i in ids]))
            at, n = at + size, n + 1
        return out


#: A request can still be refused before any output is parsed, while the engine builds its constraint
#: (vLLM's ``adjust_request``, SGLang's ``get_structure_constraint``): our grammar builder cannot read a
#: tool schema under ``tool_choice="required"`` ("structural tag: ..."), or the engine's own tag code finds
#: the request contradictory (xgrammar: "Forced tool choice must resolve to exactly one tool" for two tools
#: of one name).  A ``ValueError`` there is what both engines' serving layers answer with HTTP 400 and its
#: message: the one exception allowed, and only at that stage.


#: How a refusal by the plug-in itself begins (the request reached it): the rest are the engine's own.
BY_THE_PLUGIN = "by the plug-in (HTTP 400)"


class Probe:
    """Runs one case's stages, recording every exception that escapes a plug-in method."""

    def __init__(self) -> None:
        self.raised: list[dict[str, str]] = []
        self.refused = ""

    def run(self, stage: str, fn: Callable[[], Any], *, may_refuse: bool = False) -> Any:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                return fn()
        except ValueError as exc:
            if may_refuse:
                self.refused = f"{stage}: {_first_line(exc)}"
                return None
            self.raised.append(
                {"stage": stage, "error": _first_line(exc), "trace": traceback.format_exc(limit=6)}
            )
            return None
        except Exception as exc:
            self.raised.append(
                {"stage": stage, "error": _first_line(exc), "trace": traceback.format_exc(limit=6)}
            )
            return None


def _vllm_calls(calls: Any) -> list[dict[str, Any]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls or []]


def vllm_parser(job: dict[str, Any], tokenizer: Any) -> Any:
    """The plug-in file loaded as ``--tool-parser-plugin FILE --reasoning-parser-plugin FILE`` does, and
    the parser class vLLM's serving layer composes from it (``ParserManager.get_parser``)."""
    from vllm.parser.parser_manager import ParserManager

    missing = _load_vllm_file(job["parser"], job["vllm"]["file"])
    if missing:
        raise LookupError(missing)
    return ParserManager.get_parser(
        tool_parser_name=job["parser"], reasoning_parser_name=job["parser"], enable_auto_tools=True,
        tokenizer=tokenizer,
    )  # fmt: skip


def vllm_case(parser_cls: Any, tokenizer: Any, case: dict[str, Any]) -> dict[str, Any]:
    """One case through ``ChatCompletionRequest`` and every method vLLM calls on the plug-in."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    try:
        request = ChatCompletionRequest.model_validate(case["request"])
    except Exception as exc:  # pydantic's and vLLM's own request checks (VLLMValidationError): a 400
        return {"refused": _first_line(exc), "raised": []}
    deltas = Deltas(tokenizer)
    probe = Probe()
    # No prompt for the streamed path: vLLM hands a plug-in's composed parser no prompt when it parses a
    # whole answer (``set_prompt_token_ids`` is not passed on to it), so only without one do both paths
    # know the same (the prompt-driven start is proven by tests/engines/test_engine_plugins.py).
    prompt_ids = None
    adjusted = probe.run(
        "adjust_request",
        lambda: parser_cls(tokenizer, request.tools).adjust_request(request),
        may_refuse=True,
    )
    if probe.refused:
        return {"refused": f"{BY_THE_PLUGIN} {probe.refused}", "raised": probe.raised}
    request = adjusted if adjusted is not None else request

    def one_shot() -> Message:
        parser = parser_cls(tokenizer, request.tools)
        reasoning, content, calls = parser.parse(case["output"], request, enable_auto_tools=True)
        return _message(reasoning, content, _vllm_calls(calls))

    def streamed(split: Deltas) -> Message:
        return vllm_streamed(parser_cls(tokenizer, request.tools), split, case["output"], request, prompt_ids)

    return {
        "refused": "",
        "one_shot": probe.run("parse", one_shot),
        "streamed": probe.run("parse_delta", lambda: streamed(deltas)),
        "chunked": probe.run("parse_delta (chunks)", lambda: streamed(Grouped(tokenizer, case["groups"]))),
        "raised": probe.raised,
    }


def sglang_module(job: dict[str, Any], tokenizer: Any) -> str:
    """The detector module registered as its launcher does; the parser name SGLang now knows."""
    _ipython_stub()
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    name = job["parser"]
    _load_module(job["sglang"]["module"]).register()
    if name not in FunctionCallParser.ToolCallParserEnum or name not in ReasoningParser.DetectorMap:
        raise LookupError(f"{name!r} not registered with SGLang")
    return str(name)


def sglang_case(job: dict[str, Any], tokenizer: Any, case: dict[str, Any]) -> dict[str, Any]:
    """One case through SGLang's ``Tool`` / ``ToolChoice`` models, then its own ``FunctionCallParser`` and
    ``ReasoningParser`` (what its chat serving builds per request) over the registered detector."""
    from sglang.srt.entrypoints.openai.protocol import Tool, ToolChoice
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    name, raw = job["parser"], case["request"]
    try:
        tools = [Tool.model_validate(t) for t in raw.get("tools") or []]
        choice = raw.get("tool_choice", "auto")
        choice = choice if isinstance(choice, str) else ToolChoice.model_validate(choice)
    except Exception as exc:  # SGLang's request models refuse it: a 400, never a plug-in call
        return {"refused": _first_line(exc), "raised": []}
    probe = Probe()
    opened = _prompt_opens_reasoning(case.get("prefix", ""), *(job["sglang"].get("reasoning") or ["", ""]))
    parallel = bool(raw.get("parallel_tool_calls", True))

    def parsers() -> tuple[Any, Any]:
        reasoning = ReasoningParser(name, force_reasoning=opened, tool_call_parser_active=True)
        return reasoning, FunctionCallParser(tools, name)

    def constraint(thinking: bool) -> Any:
        parser = FunctionCallParser(tools, name)
        return parser.get_structure_constraint(choice, parallel_tool_calls=parallel, thinking_mode=thinking)

    for thinking in (False, True):
        stage = f"get_structure_constraint(thinking_mode={thinking})"
        probe.run(stage, functools.partial(constraint, thinking), may_refuse=True)
    if probe.refused:
        return {"refused": f"{BY_THE_PLUGIN} {probe.refused}", "raised": probe.raised}
    output = case["output"]
    deltas = Deltas(tokenizer)
    return {
        "refused": "",
        "one_shot": probe.run("parse_non_stream", lambda: sglang_one_shot(*parsers(), output)),
        "streamed": probe.run("parse_stream_chunk", lambda: sglang_streamed(*parsers(), deltas, output)),
        "chunked": probe.run(
            "parse_stream_chunk (chunks)",
            lambda: sglang_streamed(*parsers(), Grouped(tokenizer, case["groups"]), output),
        ),
        "raised": probe.raised,
    }


class Session:
    """Loaded tokenizers and plug-ins, kept across the lines of one run (vLLM imports once)."""

    def __init__(self) -> None:
        self.tokenizers: dict[str, Any] = {}
        self.loaded: dict[tuple[str, str], Any] = {}

    def answer(self, line: dict[str, Any]) -> dict[str, Any]:
        job, engine, case = line["job"], line["engine"], line["case"]
        path = job["tokenizer"]
        if path not in self.tokenizers:
            self.tokenizers[path] = _load_tokenizer(path)
        tokenizer = self.tokenizers[path]
        key = (engine, job["key"])
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                if key not in self.loaded:
                    load = vllm_parser if engine == "vllm" else sglang_module
                    self.loaded[key] = load(job, tokenizer)
                if engine == "vllm":
                    return {"accepted": True, **vllm_case(self.loaded[key], tokenizer, case)}
                return {"accepted": True, **sglang_case(job, tokenizer, case)}
        except Exception as exc:  # the harness itself, or loading the plug-in: not a case finding
            return {"accepted": False, "reason": _first_line(exc), "trace": traceback.format_exc(limit=6)}


def main() -> int:
    """One JSON request per stdin line, one JSON answer per stdout line, until stdin closes."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    logging.disable(logging.CRITICAL)  # the plug-ins log what they cannot read: expected here, by design
    refuse_workbench_imports()
    session = Session()
    out = sys.stdout
    sys.stdout = sys.stderr  # stray prints of the engines never corrupt the answers
    for raw in sys.stdin:
        if raw.strip():
            out.write(json.dumps(session.answer(json.loads(raw)), ensure_ascii=False) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
