"""Translate a case's request options into how to run and judge it (a :class:`Plan`).

The two suites name the same ideas differently; this module is the one place that knows both vocabularies.

llama.cpp options:
- ``reasoning_format``: ``none`` leaves reasoning text in content (``extract_reasoning=False``); ``auto``
  and ``deepseek`` move it to ``reasoning_content`` (``extract_reasoning=True``).
- ``enable_thinking`` goes to the parser; what the prompt opened is left to the spec
  (``thinking_opened=None``), because llama.cpp derives it from rendering the template the same way.
- ``parallel_tool_calls``; ``partial: true`` means the input is a cut-off stream: the result is the
  partial parse of the whole input (what the deltas added up to), without finishing the stream.
- ``json_schema`` (structured output, one case) has no parser equivalent: it is recorded as ignored.

Peer options:
- ``mode: oneshot`` is judged on the finished parse; ``mode: streaming`` "as it stands after the last
  chunk", i.e. on the partial parse the deltas added up to, without a final flush (an engine's test never
  calls one).
- ``chat_template_kwargs.enable_thinking`` / ``.thinking`` and the RFC's ``thinking`` -> ``enable_thinking``.
- ``force_reasoning: true`` and the RFC's ``output_stage: REASONING_STAGE`` -> ``thinking_opened=True``
  (the prompt ended inside an open reasoning block); ``CONTENT_STAGE`` -> ``thinking_opened=False``.
- A case whose ``parser`` is a *reasoning* parser (``sglang:reasoning ...``, ``vllm:... reasoning``) or
  that sets ``reasoning: true`` tested the reasoning stage alone: reasoning is extracted and tool parsing
  is off (``parse_tools=False``), so the tool-call text that such a parser hands on stays in the content
  verbatim (a tool-call start still ends reasoning).
- Any other engine case tested the *tool* parser alone, so reasoning extraction is off (think tags stay in
  content, as the glm45 vector with ``reasoning_parser: null`` asserts).  Two exceptions extract both: the
  RFC cases name a combined reasoning + tool parser (and run under the RFC's policy,
  ``exclusive_tool_calls=True``), and Harmony's tool parsers read the channels themselves
  (:data:`TOOL_PARSER_READS_REASONING`).
- A missing toolset (``null``) still parses tool calls, with any name accepted (``tools=None``).
- Where the engines disagree about what an output means (tool names outside the request, a call that
  never closes, text after the calls, whitespace before a call, untyped tagged values; the README's
  caveats), the parser offers named policies and per-engine profiles
  (``workbench.engines.policies.parse_options(engine, streaming=...)``).  Each case runs under the profile
  of the engine its ``parser`` names (``sglang`` / ``vllm``; the RFC's own cases and anything else:
  ``workbench``; llama.cpp cases: ``llama.cpp``), in the engine's streaming variant for ``mode: streaming``
  cases.  The runner only names the engine; what each profile means is the engine's, documented there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench import engines
from workbench.conformance.cases import LLAMACPP, Case, CaseFileError
from workbench.runtime.parsing.options import RequestSwitches

FINAL = "final"
PARTIAL = "partial"

_REASONING_FORMATS = {"none": False, "auto": True, "deepseek": True}
_OUTPUT_STAGES = {"REASONING_STAGE": True, "CONTENT_STAGE": False, None: None}
# Families whose upstream *tool* parser reads the reasoning structure itself: Harmony's tool parsers walk
# the channels and never return the analysis channel as content, so reasoning extraction stays on.
TOOL_PARSER_READS_REASONING = frozenset({"gpt_oss"})


@dataclass(frozen=True)
class Plan(RequestSwitches):
    """How one case is parsed (the request's switches, and the engine profile) and judged."""

    profile: str = "workbench"  # the engine whose parsing policies apply (engines.policies)
    profile_streaming: bool = False  # the engine's streaming code path (peer ``mode: streaming``)
    point: str = FINAL  # FINAL: judge finish(); PARTIAL: judge the deltas received, no finish
    rules: str = LLAMACPP
    engine: str = ""  # an engine with vector cases or "": picks an engine-specific target when one is mapped
    ignored: tuple[str, ...] = ()

    def parse_options(self) -> dict[str, Any]:
        """The request switches for ``workbench.runtime.parsing.ParseOptions`` (the profile supplies the
        policies)."""
        return self.switches()


def plan_for(case: Case) -> Plan:
    """The plan for a case; raises :class:`CaseFileError` for option values this runner cannot read."""
    return _llamacpp_plan(case) if case.suite == LLAMACPP else _peer_plan(case)


def _llamacpp_plan(case: Case) -> Plan:
    opts = case.options
    fmt = opts.get("reasoning_format", "none")
    if fmt not in _REASONING_FORMATS:
        raise CaseFileError(f"{case.case_id}: unknown reasoning_format {fmt!r}")
    ignored = []
    if opts.get("json_schema") is not None:
        ignored.append("json_schema (structured-output request; the parser has no such option)")
    if opts.get("tool_choice", "auto") != "auto":
        ignored.append(f"tool_choice={opts.get('tool_choice')!r}")
    return Plan(
        enable_thinking=bool(opts.get("enable_thinking", True)),
        thinking_opened=None,
        extract_reasoning=_REASONING_FORMATS[fmt],
        parallel_tool_calls=bool(opts.get("parallel_tool_calls", False)),
        parse_tools=bool(case.tools),  # llama.cpp builds no tool parser for a request without tools
        profile="llama.cpp",
        point=PARTIAL if opts.get("partial") else FINAL,
        rules=LLAMACPP,
        ignored=tuple(ignored),
    )


def engine_of(case: Case) -> str:
    """The engine the case's ``parser`` field names (``sglang`` / ``vllm``; ``""``: the RFC's own cases)."""
    head = case.parser.split(":", 1)[0].strip().lower()
    return head if head in engines.names() and engines.engine(head).vector_cases else ""


def is_reasoning_parser_case(case: Case) -> bool:
    """True when the upstream test exercised a reasoning parser rather than a tool parser."""
    if case.options.get("reasoning") is True:
        return True
    engine_part = case.parser.split("(", 1)[0]
    return engine_of(case) != "" and re.search(r"\breasoning\b", engine_part) is not None


def _peer_plan(case: Case) -> Plan:
    opts = case.options
    mode = opts.get("mode", "oneshot")
    if mode not in ("oneshot", "streaming"):
        raise CaseFileError(f"{case.case_id}: unknown mode {mode!r}")
    kwargs = opts.get("chat_template_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise CaseFileError(f"{case.case_id}: chat_template_kwargs must be an object, not {kwargs!r:.40}")
    enable = True
    for key in ("enable_thinking", "thinking"):
        if isinstance(kwargs.get(key), bool):
            enable = kwargs[key]
    if isinstance(opts.get("thinking"), bool):
        enable = opts["thinking"]
    stage = opts.get("output_stage")
    if stage not in _OUTPUT_STAGES:
        raise CaseFileError(f"{case.case_id}: unknown output_stage {stage!r}")
    opened = _OUTPUT_STAGES[stage]
    if opts.get("force_reasoning") is True:
        opened = True
    reasoning_case = is_reasoning_parser_case(case)
    engine = engine_of(case)
    rfc = engine == "" and "RFC" in case.parser
    combined = engine == "" or case.group in TOOL_PARSER_READS_REASONING  # reasoning + tools in one parser
    return Plan(
        enable_thinking=enable,
        thinking_opened=opened,
        extract_reasoning=reasoning_case or combined,
        parallel_tool_calls=True,
        parse_tools=not reasoning_case,
        exclusive_tool_calls=rfc,
        profile=engine or "workbench",
        profile_streaming=mode == "streaming",
        point=PARTIAL if mode == "streaming" else FINAL,
        rules="peers",
        engine=engine,
    )
