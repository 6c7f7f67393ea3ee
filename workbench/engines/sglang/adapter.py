"""SGLang tool-call detector and reasoning detector for one exported chat format (written by ``workbench
export``).

The source of a plug-in, not a workbench module: the export copies it, the workbench never imports it
(it needs SGLang).  Shipped inside a plug-in made by ``workbench export --target sglang-plugin``; the names in
capitals below are filled in by the export.  It imports only SGLang and the plug-in's own vendored parser
runtime (never ``workbench``).  SGLang has no plug-in flag: :func:`register` adds both detectors to SGLang's
tables (``FunctionCallParser.ToolCallParserEnum``, ``ReasoningParser.DetectorMap``), which is what the
launcher next to this file does before it starts ``sglang.launch_server``.

SGLang parses in two stages, as vLLM does: the reasoning detector's normal text (the raw text after
reasoning) is what the tool-call detector reads.

Constrained calls: SGLang asks the detector for a model-native structural tag first
(``get_structural_tag``, for ``tool_choice="required"``, a named tool, and ``auto`` with a strict tool);
the detector builds it per request from the exported spec and the request's tools with the vendored
grammar builder (``RUNTIME.tags``).  ``structure_info`` (SGLang's older begin/end-per-tool scheme) is not
used: a format's call is not always one fixed begin and end around a JSON object.
"""

from __future__ import annotations

import importlib
from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector
from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

RUNTIME = "__WORKBENCH_RUNTIME__"
NAME = "__WORKBENCH_PARSER_NAME__"

_core: Any = importlib.import_module(RUNTIME + ".serving.core")
_tags: Any = importlib.import_module(RUNTIME + ".serving.tags")
FORMAT = _core.Runtime.exported(RUNTIME)


def _items(deltas: list[dict[str, Any]]) -> tuple[str, list[ToolCallItem]]:
    """The runtime's OpenAI deltas as SGLang's (normal text, call items): a call's first item carries its
    name, later ones argument fragments; ``tool_index`` is the call's index in the output."""
    text, items = [], []
    for delta in deltas:
        text.append(delta.get("content") or "")
        for call in delta.get("tool_calls") or ():
            fn = call.get("function") or {}
            items.append(
                ToolCallItem(
                    tool_index=call["index"], name=fn.get("name"), parameters=fn.get("arguments") or ""
                )
            )
    return "".join(text), items


class WorkbenchDetector(BaseFormatDetector):
    """Content and tool calls of the text after reasoning, read by the exported spec's parser."""

    def __init__(self) -> None:
        super().__init__()
        self._stream: Any = None

    def _stream_for(self, tools: Any) -> Any:
        if self._stream is None:
            self._stream = _core.ContentStream(FORMAT, tools)
        return self._stream

    def has_tool_call(self, text: str) -> bool:
        """True when the text holds anything this detector takes out (calls, wrappers, end markers): SGLang
        hands the text on unparsed otherwise."""
        content, calls = FORMAT.parse_rest(text, log=False)
        return bool(calls) or content != text

    def detect_and_parse(self, text: str, tools: Any) -> StreamingParseResult:
        content, calls = FORMAT.parse_rest(text, tools)
        items = [
            ToolCallItem(tool_index=i, name=c["name"], parameters=c["arguments"]) for i, c in enumerate(calls)
        ]
        return StreamingParseResult(normal_text=content, calls=items)

    def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
        text, items = _items(self._stream_for(tools).feed(new_text))
        self._track(items)
        return StreamingParseResult(normal_text=text, calls=items)

    def finish(self, tools: Any) -> StreamingParseResult:
        """The stream ended: release what was held back and close what is open."""
        text, items = _items(self._stream_for(tools).finish())
        self._track(items)
        return StreamingParseResult(normal_text=text, calls=items)

    def _track(self, items: list[ToolCallItem]) -> None:
        """Keep the serving layer's view of the calls equal to what was streamed: its end-of-stream check
        sends ``arguments[len(streamed):]``, so the arguments are kept as the very text streamed."""
        for item in items:
            while len(self.prev_tool_call_arr) <= item.tool_index:
                self.prev_tool_call_arr.append({"name": "", "arguments": ""})
                self.streamed_args_for_tool.append("")
            if item.name:
                self.prev_tool_call_arr[item.tool_index]["name"] = item.name
            self.streamed_args_for_tool[item.tool_index] += item.parameters
            self.prev_tool_call_arr[item.tool_index]["arguments"] = self.streamed_args_for_tool[
                item.tool_index
            ]
            self.current_tool_id = item.tool_index
            self.current_tool_name_sent = True

    @classmethod
    def parses_without_tools(cls) -> bool:
        return True

    def supports_structural_tag(self) -> bool:
        return bool(_tags.has_grammar(FORMAT.spec))  # a format without tool calls has no grammar

    def get_structural_tag(
        self,
        tools: Any = None,
        tool_choice: Any = "auto",
        thinking_mode: bool = False,
        parallel_tool_calls: bool = True,
    ) -> Any:
        """The request's structural tag: ``auto`` (free text, calls held to the format from its trigger),
        ``required`` (calls only) or a named tool (one call of it); ``thinking_mode``: the tag covers the
        reasoning too (SGLang passes False when its reasoning parser owns the reasoning)."""
        from xgrammar import StructuralTag

        fn = getattr(tool_choice, "function", None)
        choice = getattr(fn, "name", None) or (tool_choice if isinstance(tool_choice, str) else "required")
        tag = _tags.tag_or_error(
            FORMAT.spec, list(tools or []), choice, reasoning=thinking_mode, parallel=parallel_tool_calls
        )
        return StructuralTag.from_json(tag)

    def structure_info(self) -> Any:
        raise NotImplementedError(f"{NAME}: calls are constrained by get_structural_tag, not structure_info")


class WorkbenchReasoningDetector(BaseReasoningFormatDetector):
    """Reasoning of the exported format; its normal text is the raw rest, for the tool-call detector."""

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        continue_final_message: bool = False,
        previous_content: str = "",
        force_nonempty_content: bool = False,
    ) -> None:
        super().__init__(
            FORMAT.spec.reasoning.start.strip(),
            FORMAT.spec.reasoning.end.strip(),
            force_reasoning=bool(force_reasoning),
            stream_reasoning=stream_reasoning,
        )
        # SGLang passes False when nothing forces reasoning, which does not mean the prompt closed it.  It
        # passes True for any template with a thinking switch that is on (its own template detection), also
        # where the prompt opens no block: when the format's outputs open their own block, the spec wins.
        spec_says = FORMAT.opened_for()
        self._opened = spec_says if spec_says is False else (True if force_reasoning else spec_says)
        self._split: Any = None
        self._held: list[str] = []

    def detect_and_parse(self, text: str) -> ReasoningResult:
        reasoning, rest = FORMAT.split(text, opened=self._opened)
        return ReasoningResult(normal_text=rest, reasoning_text=reasoning)

    def parse_streaming_increment(self, new_text: str) -> ReasoningResult:
        if self._split is None:
            self._split = _core.ReasoningSplit(FORMAT, opened=self._opened)
        reasoning, rest = self._split.feed(new_text)
        return self._result(reasoning, rest or "")

    def finish(self) -> ReasoningResult:
        if self._split is None or self._split.ended:
            return self._result("", "", final=True)
        reasoning, rest = self._split.finish()
        return self._result(reasoning, rest, final=True)

    def _result(self, reasoning: str, rest: str, final: bool = False) -> ReasoningResult:
        """``stream_reasoning=False`` holds the reasoning back until the block ends."""
        if not self.stream_reasoning:
            self._held.append(reasoning)
            done = final or (self._split is not None and self._split.ended)
            reasoning = "".join(self._held) if done else ""
            if done:
                self._held = []
        return ReasoningResult(normal_text=rest, reasoning_text=reasoning)


def register() -> None:
    """Add both detectors to SGLang's tables under ``NAME`` (what the launcher calls first)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    FunctionCallParser.ToolCallParserEnum[NAME] = WorkbenchDetector
    ReasoningParser.DetectorMap[NAME] = WorkbenchReasoningDetector
