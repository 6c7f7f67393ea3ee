"""Run a ``response_template`` through the serving engines' own code (vLLM, SGLang, transformers).

It runs inside the engines' venv (``make engines``), which holds vLLM, SGLang and a transformers that the
workbench's venv cannot share: ``python -m workbench.engines.harness.response`` (see
:mod:`workbench.engines.harness`; it imports only the harness package and the engines).  The workbench
starts it as a subprocess, once per batch, because importing ``vllm.parser`` alone takes 15-30 s.

stdin (JSON, :class:`~workbench.engines.harness.schema.ResponseRequest`)::

    {"consumers": ["vllm", "sglang", "transformers"],
     "jobs": [{"key": "...", "template": {...}, "tokenizer": "/path/to/tokenizer/folder",
               "consumers": [...] (optional: this job's own consumers),
               "cases": [{"id": "...", "output": "...", "prefix": "...", "tools": [OpenAI tools]}]}]}

stdout (JSON, :class:`~workbench.engines.harness.schema.ResponseAnswer`)::

    {"versions": {"vllm": "0.32.0", ...},
     "jobs": [{"key": "...", "consumers": {"vllm": {"accepted": true, "reason": "",
               "cases": [{"id": "...", "one_shot": MESSAGE, "streamed": MESSAGE}]}}}]}

MESSAGE is ``{"content", "reasoning_content", "tool_calls": [{"id", "name", "arguments"}]}`` with arguments
decoded from JSON when they are JSON, or ``{"error": "..."}`` when the consumer raised.  Streamed parses are
fed the output as the real tokenizer's token deltas, the way a server detokenizes them.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from workbench.engines import engine
from workbench.engines.harness.schema import ResponseRequest, from_json, to_json

Message = dict[str, Any]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _arguments(value: Any) -> Any:
    """Engines hand arguments over as JSON text; compare them as values."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _message(reasoning: str | None, content: str | None, calls: list[dict[str, Any]]) -> Message:
    return {
        "content": content or "",
        "reasoning_content": reasoning or "",
        "tool_calls": [
            {"id": c.get("id") or "", "name": c.get("name"), "arguments": _arguments(c.get("arguments"))}
            for c in calls
        ],
    }


def vllm_message(reasoning: str | None, content: str | None, calls: Any) -> Message:
    """vLLM's one-shot ``parse`` result (its ``ToolCall`` objects) as a message."""
    return _message(
        reasoning, content, [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls or []]
    )


def vllm_request(case: dict[str, Any]) -> Any:
    """The chat request vLLM's serving layer hands its parsers for one case (its tools)."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(
        model="workbench", messages=[{"role": "user", "content": "x"}], tools=case["tools"] or None
    )


def case_result(
    case: dict[str, Any], one_shot: Callable[[], Message], streamed: Callable[[], Message]
) -> dict[str, Any]:
    """One case's answer: the consumer's message one-shot and streamed (or what it raised)."""
    return {"id": case["id"], "one_shot": _guarded(one_shot), "streamed": _guarded(streamed)}


def harness_error(exc: BaseException, limit: int) -> dict[str, Any]:
    """A consumer (or a way of loading a plug-in) the harness itself failed on: not accepted, with why."""
    return {
        "accepted": False,
        "reason": f"harness error: {_first_line(exc)}",
        "trace": traceback.format_exc(limit=limit),
        "cases": [],
    }


def quiet_engines() -> None:
    """The engines log at import and per request; a harness answers on stdout only."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    logging.disable(logging.WARNING)


def _guarded(fn: Callable[[], Message]) -> Message:
    """A consumer raising on an output is a finding, reported as the case's result."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return fn()
    except Exception as exc:
        return {"error": _first_line(exc)}


class Deltas:
    """The output as a server streams it: one token at a time, text held back while a character is
    incomplete (a byte-level token can end inside a UTF-8 sequence)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def split(self, text: str) -> list[tuple[str, list[int]]]:
        ids = self.encode(text)
        out: list[tuple[str, list[int]]] = []
        sent, pending = "", []
        for i, token in enumerate(ids):
            pending.append(token)
            full = self.decode(ids[: i + 1])
            if full.endswith("\ufffd") and i + 1 < len(ids):
                continue
            out.append((full[len(sent) :], pending))
            sent, pending = full, []
        if sent != text and out:
            # Decoding does not give back the exact text (normalisation): send the exact text in one piece
            # at the end so every consumer still parses the same output.
            return [(text, ids)]
        return out


def sglang_one_shot(reasoning_parser: Any, call_parser: Any, output: str) -> Message:
    """SGLang's non-streaming path: the reasoning parser (when configured) first, the tool parser on what
    it leaves as normal text: for the built-in parsers and the exported detector alike."""
    reasoning, normal = (
        reasoning_parser.parse_non_stream(output) if reasoning_parser is not None else (None, output)
    )
    text, items = call_parser.parse_non_stream(normal or "")
    return _message(reasoning, text, [{"name": i.name, "arguments": i.parameters} for i in items])


def add_sglang_items(calls: dict[int, dict[str, Any]], items: Any) -> None:
    """Grow the streamed calls (by ``tool_index``) by SGLang's ``ToolCallItem`` s: the first item of a call
    names it, later ones carry argument fragments."""
    for item in items:
        slot = calls.setdefault(item.tool_index, {"name": "", "arguments": ""})
        slot["name"] = item.name or slot["name"]
        slot["arguments"] += item.parameters or ""


def sglang_streamed(reasoning_parser: Any, call_parser: Any, deltas: Deltas, output: str) -> Message:
    """Feed ``output`` to SGLang's parsers as token deltas (``parse_stream_chunk``, then the end of the
    stream) and assemble the streamed message, as its serving layer chains them."""
    reasoning, content = [], []
    calls: dict[int, dict[str, Any]] = {}

    def tool_text(normal: str, end: bool = False) -> None:
        text, items = call_parser.parse_stream_chunk(normal) if normal else ("", [])
        if end:
            tail, more = call_parser.parse_stream_end()
            text, items = text + (tail or ""), [*items, *more]
        content.append(text or "")
        add_sglang_items(calls, items)

    for text, _ids in deltas.split(output):
        if reasoning_parser is None:
            tool_text(text)
            continue
        r, normal = reasoning_parser.parse_stream_chunk(text)
        reasoning.append(r or "")
        tool_text(normal or "")
    if reasoning_parser is not None:
        r, normal = reasoning_parser.parse_stream_end()
        reasoning.append(r or "")
        tool_text(normal or "", end=True)
    else:
        tool_text("", end=True)
    return _message("".join(reasoning), "".join(content), [calls[i] for i in sorted(calls)])


#: A case's fresh SGLang parsers: ``() -> (reasoning parser or None, tool-call parser)``.
SGLangParsers = Callable[[], tuple[Any, Any]]


def sglang_case_results(
    cases: list[dict[str, Any]], deltas: Deltas, parsers_for: Callable[[dict[str, Any]], SGLangParsers]
) -> list[dict[str, Any]]:
    """Every case through SGLang's one-shot and streamed paths, each path from fresh parsers (SGLang's
    parsers keep per-request state): the response template's and the plug-in's detectors alike."""
    return [_sglang_case(case, deltas, parsers_for(case)) for case in cases]


def _sglang_case(case: dict[str, Any], deltas: Deltas, parsers: SGLangParsers) -> dict[str, Any]:
    output = case["output"]
    return case_result(
        case,
        lambda: sglang_one_shot(*parsers(), output),
        lambda: sglang_streamed(*parsers(), deltas, output),
    )


def vllm_streamed(
    parser: Any, deltas: Deltas, output: str, request: Any, prompt_ids: list[int] | None
) -> Message:
    """Feed ``output`` to a vLLM parser as token deltas (``parse_delta``) and assemble the streamed message:
    what vLLM's serving layer does with the deltas, for the built-in parsers and the plug-ins alike."""
    reasoning, content = [], []
    calls: dict[int, dict[str, Any]] = {}
    pieces = deltas.split(output) or [("", [])]
    for n, (text, ids) in enumerate(pieces):
        delta = parser.parse_delta(text, ids, request, prompt_ids, finished=n == len(pieces) - 1)
        if delta is None:
            continue
        reasoning.append(delta.reasoning or "")
        content.append(delta.content or "")
        for call in delta.tool_calls or []:
            slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            slot["id"] = call.id or slot["id"]
            if call.function is not None:
                slot["name"] += call.function.name or ""
                slot["arguments"] += call.function.arguments or ""
    return _message("".join(reasoning), "".join(content), [calls[i] for i in sorted(calls)])


def _load_tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


#: Per loaded tokenizer, the wrapped one vLLM's parsers get (kept with the original, so ids stay unique).
_VLLM_TOKENIZERS: dict[int, tuple[Any, Any]] = {}


def vllm_tokenizer(tokenizer: Any) -> Any:
    """``tokenizer`` as ``vllm serve`` hands it to its parsers (``get_tokenizer`` wraps it in
    ``get_cached_tokenizer``).  Unwrapped, every parser built recomputes ``get_vocab()`` (0.25 s for a 150k
    vocabulary; vLLM builds parsers per request): that was 80% of a response-template proof run."""
    from vllm.tokenizers.hf import get_cached_tokenizer

    key = id(tokenizer)
    if key not in _VLLM_TOKENIZERS:
        _VLLM_TOKENIZERS[key] = (tokenizer, get_cached_tokenizer(tokenizer))
    return _VLLM_TOKENIZERS[key][1]


# --------------------------------------------------------------------------------------------- vLLM


def run_vllm(template: dict[str, Any], tokenizer: Any, cases: list[dict[str, Any]]) -> dict[str, Any]:
    from vllm.parser.response_template import (
        ResponseTemplateParser,
        validate_response_template_for_serving,
    )

    try:
        validate_response_template_for_serving(template)
    except Exception as exc:
        return {"accepted": False, "reason": _first_line(exc), "cases": []}
    tokenizer = vllm_tokenizer(tokenizer)
    deltas = Deltas(tokenizer)
    results = []
    for case in cases:
        request = vllm_request(case)
        prompt_ids = deltas.encode(case["prefix"])

        def parser(request: Any = request, prompt_ids: list[int] = prompt_ids) -> Any:
            p = ResponseTemplateParser(
                tokenizer, request.tools, response_template=template, enable_auto_tools=True
            )
            p.set_prompt_token_ids(prompt_ids)
            return p

        def one_shot(case: dict[str, Any] = case, request: Any = request) -> Message:
            return vllm_message(*parser(request).parse(case["output"], request, enable_auto_tools=True))

        def streamed(
            case: dict[str, Any] = case, request: Any = request, prompt_ids: list[int] = prompt_ids
        ) -> Message:
            return vllm_streamed(parser(request, prompt_ids), deltas, case["output"], request, prompt_ids)

        results.append(case_result(case, one_shot, streamed))
    return {"accepted": True, "reason": "", "cases": results}


# ------------------------------------------------------------------------------------------- SGLang


def _ipython_stub() -> None:
    """``sglang/__init__`` imports ``sglang.utils``, which imports ``IPython.display`` for notebook helpers
    the parsers never call.  Without IPython installed (``--no-deps``), a stub lets the parsers import."""
    try:
        import IPython  # noqa: F401
    except ImportError:
        import types

        package, display = types.ModuleType("IPython"), types.ModuleType("IPython.display")
        display.HTML = display.display = lambda *args, **kwargs: None  # type: ignore[attr-defined]
        package.display = display  # type: ignore[attr-defined]
        sys.modules["IPython"], sys.modules["IPython.display"] = package, display


def run_sglang(template: dict[str, Any], tokenizer: Any, cases: list[dict[str, Any]]) -> dict[str, Any]:
    _ipython_stub()
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.parser.response_template import validate_response_template_for_serving

    try:
        validate_response_template_for_serving(template)
    except Exception as exc:
        return {"accepted": False, "reason": _first_line(exc), "cases": []}
    # `--tool-call-parser response_template` and `--reasoning-parser response_template` read the
    # template from the tokenizer's metadata, as a checkpoint would carry it.
    tokenizer.response_template = template
    # `--reasoning-parser response_template` goes with the tool-call parser: it also strips the markers of
    # an explicit answer region, which the tool parser alone passes through as normal text.
    has_thinking = True

    def parsers_for(case: dict[str, Any]) -> SGLangParsers:
        tools = [Tool(**t) for t in case["tools"]]
        prefix = case["prefix"]

        def parsers() -> tuple[Any, Any]:
            reasoning = (
                ReasoningParser("response_template", tokenizer=tokenizer, prefix=prefix)
                if has_thinking
                else None
            )
            calls = FunctionCallParser(tools, "response_template", tokenizer=tokenizer, prefix=prefix)
            return reasoning, calls

        return parsers

    results = sglang_case_results(cases, Deltas(tokenizer), parsers_for)
    return {"accepted": True, "reason": "", "cases": results}


# ------------------------------------------------------------------------------------- transformers


def _hf_message(parsed: dict[str, Any]) -> Message:
    def text(value: Any) -> str:
        return "".join(value) if isinstance(value, list) else (value or "")

    calls = []
    for call in parsed.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        calls.append({"id": call.get("id", ""), "name": fn.get("name"), "arguments": fn.get("arguments")})
    reasoning = parsed.get("thinking", parsed.get("reasoning_content"))
    return _message(text(reasoning), text(parsed.get("content")), calls)


def run_transformers(template: dict[str, Any], tokenizer: Any, cases: list[dict[str, Any]]) -> dict[str, Any]:
    from transformers.utils.chat_parsing import ResponseParser, parse_response

    try:
        ResponseParser(template, prefix="")
    except Exception as exc:
        return {"accepted": False, "reason": _first_line(exc), "cases": []}
    deltas = Deltas(tokenizer)
    results = []
    for case in cases:

        def one_shot(case: dict[str, Any] = case) -> Message:
            return _hf_message(
                parse_response(case["output"], template, prefix=case["prefix"], tools=case["tools"])
            )

        def streamed(case: dict[str, Any] = case) -> Message:
            stream = ResponseParser(template, prefix=case["prefix"], tools=case["tools"])
            for text, _ids in deltas.split(case["output"]):
                stream.feed(text)
            message, _events = stream.finalize()
            return _hf_message(message)

        results.append(case_result(case, one_shot, streamed))
    return {"accepted": True, "reason": "", "cases": results}


RUNNERS: dict[str, Callable[[dict[str, Any], Any, list[dict[str, Any]]], dict[str, Any]]] = {
    "vllm": run_vllm,
    "sglang": run_sglang,
    "transformers": run_transformers,
}
#: Each consumer's distribution, whose version the answer reports.
PACKAGES = {name: engine(name).distribution for name in RUNNERS}


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name, dist in PACKAGES.items():
        try:
            out[name] = version(dist)
        except PackageNotFoundError:
            if name == "vllm":
                with contextlib.suppress(PackageNotFoundError):
                    out[name] = version("vllm")
    return out


def run_job(job: dict[str, Any], consumers: list[str], tokenizers: dict[str, Any]) -> dict[str, Any]:
    """One template and its cases through every consumer; a consumer that fails to load is reported."""
    path = job["tokenizer"]
    if path not in tokenizers:
        tokenizers[path] = _load_tokenizer(path)
    out: dict[str, Any] = {"key": job.get("key", ""), "consumers": {}}
    for name in job.get("consumers") or consumers:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                out["consumers"][name] = RUNNERS[name](job["template"], tokenizers[path], job["cases"])
        except Exception as exc:
            out["consumers"][name] = harness_error(exc, limit=3)
    return out


def check() -> int:
    """``--check``: every consumer's modules import here (what ``make engines`` ends with)."""
    _ipython_stub()
    import sglang.srt.function_call.function_call_parser
    import sglang.srt.parser.reasoning_parser
    import sglang.srt.parser.response_template  # noqa: F401
    import transformers.utils.chat_parsing  # noqa: F401
    import vllm.parser.response_template  # noqa: F401

    print(json.dumps(versions()))
    return 0


#: ``(job as JSON, consumers or engines, the batch's tokenizer cache) -> the job's answer``.
JobRunner = Callable[[dict[str, Any], list[str], dict[str, Any]], dict[str, Any]]


def answer(jobs: Sequence[Any], run_job: JobRunner, names: list[str]) -> int:
    """Run a request's jobs (sharing one tokenizer cache: a batch often streams many templates with one
    tokenizer) and write the answer, ``{"versions", "jobs"}``, on stdout: the response and plug-in harness
    alike."""
    tokenizers: dict[str, Any] = {}
    jobs_answered = [run_job(to_json(job), names, tokenizers) for job in jobs]
    json.dump({"versions": versions(), "jobs": jobs_answered}, sys.stdout, ensure_ascii=False)
    return 0


def main() -> int:
    quiet_engines()
    if sys.argv[1:] == ["--check"]:
        return check()
    request = from_json(ResponseRequest, json.load(sys.stdin))
    return answer(request.jobs, run_job, request.consumers or list(RUNNERS))


if __name__ == "__main__":
    sys.exit(main())
