"""Run round-trip outputs through EVERY built-in tool-call and reasoning parser of one serving engine.

Standalone, like ``engine_harness.py`` (whose stream splitter and message shape it reuses): it runs inside
the engines' venv and must not import ``workbench``.  One subprocess per engine, because importing vLLM
takes 15-30 s; ``workbench recommend`` compares the messages with the expected ones.

stdin (JSON)::

    {"engine": "vllm" | "sglang",
     "jobs": [{"key": "...", "tokenizer": "/path/to/tokenizer/folder",
               "cases": [{"id", "output", "prefix", "tools": [OpenAI tools], "content_input"}]}]}

stdout (JSON)::

    {"engine": "vllm", "version": "0.32.0", "jobs": [{"key": "...",
     "reasoning": {NAME: {"error": "..."} | {"cases": [{"id", "one_shot": R, "streamed": R}]}},
     "tools": {NAME: {"error": "..."} | {"cases": [{"id", "one_shot": MESSAGE, "streamed": MESSAGE}]}}}]}

R is ``{"reasoning_content", "content"}`` (or ``{"error"}``).  Tool parsers read what the case's expected
reasoning leaves (``content_input`` in the case, given by the caller): serving runs the reasoning parser
first and hands the tool parser the rest, and the two are recommended separately.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine_harness as base  # the sibling harness: Deltas, messages, versions

Message = dict[str, Any]


def _record(case_id: str, one_shot: Callable[[], Message], streamed: Callable[[], Message]) -> Message:
    return {"id": case_id, "one_shot": base._guarded(one_shot), "streamed": base._guarded(streamed)}


def _names(registered: Any, only: list[str] | None) -> list[str]:
    """Every registered parser, or those of ``only`` that are registered (tests keep their run short)."""
    return sorted(n for n in registered if only is None or n in only)


def _reasoning(reasoning: str | None, content: str | None) -> Message:
    return {"reasoning_content": reasoning or "", "content": content or ""}


class CachedDeltas(base.Deltas):
    """Token deltas computed once per text: every parser streams the same outputs."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(tokenizer)
        self.cache: dict[str, list[tuple[str, list[int]]]] = {}

    def split(self, text: str) -> list[tuple[str, list[int]]]:
        if text not in self.cache:
            self.cache[text] = super().split(text)
        return self.cache[text]


# --------------------------------------------------------------------------------------------- vLLM
def vllm_parsers(tokenizer: Any, cases: list[dict[str, Any]], only: Any = None) -> dict[str, Any]:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    deltas = CachedDeltas(tokenizer)
    requests = {
        c["id"]: ChatCompletionRequest(
            model="workbench", messages=[{"role": "user", "content": "x"}], tools=c["tools"] or None
        )
        for c in cases
    }
    reasoning: dict[str, Any] = {}
    for name in _names(ReasoningParserManager.list_registered(), only):
        if name == "hf":
            continue  # reads a response_template: `--target response-template` covers it
        try:
            cls = ReasoningParserManager.get_reasoning_parser(name)
            cls(tokenizer)
        except Exception as exc:
            reasoning[name] = {"error": base._first_line(exc)}
            continue
        out = []
        for case in cases:
            request = requests[case["id"]]

            def one_shot(case: dict[str, Any] = case, request: Any = request, cls: Any = cls) -> Message:
                return _reasoning(*cls(tokenizer).extract_reasoning(case["output"], request))

            def streamed(case: dict[str, Any] = case, cls: Any = cls) -> Message:
                parser = cls(tokenizer)
                prev_text, prev_ids = "", list[int]()
                r, c = [], []
                for text, ids in deltas.split(case["output"]):
                    cur_text, cur_ids = prev_text + text, prev_ids + ids
                    d = parser.extract_reasoning_streaming(prev_text, cur_text, text, prev_ids, cur_ids, ids)
                    if d is not None:
                        r.append(getattr(d, "reasoning", None) or "")
                        c.append(d.content or "")
                    prev_text, prev_ids = cur_text, cur_ids
                return _reasoning("".join(r), "".join(c))

            out.append(_record(case["id"], one_shot, streamed))
        reasoning[name] = {"cases": out}
    tools: dict[str, Any] = {}
    for name in _names(ToolParserManager.list_registered(), only):
        if name == "hf":
            continue
        try:
            cls = ToolParserManager.get_tool_parser(name)
            cls(tokenizer)
        except Exception as exc:
            tools[name] = {"error": base._first_line(exc)}
            continue
        out = []
        for case in cases:
            request = requests[case["id"]]
            text_in = case.get("content_input", case["output"])

            def tool_one_shot(text_in: str = text_in, request: Any = request, cls: Any = cls) -> Message:
                info = cls(tokenizer, request.tools).extract_tool_calls(text_in, request)
                calls = (
                    [
                        {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                        for c in (info.tool_calls or [])
                    ]
                    if info.tools_called
                    else []
                )
                return base._message(None, info.content, calls)

            def tool_streamed(text_in: str = text_in, request: Any = request, cls: Any = cls) -> Message:
                parser = cls(tokenizer, request.tools)
                prev_text, prev_ids = "", list[int]()
                content: list[str] = []
                calls: dict[int, dict[str, Any]] = {}
                for text, ids in deltas.split(text_in):
                    cur_text, cur_ids = prev_text + text, prev_ids + ids
                    d = parser.extract_tool_calls_streaming(
                        prev_text, cur_text, text, prev_ids, cur_ids, ids, request
                    )
                    if d is not None:
                        content.append(d.content or "")
                        for call in d.tool_calls or []:
                            slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                            slot["id"] = call.id or slot["id"]
                            if call.function is not None:
                                slot["name"] += call.function.name or ""
                                slot["arguments"] += call.function.arguments or ""
                    prev_text, prev_ids = cur_text, cur_ids
                return base._message(None, "".join(content), [calls[i] for i in sorted(calls)])

            out.append(_record(case["id"], tool_one_shot, tool_streamed))
        tools[name] = {"cases": out}
    return {"reasoning": reasoning, "tools": tools}


# ------------------------------------------------------------------------------------------- SGLang
def sglang_parsers(tokenizer: Any, cases: list[dict[str, Any]], only: Any = None) -> dict[str, Any]:
    base._ipython_stub()
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    deltas = CachedDeltas(tokenizer)
    reasoning: dict[str, Any] = {}
    for name in _names(ReasoningParser.DetectorMap, only):
        if name == "response_template":
            continue
        try:
            ReasoningParser(name, stream_reasoning=True, tokenizer=tokenizer)
        except Exception as exc:
            reasoning[name] = {"error": base._first_line(exc)}
            continue
        out = []
        for case in cases:

            def one_shot(case: dict[str, Any] = case, name: str = name) -> Message:
                parser = ReasoningParser(name, stream_reasoning=True, tokenizer=tokenizer)
                return _reasoning(*parser.parse_non_stream(case["output"]))

            def streamed(case: dict[str, Any] = case, name: str = name) -> Message:
                parser = ReasoningParser(name, stream_reasoning=True, tokenizer=tokenizer)
                r, c = [], []
                for text, _ids in deltas.split(case["output"]):
                    got_r, got_c = parser.parse_stream_chunk(text)
                    r.append(got_r or "")
                    c.append(got_c or "")
                got_r, got_c = parser.parse_stream_end()
                return _reasoning("".join(r) + (got_r or ""), "".join(c) + (got_c or ""))

            out.append(_record(case["id"], one_shot, streamed))
        reasoning[name] = {"cases": out}
    tools_out: dict[str, Any] = {}
    for name in _names(FunctionCallParser.ToolCallParserEnum, only):
        if name == "response_template":
            continue
        try:
            first = [Tool(**t) for t in cases[0]["tools"]] if cases else []
            FunctionCallParser(first, name, tokenizer=tokenizer)
        except Exception as exc:
            tools_out[name] = {"error": base._first_line(exc)}
            continue
        out = []
        for case in cases:
            tools = [Tool(**t) for t in case["tools"]]
            text_in = case.get("content_input", case["output"])

            def tool_one_shot(text_in: str = text_in, tools: list[Any] = tools, name: str = name) -> Message:
                parser = FunctionCallParser(tools, name, tokenizer=tokenizer)
                text, items = parser.parse_non_stream(text_in)
                return base._message(None, text, [{"name": i.name, "arguments": i.parameters} for i in items])

            def tool_streamed(text_in: str = text_in, tools: list[Any] = tools, name: str = name) -> Message:
                parser = FunctionCallParser(tools, name, tokenizer=tokenizer)
                content: list[str] = []
                calls: dict[int, dict[str, Any]] = {}

                def take(text: str, items: list[Any]) -> None:
                    content.append(text or "")
                    for item in items:
                        slot = calls.setdefault(item.tool_index, {"name": "", "arguments": ""})
                        slot["name"] = item.name or slot["name"]
                        slot["arguments"] += item.parameters or ""

                for text, _ids in deltas.split(text_in):
                    take(*parser.parse_stream_chunk(text))
                take(*parser.parse_stream_end())
                return base._message(None, "".join(content), [calls[i] for i in sorted(calls)])

            out.append(_record(case["id"], tool_one_shot, tool_streamed))
        tools_out[name] = {"cases": out}
    return {"reasoning": reasoning, "tools": tools_out}


RUNNERS = {"vllm": vllm_parsers, "sglang": sglang_parsers}


def main() -> int:
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    logging.disable(logging.WARNING)
    request = json.load(sys.stdin)
    engine = request["engine"]
    tokenizers: dict[str, Any] = {}
    jobs = []
    for job in request["jobs"]:
        path = job["tokenizer"]
        if path not in tokenizers:
            tokenizers[path] = base._load_tokenizer(path)
        with contextlib.redirect_stdout(io.StringIO()):
            result = RUNNERS[engine](tokenizers[path], job["cases"], request.get("only"))
        jobs.append({"key": job["key"], **result})
    answer = {"engine": engine, "version": base.versions().get(engine, "?"), "jobs": jobs}
    json.dump(answer, sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
