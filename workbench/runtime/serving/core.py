"""Engine-neutral glue between the workbench parser and a serving engine's two-stage parsing.

vLLM and SGLang both parse a response in two stages: a reasoning parser takes the text up to the end of
reasoning and hands the *raw* rest on, then a tool parser reads content and calls from that rest.  Our
parser reads a whole turn in one machine, so the plug-ins split it the same way:

* :class:`ReasoningSplit` runs the parser over the whole output and watches its events (which concatenate
  to the input exactly): the reasoning stage owns the events up to and including the reasoning end marker;
  the first event of anything else ends it, and the raw text from there on is handed to the tool stage.
* :class:`ContentStream` parses that rest as an output that does not start inside reasoning, and reports
  the OpenAI deltas (content, then each call's name and argument fragments) the message grew by.

Part of the runtime every plug-in vendors (as ``<plugin>._runtime.serving.core``).
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.runtime.chat import ChatDataError, Tool
from workbench.runtime.parsing.deltas import DeltaTracker
from workbench.runtime.parsing.markers import core_of
from workbench.runtime.parsing.options import ParseOptions
from workbench.runtime.parsing.stream import StreamParser
from workbench.runtime.spec import CALL_SLOTS, FormatSpec, pattern_literal

_log = logging.getLogger("workbench_plugin")


@dataclass
class Runtime:
    """One exported spec, and the decisions both engines' adapters share."""

    spec: FormatSpec

    @classmethod
    def from_json(cls, text: str) -> Runtime:
        return cls(FormatSpec.from_json(text))

    @classmethod
    def exported(cls, package: str) -> Runtime:
        """The spec a plug-in carries: the ``exported`` module (``SPEC_JSON``) the export writes next to
        this runtime, vendored as ``package``.  Both engines' adapters load their format this way."""
        return cls.from_json(importlib.import_module(package + ".exported").SPEC_JSON)

    @property
    def has_reasoning(self) -> bool:
        return self.spec.reasoning.mode != "none" and bool(core_of(self.spec.reasoning.end))

    def opened_for(self, *, enable_thinking: bool = True, prompt: str | None = None) -> bool | None:
        """Whether the output starts inside reasoning, from what the engine knows before the output: False
        when there is no reasoning to be in or thinking is off, the prompt's answer when it has one (the
        format has a start marker: is the prompt's last one left open?), False when the format's outputs open
        their own block, else None: the output decides."""
        if not self.has_reasoning or not enable_thinking:
            return False
        has_start = bool(core_of(self.spec.reasoning.start))
        if prompt is not None and has_start:
            return self.spec.output_starts_in_reasoning(generation_prompt=prompt)
        if has_start and not self.spec.output_starts_in_reasoning():
            return False  # the output opens its own block when it reasons
        return None

    def reasoning_ended_in(self, text: str) -> bool:
        """Whether ``text`` (a prompt, or output so far) is past the end of reasoning: its last reasoning end
        marker comes after its last start marker (a start-less format: any end marker)."""
        start, end = core_of(self.spec.reasoning.start), core_of(self.spec.reasoning.end)
        if not self.has_reasoning or not end:
            return True
        at_end = text.rfind(end)
        return at_end >= 0 and (not start or at_end > text.rfind(start))

    def opened_by_output(self, output: str) -> bool:
        """Whether a whole output starts inside reasoning, judged from the output alone (no prompt): it
        closes a reasoning block it never opened, before any tool call began (the validator's rule)."""
        start, end = core_of(self.spec.reasoning.start), core_of(self.spec.reasoning.end)
        if not self.has_reasoning or end not in output:
            return False
        head = output[: output.find(end)]
        trigger = core_of(self.spec.tools.trigger)
        # a headed layout's answer message ends with the same literal as its reasoning message: a content
        # header before the end marker says the output began with an answer, not inside reasoning
        # (so does a call's literal, where the prompt wrote the call's opener: a call pattern's parts)
        answers = [core_of(m.header) for m in self.spec.layout.messages if m.kind != "reasoning"]
        calls: list[str] = []
        if trigger and trigger in self.spec.prompt.output_prefix:
            calls = [core_of(pattern_literal(p)) for p in self.spec.tools.pattern.call if p not in CALL_SLOTS]
        begun = [trigger, start, *answers, *calls]
        return not any(marker and marker in head for marker in begun)

    def split(self, text: str, *, opened: bool | None) -> tuple[str, str]:
        """One-shot reasoning stage: ``(reasoning, raw rest for the tool stage)``; ``opened=None``: the output
        decides (:meth:`opened_by_output`)."""
        if opened is None:
            opened = self.opened_by_output(text)
        stage = ReasoningSplit(self, opened=opened)
        reasoning, rest = stage.feed(text)
        if rest is None:
            more, rest = stage.finish()
            reasoning += more
        return reasoning, rest

    def parse_rest(
        self, text: str, tools: Sequence[Any] | None = None, *, enable_thinking: bool = True, log: bool = True
    ) -> tuple[str, list[dict[str, Any]]]:
        """One-shot tool stage: ``(content, [{"id", "name", "arguments"}])`` with arguments as JSON text.

        A call the text ends inside (its arguments are not a whole JSON object: ``max_tokens`` cut it) is
        left out, as the engines' own parsers do, with a warning in the server's log (``log``)."""
        stream = ContentStream(self, tools, enable_thinking=enable_thinking)
        stream.feed(text)
        stream.finish()
        result = stream.parser.finish()
        if result.cut_calls:  # a call the output ended inside (max_tokens) was not made: the engines drop it
            for i in result.cut_calls if log else ():
                call = result.message.tool_calls[i]
                _log.warning(
                    "%s: the output ended inside tool call %d (%s): left out of the answer, arguments so "
                    "far %r",
                    self.spec.provenance.template_name or "workbench plug-in",
                    i,
                    call.name,
                    call.arguments[:200],
                )
            result = result.without_cut_calls()
        message = result.message
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
        return message.content or "", calls


def _tools(tools: Sequence[Any] | None) -> list[Tool] | None:
    """Engine tool objects (pydantic models or dicts) as the parser's tools; None when there are none.

    The engines accept tool definitions our runtime refuses (vLLM takes ``"parameters": {"type": null}``):
    a plug-in must still answer, so such a tool's calls are read without its schema (the name alone), and a
    tool without a readable name is left out; either way once in the server's log, never an exception."""
    out = []
    for n, tool in enumerate(tools or ()):
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else tool
        if not isinstance(data, dict):
            continue
        try:
            out.append(Tool.from_openai(data, f"tools[{n}]"))
        except ChatDataError as exc:
            fallback = _schemaless(data)
            _log.warning(
                "%s; %s", exc, "its calls are read without the schema" if fallback else "the tool is left out"
            )
            if fallback is not None:
                out.append(fallback)
    return out or None


def _schemaless(data: dict[str, Any]) -> Tool | None:
    """The tool by its name alone (any arguments), when the name itself is readable."""
    fn = data.get("function", data)
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str):
        return None
    try:
        return Tool.from_openai({"type": "function", "function": {"name": name}})
    except ChatDataError:
        return None


@dataclass
class ReasoningSplit:
    """The reasoning stage of one output, streamed: ``feed`` text, get the reasoning it released and, once
    reasoning is over, the raw rest (returned once; later text belongs to the tool stage).

    ``opened=None`` means nothing before the output says whether it starts inside reasoning (a format whose
    reasoning has no start marker, or an engine that gives no prompt): the text is held until the output
    decides it (:meth:`Runtime.opened_by_output` on the text so far: an end marker, or a tool call or the
    end of the output first), then parsed.
    """

    runtime: Runtime
    opened: bool | None
    parser: StreamParser | None = field(init=False, default=None)
    ended: bool = False
    _fed: list[str] = field(default_factory=list)
    _tail: str = ""  # while undecided: the last characters fed, where a marker may have begun
    _owned: int = 0
    _saw_start: bool = False
    _closing: bool = False  # the end marker was seen: only separating whitespace is still owned
    # The layout's lead (``Assistant: ``) and the whitespace after it, seen before anything else: owned only
    # once the reasoning block starts after it, else left to the tool stage with the rest.  Fed in one piece
    # the lead and the start marker are one marker event; fed in small pieces they come apart.
    _lead_held: int = 0

    def __post_init__(self) -> None:
        self._start = core_of(self.runtime.spec.reasoning.start)
        self._end = core_of(self.runtime.spec.reasoning.end)
        self._trigger = core_of(self.runtime.spec.tools.trigger)
        self._lead = core_of(self.runtime.spec.layout.lead)
        if not self.runtime.has_reasoning:
            self.ended = True
        elif self.opened is not None:
            self._start_parser(self.opened)

    def _start_parser(self, opened: bool) -> list[Any]:
        self.opened = opened
        options = ParseOptions(enable_thinking=True, thinking_opened=opened)
        self.parser = StreamParser(self.runtime.spec, None, options=options)
        held = "".join(self._fed)
        return self.parser.feed(held) if held else []

    def _decided(self, final: bool, new: str = "") -> bool | None:
        """For ``opened=None``: the decision the text so far allows (None: not yet), ``new`` being the text
        just fed.  The markers are looked for in ``new`` and the few characters before it (a marker split
        across two feeds), never in the whole text again: an undecided stream is fed a token at a time,
        and rescanning all of it each time made a long reasoning quadratic."""
        window = self._tail + new
        keep = max(len(self._end), len(self._trigger)) - 1
        self._tail = window[-keep:] if keep > 0 else ""
        if self._end in window or final:
            return self.runtime.opened_by_output("".join(self._fed))
        if self._trigger and self._trigger in window:
            return False
        return None

    def feed(self, text: str) -> tuple[str, str | None]:
        if self.ended:
            return "", text
        self._fed.append(text)
        if self.parser is None:
            decision = self._decided(final=False, new=text)
            return self._take(self._start_parser(decision)) if decision is not None else ("", None)
        return self._take(self.parser.feed(text))

    def finish(self) -> tuple[str, str]:
        """The output ended inside the reasoning stage: the reasoning left, and the raw rest."""
        if self.ended:
            return "", ""
        if self.parser is None:
            held, _ = self._take(self._start_parser(bool(self._decided(final=True))))
            if self.ended:
                return held, "".join(self._fed)[self._owned :]
        else:
            held = ""
        assert self.parser is not None
        self.parser.finish()
        reasoning, rest = self._take(self.parser.final_events)
        if rest is None:
            self.ended = True
            rest = "".join(self._fed)[self._owned :]
        return held + reasoning, rest

    def _leads(self, event: Any, reasoning: list[str]) -> bool:
        """``event`` is (part of) the layout's lead, or whitespace after it, before the block began."""
        if event.kind != "marker" or self._saw_start or self.opened or reasoning:
            return False
        core = event.text.strip()
        return bool(self._lead) and (core in self._lead if core else self._lead_held > 0)

    def _take(self, events: Sequence[Any]) -> tuple[str, str | None]:
        """Own the events of the reasoning stage; the first event of anything else ends it.  Whitespace our
        parser reads as separation (a marker event) is owned too, before the block and after its end marker
        (``</think>\n\n``): the tool stage must not see it as the start of the content."""
        reasoning: list[str] = []
        for event in events:
            if self._closing:
                if event.kind != "marker" or event.text.strip():
                    self.ended = True
                    break
            elif event.kind == "reasoning":
                reasoning.append(event.text)
            elif self._leads(event, reasoning):
                self._lead_held += len(event.text)
                continue
            elif event.kind == "marker" and not event.text.strip():
                pass  # separation before or inside the block (a leading newline before <think>)
            elif (
                event.kind == "marker"
                and self._end
                and self._end in event.text
                and (self.opened or self._saw_start or reasoning or self._owned)
            ):
                cut = event.text.find(self._end) + len(self._end)
                tail = event.text[cut:]
                if tail.strip():
                    # one marker event runs on past the end marker (the next message's header, or text our
                    # parser reads as part of the marker): fed in small pieces these are events of their
                    # own, and the stage ends where they start, so it ends there in one piece too
                    self._owned += cut + len(tail) - len(tail.lstrip())
                    self.ended = True
                    break
                self._closing = True
            elif event.kind == "marker" and self._start and self._start in event.text and not self._saw_start:
                self._saw_start = True
                self._owned, self._lead_held = self._owned + self._lead_held, 0
            else:
                self.ended = True
                break
            self._owned += len(event.text)
        if not self.ended:
            return "".join(reasoning), None
        return "".join(reasoning), "".join(self._fed)[self._owned :]


class ContentStream:
    """The tool stage of one output: the rest after reasoning, parsed as content and calls.

    ``feed`` and ``finish`` return OpenAI delta dicts (``{"content"}``, ``{"reasoning_content"}`` or
    ``{"tool_calls": [{"index", "id", "type", "function": {"name", "arguments"}}]}``): a call's first delta
    has its whole name, and its argument fragments concatenate to its arguments JSON.
    """

    def __init__(
        self, runtime: Runtime, tools: Sequence[Any] | None = None, *, enable_thinking: bool = True
    ) -> None:
        options = ParseOptions(enable_thinking=enable_thinking, thinking_opened=False)
        self.parser = StreamParser(runtime.spec, _tools(tools), options=options)
        self.tracker = DeltaTracker(self.parser)

    def feed(self, text: str) -> list[dict[str, Any]]:
        if not text or self.parser.finished:
            return []
        self.parser.feed(text)
        return self.tracker.take()

    def finish(self) -> list[dict[str, Any]]:
        if self.parser.finished:
            return []
        self.parser.finish()
        return self.tracker.take()


def merge(deltas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several deltas as one: texts concatenated, call fragments merged per index (in order)."""
    out: dict[str, Any] = {}
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        for key in ("content", "reasoning_content"):
            if delta.get(key):
                out[key] = out.get(key, "") + delta[key]
        for call in delta.get("tool_calls") or ():
            slot = calls.setdefault(call["index"], {"index": call["index"], "function": {"arguments": ""}})
            if call.get("id"):
                slot["id"] = call["id"]
            fn = call.get("function") or {}
            if fn.get("name"):
                slot["function"]["name"] = fn["name"]
                slot["type"] = "function"
            slot["function"]["arguments"] += fn.get("arguments") or ""
    if calls:
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out
