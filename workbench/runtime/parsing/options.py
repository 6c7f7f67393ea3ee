"""Parse options (request switches and policies) and the parse result (docs/INTERFACES.md).

Where serving engines genuinely disagree about what an output means (a call that never closes, the text
after a call block, whitespace before a call, an untyped tagged value), the disagreement is a named *policy*
here rather than a special case in a parser.  The workbench's own defaults follow issue 3 (truncated streams
keep what was already sent, with a diagnostic; values are typed by the tool's JSON schema only); which
policies one engine follows is that engine's fact (``workbench/engines/<name>/``), and
:func:`workbench.engines.policies.parse_options` selects them, so a conformance run can hold each engine's
vectors to that engine's rules.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from workbench.runtime.chat import Message
from workbench.runtime.events import Diagnostic
from workbench.runtime.spec import START_STAGES

#: Allowed values of each policy field (validated in ``__post_init__``).
POLICY_VALUES: dict[str, tuple[str, ...]] = {
    "untyped_values": ("string", "json"),
    "unclosed_calls": ("keep", "content"),
    "text_after_calls": ("content", "drop"),
    "space_before_calls": ("keep", "strip", "strip_json"),
    "value_newlines": ("strip", "markers"),
}


@dataclass(frozen=True)
class RequestSwitches:
    """What the request says about how to read its output (see :class:`ParseOptions` for each field).

    Its own class because more than the parser carries them: a conformance plan (``conformance.plan``)
    holds one case's switches before the engine's policies join them in a :class:`ParseOptions`.
    """

    enable_thinking: bool = True
    thinking_opened: bool | None = None
    parallel_tool_calls: bool = True
    extract_reasoning: bool = True
    parse_tools: bool = True
    exclusive_tool_calls: bool = False

    def switches(self) -> dict[str, Any]:
        """The switches alone, as keyword arguments of :class:`ParseOptions`."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(RequestSwitches)}


@dataclass(frozen=True)
class ParseOptions(RequestSwitches):
    """How one model output is to be read.

    Request switches:
        enable_thinking: the request's thinking switch.  Off, a template-controlled reasoning block
            (forced-open / forced-closed modes, or any mode when the template has a thinking toggle) is not
            expected: reasoning tags stay in the content verbatim.
        thinking_opened: True when the prompt already opened a reasoning block, so the output starts inside
            it; None takes it from ``spec.prompt.thinking_opened`` / the reasoning mode.
        parallel_tool_calls: the request allowed several calls; more are still parsed, with a diagnostic.
        extract_reasoning: False is llama.cpp's ``reasoning_format: none``: reasoning text, tags included,
            stays in ``content`` verbatim.
        parse_tools: False leaves tool-call text in the content (a request without tools); a tool-call
            start still ends reasoning implicitly.
        exclusive_tool_calls: the DeepSeek RFC policy (§3.2.3, §3.2.5, §3.3): tool calls are parsed only
            before any non-whitespace content, and text after a call ends tool parsing for the turn.
        check_tool_names: a call to a function that is not among the request's tools is ignored (with an
            E-CALL-SCHEMA diagnostic), as SGLang does; False keeps it (vLLM).  Without tools any name goes.
        start_stage: where the prompt left the output (``FormatSpec.output_start_stage``, read off the
            rendered prompt: a generation prompt, or a ``continue_final_message`` prompt): ``reasoning``
            (inside an open block), ``answer`` (inside the open answer wrapper), ``content`` (reasoning
            already closed: reasoning tags are text), ``start``; None decides from ``thinking_opened`` and
            the spec.  It wins over ``thinking_opened`` and ``enable_thinking``.

    Policies (where engines disagree; the defaults are the workbench's own rules):
        untyped_values: a tagged argument value (``<parameter=k>5</parameter>``) whose parameter has no
            schema type (no tools in the request, or a parameter the schema does not declare): ``"string"``
            keeps the model's text as a JSON string (the issue's "values typed by the tool's schema", and
            vLLM); ``"json"`` decodes it when it is valid JSON (SGLang's ``_convert_param_value`` fallback).
        unclosed_calls: a tool call still open when the output ends: ``"keep"`` returns what was parsed,
            with an E-STREAM-TRUNCATED diagnostic (the issue's truncated-stream rule); ``"content"`` drops
            the call (diagnosed) and appends its text, verbatim from its opening marker, to the content
            (vLLM's one-shot GLM and Hermes parsers, SGLang's MiniMax detector).  Only formats whose calls
            end with a marker of their own have unclosed calls: a Llama 3 or Mistral v11 call cut off
            inside its JSON keeps the text it has under either policy (vLLM's Mistral parser does too).
        text_after_calls: non-whitespace text after the first tool call: ``"content"`` keeps it;
            ``"drop"`` leaves it out of the message (emitted as marker events, with a W-TEXT-DROPPED
            diagnostic) as vLLM's one-shot ``extract_tool_calls`` does.  Calls after it are still parsed.
        space_before_calls: whitespace between content and a tool call: ``"keep"`` leaves it in the
            content; ``"strip"`` treats it as separation; ``"strip_json"`` does so only before a
            ``json_native`` call, as SGLang's one-shot ``detect_and_parse`` does (its base detector, used
            by the Hermes, Qwen2.5, Mistral and Llama 3 formats, strips; its MiniMax detector does not).
        value_newlines: a tagged string value loses ``"strip"``: one leading and one trailing newline (the
            issue's rule, and llama.cpp's: models write them even where the template does not); or
            ``"markers"``: only the newline the markers around the value carry (vLLM keeps the rest,
            e.g. Step-3's ``return 1\n</steptml:parameter>`` is ``"return 1\n"``).

    Harmony (gpt-oss) reads channels, not text around call markers: ``unclosed_calls``,
    ``text_after_calls`` and ``space_before_calls`` do not apply to it.
    """

    check_tool_names: bool = True
    untyped_values: str = "string"
    unclosed_calls: str = "keep"
    text_after_calls: str = "content"
    space_before_calls: str = "keep"
    value_newlines: str = "strip"
    start_stage: str | None = None

    def __post_init__(self) -> None:
        if self.start_stage is not None and self.start_stage not in START_STAGES:
            raise ValueError(f"ParseOptions.start_stage must be one of {', '.join(START_STAGES)}")
        for name, allowed in POLICY_VALUES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"ParseOptions.{name} must be one of {', '.join(allowed)}; got {value!r}")


@dataclass(frozen=True)
class ParseResult:
    """The finished message and everything noticed on the way."""

    message: Message
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def to_contract(self) -> dict[str, Any]:
        """``{"content", "reasoning_content", "tool_calls": [{"id","name","arguments"}], "diagnostics"}``."""
        out = self.message.to_contract()
        out["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        return out

    @property
    def cut_calls(self) -> tuple[int, ...]:
        """Positions in ``message.tool_calls`` of calls whose arguments are not one whole JSON object: the
        output ended inside them (a ``max_tokens`` cut).  Does not change state.

        Such a call is never a call that was made: a server drops it from a one-shot answer (vLLM's
        engine-based parsers drop incomplete call markup, its JSON parsers a call whose arguments do not
        parse) and a stream that already sent its pieces ends with ``finish_reason: "length"``.
        """
        return tuple(i for i, call in enumerate(self.message.tool_calls) if not _whole_object(call.arguments))

    def without_cut_calls(self) -> ParseResult:
        """The result a one-shot answer reports: :attr:`cut_calls` left out, each with an E-STREAM-TRUNCATED
        diagnostic (pure: returns a new result)."""
        cut = set(self.cut_calls)
        if not cut:
            return self
        calls = self.message.tool_calls
        diagnostics = list(self.diagnostics) + [
            Diagnostic(
                code="E-STREAM-TRUNCATED",
                message=f"tool call {i} ({calls[i].name}) was cut off inside its arguments: left out",
                severity="warning",
            )
            for i in sorted(cut)
        ]
        kept = tuple(call for i, call in enumerate(calls) if i not in cut)
        return ParseResult(dataclasses.replace(self.message, tool_calls=kept), diagnostics)


def _whole_object(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments), dict)
    except (TypeError, ValueError):
        return False
