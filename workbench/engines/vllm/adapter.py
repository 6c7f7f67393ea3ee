"""vLLM tool parser and reasoning parser for one exported chat format (written by ``workbench export``).

The source of a plug-in, not a workbench module: the export copies it, the workbench never imports it
(it needs vLLM).  Shipped inside a plug-in made by ``workbench export --target vllm-plugin``; the names in
capitals below are filled in by the export.  It runs in vLLM's process and imports only vLLM and the plug-in's
own vendored parser runtime (never ``workbench``).

vLLM composes the two parsers into its ``DelegatingParser``: the reasoning parser reads the output up to
the end of reasoning and hands the raw rest to the tool parser, which reads content and calls.  Both are
"engine based" streamers (``engine_based_streaming``): they parse the delta text incrementally and vLLM
asks them to flush (``finish_streaming``) when the stream ends, so text held back because it might start a
marker is never lost.

The tool parser also opts in to vLLM's structural tags (``structural_tag_model = NAME``): ``register``
registers a builder under ``NAME`` in ``vllm.tool_parsers.structural_tag_registry``, which builds each
request's ``xgrammar.StructuralTag`` from the exported spec and the request's tools with the vendored grammar
builder (``RUNTIME.tags``), so ``tool_choice="required"``, a named tool and strict tools are constrained to
the format's own call syntax.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser, ReasoningParserManager
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager
from vllm.tool_parsers.structural_tag_registry import register_vllm_structural_tag

RUNTIME = "__WORKBENCH_RUNTIME__"
NAME = "__WORKBENCH_PARSER_NAME__"

_core: Any = importlib.import_module(RUNTIME + ".serving.core")
_tags: Any = importlib.import_module(RUNTIME + ".serving.tags")
FORMAT = _core.Runtime.exported(RUNTIME)
# The format's outputs open their own reasoning block, if they reason at all: an output that does not
# reason never writes the end marker vLLM's reasoning gate waits for, so the tag must cover the whole
# output (an optional reasoning block first) and hold it from the first token.
WHOLE_OUTPUT = bool(FORMAT.has_reasoning and FORMAT.opened_for() is False)


def _enable_thinking(request: Any) -> bool:
    kwargs = getattr(request, "chat_template_kwargs", None) or {}
    return kwargs.get("enable_thinking", kwargs.get("thinking", True)) is not False


def _delta_message(deltas: Sequence[dict[str, Any]]) -> DeltaMessage | None:
    """The runtime's OpenAI delta dicts as one vLLM ``DeltaMessage`` (None when nothing grew)."""
    merged = _core.merge(deltas)
    if not merged:
        return None
    calls = [
        DeltaToolCall(
            index=call["index"],
            id=call.get("id") or (_call_id() if call["function"].get("name") else None),
            type=call.get("type"),
            function=DeltaFunctionCall(
                name=call["function"].get("name"), arguments=call["function"].get("arguments", "")
            ),
        )
        for call in merged.get("tool_calls", [])
    ]
    return DeltaMessage(
        content=merged.get("content"), reasoning=merged.get("reasoning_content"), tool_calls=calls
    )


def _keep_special_tokens(request: Any) -> Any:
    """The format's markers may be special tokens, which vLLM's detokenizer drops by default: the parsers
    must see them (end-of-turn tokens included; the parser removes those itself)."""
    if hasattr(request, "skip_special_tokens"):
        request.skip_special_tokens = False
    return request


def _call_id() -> str:
    from vllm.renderers.chat_utils import make_tool_call_id

    return str(make_tool_call_id())


def _delta_entry(
    self: Any,
    previous_text: str,
    current_text: str,
    delta_text: str,
    previous_token_ids: Sequence[int],
    current_token_ids: Sequence[int],
    delta_token_ids: Sequence[int],
    request: Any = None,
) -> DeltaMessage | None:
    """vLLM's streaming entry point, for tool calls and reasoning alike: vLLM passes the text so far, the
    token ids and (for tool calls) the request, by keyword; the workbench's streaming parsers keep their
    own state and read only the new text and the request (``_on_delta``)."""
    return self._on_delta(delta_text, request)


class WorkbenchToolParser(ToolParser):
    """Content and tool calls of the text after reasoning, read by the exported spec's parser."""

    engine_based_streaming = True
    # The model writes its native call format for required and named tool choice too, held to it by the
    # structural tag below: parse that, do not force vLLM's JSON list format on it (True would make vLLM
    # read a required / named answer as a JSON list of calls).
    supports_required_and_named = False
    # The key our builder is registered under (``register``): vLLM asks it for each request's tag (a format
    # without tool calls has no grammar and does not opt in).
    structural_tag_model = NAME if _tags.has_grammar(FORMAT.spec) else None

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self._stream: Any = None
        self._calls_off = False

    def adjust_request(self, request: Any) -> Any:
        return _keep_special_tokens(super().adjust_request(request))

    def get_structural_tag(self, request: Any, *, reasoning: bool = False, **kwargs: Any) -> Any:
        """vLLM's tag for the request (our builder, through ``get_model_structural_tag``).  For a format
        whose outputs open their own reasoning block the tag covers the whole output and the request is
        marked as holding its own reasoning grammar (``_grammar_from_parser``, as vLLM's Mistral parser
        does), so vLLM constrains from the first token instead of waiting for an end of reasoning that an
        output without reasoning never writes.  The tag lets a reasoning block come first only when the
        model may reason on this request: with thinking off on a template that controls reasoning (its
        prompt closed the block) the parsers read a block as content, and a free block under ``required``
        let a random model write reasoning until ``max_tokens`` (2 of 5 seeds in ``vllm serve``)."""
        whole = WHOLE_OUTPUT and hasattr(request, "_grammar_from_parser")
        reasons = whole and FORMAT.spec.may_reason(enable_thinking=_enable_thinking(request))
        tag = super().get_structural_tag(request, reasoning=reasoning or reasons, **kwargs)
        if tag is not None and whole:
            request._grammar_from_parser = True
        return tag

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        tools = getattr(request, "tools", None)
        content, calls = FORMAT.parse_rest(model_output, tools, enable_thinking=_enable_thinking(request))
        tool_calls = [
            ToolCall(
                **({"id": c["id"]} if c["id"] else {}),
                function=FunctionCall(name=c["name"], arguments=c["arguments"]),
            )
            for c in calls
        ]
        self.prev_tool_call_arr = [{"name": c["name"], "arguments": c["arguments"]} for c in calls]
        return ExtractedToolCallInformation(
            tools_called=bool(tool_calls), tool_calls=tool_calls, content=content or None
        )

    extract_tool_calls_streaming = _delta_entry

    def _on_delta(self, delta_text: str, request: Any) -> DeltaMessage | None:
        """``extract_tool_calls_streaming`` (see :func:`_delta_entry`)."""
        if self._stream is None:
            self._stream = _core.ContentStream(
                FORMAT, getattr(request, "tools", None), enable_thinking=_enable_thinking(request)
            )
            self._calls_off = getattr(request, "tool_choice", None) == "none"
        return self._record(self._stream.feed(delta_text))

    def finish_streaming(self) -> DeltaMessage | None:
        """The stream ended: release what was held back and close what is open.  With ``tool_choice:
        "none"`` vLLM strips the calls of every delta but not of this last one (it merges the flush as it
        is): a call's closing fragment would reach the client as a call without a name."""
        if self._stream is None:
            return None
        deltas = self._stream.finish()
        if self._calls_off:
            deltas = [{k: v for k, v in d.items() if k != "tool_calls"} for d in deltas]
        return self._record([d for d in deltas if d])

    def _record(self, deltas: list[dict[str, Any]]) -> DeltaMessage | None:
        """Keep the serving layer's view of the calls (``prev_tool_call_arr``, ``streamed_args_for_tool``)
        equal to what was streamed, so its end-of-stream check finds nothing left to send."""
        for call in _core.merge(deltas).get("tool_calls", []):
            i = call["index"]
            while len(self.prev_tool_call_arr) <= i:
                self.prev_tool_call_arr.append({"name": "", "arguments": ""})
                self.streamed_args_for_tool.append("")
            if call["function"].get("name"):
                self.prev_tool_call_arr[i]["name"] = call["function"]["name"]
            self.streamed_args_for_tool[i] += call["function"].get("arguments", "")
            self.prev_tool_call_arr[i]["arguments"] = self.streamed_args_for_tool[i]
            self.current_tool_id = i
            self.current_tool_name_sent = True
        return _delta_message(deltas)


class WorkbenchReasoningParser(ReasoningParser):
    """Reasoning of the exported format; the raw text after it goes on to the tool parser."""

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._opened: bool | None = None
        self._split: Any = None

    @property
    def reasoning_start_str(self) -> str | None:
        return FORMAT.spec.reasoning.start.strip() or None

    @property
    def reasoning_end_str(self) -> str | None:
        return FORMAT.spec.reasoning.end.strip() or None

    def _text(self, ids: Sequence[int]) -> str:
        return str(self.model_tokenizer.decode(list(ids), skip_special_tokens=False))

    def adjust_request(self, request: Any) -> Any:
        return _keep_special_tokens(super().adjust_request(request))

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        return bool(FORMAT.reasoning_ended_in(self._text(input_ids)))

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        return input_ids

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        """The prompt is still inside reasoning or says nothing: read which off its text."""
        self._opened = FORMAT.opened_for(prompt=self._text(prompt_token_ids))

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._split is not None and self._split.ended

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        opened = FORMAT.opened_for(enable_thinking=_enable_thinking(request))
        reasoning, rest = FORMAT.split(model_output, opened=opened)
        return reasoning or None, rest or None

    extract_reasoning_streaming = _delta_entry

    def _on_delta(self, delta_text: str, request: Any) -> DeltaMessage | None:
        """``extract_reasoning_streaming`` (see :func:`_delta_entry`)."""
        if self._split is None:
            # Without a prompt (vLLM saw none, or it ended outside reasoning) the one-shot rule decides
            # (``extract_reasoning``), so both paths read one output the same way.
            opened = self._opened if self._opened is not None else FORMAT.opened_for()
            self._split = _core.ReasoningSplit(FORMAT, opened=opened)
        reasoning, rest = self._split.feed(delta_text)
        if not reasoning and rest is None:
            return None
        return DeltaMessage(reasoning=reasoning or None, content=rest or None)

    def finish_streaming(self) -> DeltaMessage | None:
        """The stream ended inside the reasoning stage: the reasoning left, and the rest parsed as content
        (no tool parser runs after this)."""
        if self._split is None or self._split.ended:
            return None
        reasoning, rest = self._split.finish()
        content, _calls = FORMAT.parse_rest(rest)
        if not reasoning and not content:
            return None
        return DeltaMessage(reasoning=reasoning or None, content=content or None)


def structural_tag(
    tools: list[Any], builtin_tools: list[Any], tool_choice: str, reasoning: bool, token_suffix: str = ""
) -> Any:
    """vLLM's structural-tag builder for this format: ``tool_choice`` is ``auto``, ``required`` or
    ``forced`` (``tools`` then holds only the named tool); ``reasoning``: the tag covers the reasoning
    too (free text up to the format's end marker) instead of starting where it ended."""
    from xgrammar import StructuralTag

    del builtin_tools, token_suffix  # the format has no builtin tools; its markers carry no suffix
    return StructuralTag.from_json(_tags.tag_or_error(FORMAT.spec, tools, tool_choice, reasoning=reasoning))


def register() -> None:
    """Register both parsers and the structural-tag builder under ``NAME`` (the ``vllm.general_plugins``
    entry point calls this)."""
    register_vllm_structural_tag(NAME)(structural_tag)
    ToolParserManager.register_module(NAME, module=WorkbenchToolParser)
    ReasoningParserManager.register_module(NAME, module=WorkbenchReasoningParser)


register()
