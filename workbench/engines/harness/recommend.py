"""Run round-trip outputs through EVERY built-in tool-call and reasoning parser of one serving engine.

Like :mod:`.response` (whose stream splitter and message shape it reuses) it runs inside the engines' venv:
``python -m workbench.engines.harness.recommend``.  One subprocess per engine, because importing vLLM takes
15-30 s; ``workbench recommend`` compares the messages with the expected ones.

stdin (JSON, :class:`~workbench.engines.harness.schema.RecommendRequest`)::

    {"engine": "vllm" | "sglang",
     "only": [NAME, ...] (optional: run only these parsers),
     "jobs": [{"key": "...", "tokenizer": "/path/to/tokenizer/folder",
               "special_tokens": [...] (the template's; added to the tokenizer when it lacks them),
               harmony: true for a gpt_oss model (served through the engines' Harmony paths),
               "only": [...] (optional: this job's own parsers),
               "cases": [{"id", "output", "prefix", "tools": [OpenAI tools], "content_input"}]}]}

stdout (JSON, :class:`~workbench.engines.harness.schema.RecommendAnswer`)::

    {"engine": "vllm", "version": "0.32.0", "jobs": [{"key": "...", "tokenizer_notes": [...],
     "reasoning": {NAME: {"error": "..."} | {"cases": [{"id", "one_shot": R, "streamed": R}]}},
     "tools": {NAME: {"error": "..."} | {"cases": [{"id", "one_shot": MESSAGE, "streamed": MESSAGE}]}}}]}

R is ``{"reasoning_content", "content"}`` (or ``{"error"}``).  Tool parsers read what the case's expected
reasoning leaves (``content_input`` in the case, given by the caller): serving runs the reasoning parser
first and hands the tool parser the rest, and the two are recommended separately.  A Harmony job is the
exception: its tool parsers read the whole output, through the path each engine's serving takes for a
``gpt_oss`` model (vLLM: ``HarmonyParser`` on token ids; SGLang: the ``gpt-oss`` reasoning parser first).

vLLM tool parsers run as vLLM's chat serving runs them: the ``Parser`` that ``ParserManager.get_parser``
composes, ``parse`` one-shot and ``parse_delta`` per token delta
(:func:`workbench.engines.harness.response.vllm_streamed`).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

from workbench.engines.harness import response as base  # Deltas, messages, versions
from workbench.engines.harness.schema import RecommendRequest, from_json, to_json

Message = dict[str, Any]


def _record(case_id: str, one_shot: Callable[[], Message], streamed: Callable[[], Message]) -> Message:
    return {"id": case_id, "one_shot": base._guarded(one_shot), "streamed": base._guarded(streamed)}


def _names(registered: Any, only: list[str] | None) -> list[str]:
    """Every registered parser, or those of ``only`` that are registered (tests keep their run short)."""
    return sorted(n for n in registered if only is None or n in only)


def _loaded(
    registered: Any, only: list[str] | None, skip: str, load: Callable[[str], Any], failed: dict[str, Any]
) -> Iterator[tuple[str, Any]]:
    """Each parser of :func:`_names` but ``skip`` (the engine's response-template parser) with what ``load``
    made of it; one that raises while loading is answered in ``failed`` with its error, and left out."""
    for name in _names(registered, only):
        if name == skip:
            continue
        try:
            loaded = load(name)
        except Exception as exc:
            failed[name] = {"error": base._first_line(exc)}
            continue
        yield name, loaded


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
def vllm_serving_parser(name: str, tokenizer: Any, harmony: bool) -> Any:
    """The parser class vLLM's chat serving builds for ``--tool-call-parser NAME --enable-auto-tool-choice``
    (``OpenAIServingChat.__init__`` -> ``ParserManager.get_parser``): since 0.32 serving never calls a tool
    parser's ``extract_tool_calls*`` itself but a composed ``Parser``'s ``parse`` / ``parse_delta``, and a
    ``gpt_oss`` model (``is_harmony``) always gets ``HarmonyParser``, which reads the output's token ids."""
    from vllm.parser.parser_manager import ParserManager

    return ParserManager.get_parser(
        tool_parser_name=name, enable_auto_tools=True, is_harmony=harmony, tokenizer=tokenizer
    )


def vllm_parsers(
    tokenizer: Any, cases: list[dict[str, Any]], only: Any = None, harmony: bool = False
) -> dict[str, Any]:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    tokenizer = base.vllm_tokenizer(tokenizer)  # what serving hands the parsers
    deltas = CachedDeltas(tokenizer)
    requests = {
        c["id"]: ChatCompletionRequest(
            model="workbench", messages=[{"role": "user", "content": "x"}], tools=c["tools"] or None
        )
        for c in cases
    }
    reasoning: dict[str, Any] = {}

    def reasoner(name: str) -> Any:
        cls = ReasoningParserManager.get_reasoning_parser(name)
        cls(tokenizer)
        return cls

    # `hf` reads a response_template: `--target response-template` covers it.
    for name, cls in _loaded(ReasoningParserManager.list_registered(), only, "hf", reasoner, reasoning):
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

    def serving_parser(name: str) -> Any:
        return vllm_serving_parser(name, tokenizer, harmony)

    for name, parser_cls in _loaded(ToolParserManager.list_registered(), only, "hf", serving_parser, tools):
        out = []
        for case in cases:
            request = requests[case["id"]]
            # a Harmony model's serving parser reads the whole output (its own channels); others read what
            # follows the reasoning, as they would behind the family's reasoning parser
            text_in = case["output"] if harmony else case.get("content_input", case["output"])
            prompt_ids = deltas.encode(case.get("prefix", ""))

            def make(
                request: Any = request, prompt_ids: list[int] = prompt_ids, cls: Any = parser_cls
            ) -> Any:
                parser = cls(tokenizer, request.tools)
                parser.set_prompt_token_ids(prompt_ids)
                return parser

            def tool_one_shot(text_in: str = text_in, request: Any = request, make: Any = make) -> Message:
                _r, content, calls = make().parse(
                    text_in, request, enable_auto_tools=True, model_output_token_ids=deltas.encode(text_in)
                )
                found = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls or []]
                return base._message(None, content, found)

            def tool_streamed(
                text_in: str = text_in,
                request: Any = request,
                prompt_ids: list[int] = prompt_ids,
                make: Any = make,
            ) -> Message:
                got = base.vllm_streamed(make(), deltas, text_in, request, prompt_ids)
                return {**got, "reasoning_content": ""}

            out.append(_record(case["id"], tool_one_shot, tool_streamed))
        tools[name] = {"cases": out}
    return {"reasoning": reasoning, "tools": tools}


# ------------------------------------------------------------------------------------------- SGLang
def sglang_parsers(
    tokenizer: Any, cases: list[dict[str, Any]], only: Any = None, harmony: bool = False
) -> dict[str, Any]:
    base._ipython_stub()
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    deltas = CachedDeltas(tokenizer)
    reasoning: dict[str, Any] = {}

    def reasoner(name: str) -> Any:
        return ReasoningParser(name, stream_reasoning=True, tokenizer=tokenizer)

    for name, _parser in _loaded(ReasoningParser.DetectorMap, only, "response_template", reasoner, reasoning):
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

    def call_parser(name: str) -> Any:
        first = [Tool(**t) for t in cases[0]["tools"]] if cases else []
        return FunctionCallParser(first, name, tokenizer=tokenizer)

    registered = FunctionCallParser.ToolCallParserEnum
    for name, _parser in _loaded(registered, only, "response_template", call_parser, tools_out):
        out = []
        for case in cases:
            tools = [Tool(**t) for t in case["tools"]]
            text_in = case["output"] if harmony else case.get("content_input", case["output"])

            def tool_one_shot(text_in: str = text_in, tools: list[Any] = tools, name: str = name) -> Message:
                parser = FunctionCallParser(tools, name, tokenizer=tokenizer)
                text = _sglang_harmony(tokenizer).parse_non_stream(text_in)[1] or "" if harmony else text_in
                text, items = parser.parse_non_stream(text)
                return base._message(None, text, [{"name": i.name, "arguments": i.parameters} for i in items])

            def tool_streamed(text_in: str = text_in, tools: list[Any] = tools, name: str = name) -> Message:
                parser = FunctionCallParser(tools, name, tokenizer=tokenizer)
                before = _sglang_harmony(tokenizer) if harmony else None
                content: list[str] = []
                calls: dict[int, dict[str, Any]] = {}

                def take(text: str, items: list[Any]) -> None:
                    content.append(text or "")
                    base.add_sglang_items(calls, items)

                for text, _ids in deltas.split(text_in):
                    normal = before.parse_stream_chunk(text)[1] or "" if before is not None else text
                    if normal:
                        take(*parser.parse_stream_chunk(normal))
                if before is not None:
                    normal = before.parse_stream_end()[1] or ""
                    if normal:
                        take(*parser.parse_stream_chunk(normal))
                take(*parser.parse_stream_end())
                return base._message(None, "".join(content), [calls[i] for i in sorted(calls)])

            out.append(_record(case["id"], tool_one_shot, tool_streamed))
        tools_out[name] = {"cases": out}
    return {"reasoning": reasoning, "tools": tools_out}


def _sglang_harmony(tokenizer: Any) -> Any:
    """What SGLang's chat serving puts in front of the tool parser for a ``gpt_oss`` model: the documented
    ``--reasoning-parser gpt-oss`` (``serving_chat`` keeps the special tokens for it, ``is_gpt_oss``).  Its
    normal text carries the final channel's content and each tool call's raw Harmony text, which the
    ``gpt-oss`` tool detector reads; fed the raw output instead, the detector sees channel headers as
    content."""
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    return ReasoningParser("gpt-oss", stream_reasoning=True, tokenizer=tokenizer)


RUNNERS = {"vllm": vllm_parsers, "sglang": sglang_parsers}

# Text every byte-level tokenizer must give back unchanged; a tokenizer class that rebuilds the pipeline
# (transformers 5's ``LlamaTokenizer`` for DeepSeek-V3's ``"tokenizer_class": "LlamaTokenizerFast"`` puts
# a Metaspace pre-tokenizer in front of a byte-level BPE) drops the spaces, so streaming falls back to a
# single delta and token-id-driven parsers see nothing.
PROBE = 'Let me check the weather: {"city": "Paris"}\n'


def load_tokenizer(path: str, special: list[str]) -> tuple[Any, list[str]]:
    """The tokenizer the output is streamed with, and notes on what was done to it.

    ``AutoTokenizer`` first, as vLLM and SGLang load it; if it cannot give ``PROBE`` back, the folder's
    ``tokenizer.json`` as shipped (``PreTrainedTokenizerFast``), which is what the checkpoint's own config
    selects at serving time.  ``special``: the template's special-token spellings; one the tokenizer lacks
    is added as a single special token (a stand-in tokenizer for a family whose own one is not at hand
    would otherwise split it into pieces, which no parser keyed on that token sees)."""
    notes: list[str] = []
    tokenizer = base._load_tokenizer(path)
    if base.Deltas(tokenizer).decode(base.Deltas(tokenizer).encode(PROBE)) != PROBE:
        from transformers import PreTrainedTokenizerFast

        shipped = PreTrainedTokenizerFast.from_pretrained(path)
        if base.Deltas(shipped).decode(base.Deltas(shipped).encode(PROBE)) == PROBE:
            notes.append(
                f"{type(tokenizer).__name__} does not decode back what it encodes; "
                "used tokenizer.json as shipped (PreTrainedTokenizerFast)"
            )
            tokenizer = shipped
    vocab = tokenizer.get_vocab()
    missing = [t for t in dict.fromkeys(special) if t not in vocab]
    if missing:
        tokenizer.add_tokens(missing, special_tokens=True)
        notes.append(f"added the template's special tokens {', '.join(missing)}")
    return tokenizer, notes


def main() -> int:
    base.quiet_engines()
    request = from_json(RecommendRequest, json.load(sys.stdin))
    engine = request.engine
    jobs = []
    tokenizers: dict[tuple[str, ...], tuple[Any, list[str]]] = {}
    for job in request.jobs:
        key = (job.tokenizer, *job.special_tokens)
        if key not in tokenizers:
            tokenizers[key] = load_tokenizer(key[0], list(key[1:]))
        tokenizer, notes = tokenizers[key]
        with contextlib.redirect_stdout(io.StringIO()):
            only = job.only if job.only is not None else request.only  # a job's own: its own candidates
            cases = [to_json(c) for c in job.cases]
            result = RUNNERS[engine](tokenizer, cases, only, job.harmony)
        jobs.append({"key": job.key, "tokenizer_notes": notes, **result})
    answer = {"engine": engine, "version": base.versions().get(engine, "?"), "jobs": jobs}
    json.dump(answer, sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
