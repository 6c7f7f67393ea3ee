"""One assistant turn: optional reasoning, then content with tool-call sections (every format but Harmony).

The turn is read as llama.cpp's generated parser reads it: ``reasoning? content (tool-section content)*``.
Reasoning follows the spec's mode (see :func:`reasoning_setup`); content is everything else except the
content wrappers and end-of-turn markers, which are stripped; a tool-call trigger hands over to the format
parser of :mod:`workbench.runtime.parsing.machine`.

Whitespace policy: whitespace right after a boundary (the start, the end of reasoning, the end of a tool
section) is held back until something decides it: a non-space character makes it content, verbatim; a
tool-call start or the end of the output makes it mere separation (emitted as a marker, not content).
This is the DeepSeek RFC's §3.2.4 ("only newlines between </think> and the tool call: ignored") without
trimming real content.

The engine policies of :class:`~workbench.runtime.parsing.options.ParseOptions` that concern the text around
calls live here, each without retracting anything already released: ``space_before_calls="strip"`` holds the
whitespace that ends a piece of content back like boundary whitespace (separation if a call follows,
content otherwise); ``text_after_calls="drop"`` releases later text as markers; ``unclosed_calls="content"``
records a tool section's text while it is parsed so that, if the output ends inside an unfinished call,
the call is dropped (diagnosed) and its text appended to the content.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.runtime.chat import Tool
from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import Gen, Machine
from workbench.runtime.parsing.lookahead import Fail, Look
from workbench.runtime.parsing.markers import Marker, MarkerSet, core_of, marker_set
from workbench.runtime.parsing.options import ParseOptions
from workbench.runtime.parsing.tools_base import ToolParser
from workbench.runtime.spec import FormatSpec

TOOL, WRAP, END, MSG = "tool", "wrap", "end", "msg"


def reasoning_setup(spec: FormatSpec, options: ParseOptions) -> tuple[bool, bool]:
    """(extract reasoning at all, the output starts inside reasoning).

    - ``extract_reasoning=False`` or mode ``none`` (or no end marker): no reasoning, tags stay content.
    - thinking disabled: template-controlled reasoning (forced_open / forced_closed, or any mode of a
      template with a thinking toggle) is off: the tags stay in the content verbatim.
    - opened: ``options.thinking_opened`` when given, else forced_open and delimiter modes (the prompt
      opened it, or reasoning has no start marker), else what the prompt analysis says.
    - ``options.start_stage`` (read off the rendered prompt) wins over both: ``reasoning`` starts inside
      reasoning whatever the switches say; ``content`` and ``answer`` mean the prompt already closed
      reasoning or began the answer, so reasoning cannot come any more (its tags are text); ``start``
      starts outside reasoning.
    """
    mode = spec.reasoning.mode
    # (a reasoning message of headed messages ends where the next header starts: it needs no end marker)
    ended = bool(core_of(spec.reasoning.end)) or (
        spec.layout.headed and any(m.kind == "reasoning" for m in spec.layout.messages)
    )
    if mode == "none" or not options.extract_reasoning or not ended:
        return False, False
    stage = options.start_stage
    if stage in ("content", "answer"):
        return False, False
    if stage == "reasoning":
        return True, True
    if not options.enable_thinking and (
        mode in ("forced_open", "forced_closed") or spec.prompt.supports_thinking_toggle
    ):
        return False, False
    if stage == "start":
        return True, False
    if options.thinking_opened is not None:
        return True, options.thinking_opened
    return True, spec.output_starts_in_reasoning(enable_thinking=options.enable_thinking)


class TurnMachine(Machine):
    """Reasoning + content + tool sections, for every tool format except Harmony."""

    def __init__(
        self,
        spec: FormatSpec,
        tools: Sequence[Tool] | None,
        options: ParseOptions,
        format_cls: type[ToolParser] | None,
    ) -> None:
        self.reasoning_on, self.opened = reasoning_setup(spec, options)
        self.r_start = core_of(spec.reasoning.start)
        self.r_end = Marker.of(spec.reasoning.end)
        ends = [*spec.end_markers, spec.eos_token]
        self.end_cores = sorted({core_of(e) for e in ends if core_of(e)})
        super().__init__(spec, tools, options)
        self.fmt: ToolParser | None = format_cls(self) if format_cls is not None else None
        self.triggers = [c for c in (self.fmt.trigger_cores() if self.fmt else []) if c]
        answer = spec.content
        wraps = [core_of(answer.start), core_of(answer.end)] if answer.mode != "plain" else []
        wraps += [core_of(answer.with_calls_start), core_of(answer.with_calls_end)]  # (whatever the mode)
        self.wrap_cores = [c for c in wraps if c and c not in self.triggers]
        self.kind_of: dict[str, str] = {}
        for c in self.end_cores:
            self.kind_of[c] = END
        for c in self.wrap_cores:
            self.kind_of[c] = WRAP
        for c in self.triggers:
            self.kind_of[c] = TOOL
        self.tools_blocked = False  # the RFC's exclusive policy tripped
        self._sets: dict[bool, MarkerSet] = {}
        self._after_end = False
        self._called = False  # a tool section produced a call (text_after_calls)
        self.setup()

    def setup(self) -> None:
        """A hook for a machine that reads more than the turn (a learned layout's messages).

        It runs once the turn's markers are known, so a subclass adjusts them here instead of repeating
        the constructor's signature; the plain turn needs nothing more.
        """

    # ------------------------------------------------------------------------------------------ helpers
    @property
    def tools_active(self) -> bool:
        if self.fmt is None or self.tools_blocked:
            return False
        return self.options.parse_tools or self.fmt.routes_content

    def content_markers(self) -> MarkerSet:
        active = self.tools_active
        ms = self._sets.get(active)
        if ms is None:
            cores = [*self.end_cores, *self.wrap_cores, *(self.triggers if active else [])]
            ms = self._sets[active] = marker_set(cores)
        return ms

    def emit_content(self, n: int) -> None:
        if self._called and self.options.text_after_calls == "drop":
            self.drop_text(n, "W-TEXT-DROPPED", "text after the tool calls left out (text_after_calls=drop)")
            return
        text = self.emit("content", n)
        self.out.add_content(text)
        if self._after_end and text.strip():
            self.warn_once("W-TEXT-AFTER-END", "text after the end-of-turn marker")
        if (
            self.options.exclusive_tool_calls
            and text.strip()
            and self.fmt is not None
            and not self.tools_blocked
        ):
            self.tools_blocked = True

    def tool_section(self, header: object) -> Gen[None]:
        """One tool section; applies ``unclosed_calls="content"`` when the output ends inside it."""
        assert self.fmt is not None
        demote = self.options.unclosed_calls == "content" and self.fmt.has_closing_markers
        first = len(self.out.calls)
        if demote:
            self._record, self._recorded = [], 0
        try:
            yield from self.fmt.section(header)
        finally:
            record, self._record = self._record, None
        calls = self.out.calls[first:]
        if demote and record is not None and self.final and self.pos >= len(self.buf):
            self._demote_unfinished(calls, "".join(record))
        if any(not c.dropped for c in calls):
            self._called = True

    def _demote_unfinished(self, calls: Sequence[CallLog], text: str) -> None:
        """The output ended inside a call: drop the unfinished calls, their text becomes content."""
        unfinished = [c for c in calls if not c.dropped and not c.finished]
        if not unfinished:
            return
        for call in unfinished:
            call.dropped = True
            call.closed = True
            self.out.diagnose(
                "E-STREAM-TRUNCATED",
                f"the output ended inside tool call {call.index} ({call.name}): returned as content",
                self.offset(),
            )
        cut = 0 if unfinished[0] is calls[0] else unfinished[0].record_at
        self.out.add_content(text[cut:])

    def message(self, lead: int) -> Gen[bool]:
        """A headed message starting ``lead`` characters after ``pos`` (a layout's; see
        :class:`~workbench.parsing.layout.LayoutMachine`): True when one was read, False when the text
        there is not a message header (nothing is emitted then)."""
        return False
        yield

    # ------------------------------------------------------------------------------------------ phases
    def run(self) -> Gen[None]:
        if self.reasoning_on:
            if self.opened:
                answer_first = None
                if self._answer_start:
                    answer_first = yield from self.lookahead(self._answer_tag)
                if answer_first is not None:
                    self.emit_spans(answer_first[0].spans)  # the answer's opening: a marker
                else:
                    yield from self.reasoning()
            elif self.r_start:
                r = yield from self.lookahead(self._start_tag)
                if r is not None:
                    self.emit_spans(r[0].spans)
                    yield from self.reasoning(rewritten_start=False)
                elif self._answer_start and self._short_answer():
                    # the answer's opening without the prompt's head in front (see _answer_tag): a marker
                    short = yield from self.lookahead(self._short_answer_tag)
                    if short is not None:
                        self.emit_spans(short[0].spans)
        yield from self.content()

    @property
    def _answer_start(self) -> str:
        """The answer's own opening marker, when it has one that reasoning's markers are not."""
        start = core_of(self.spec.content.start) if self.spec.content.mode != "plain" else ""
        return start if start and start not in (self.r_start, self.r_end.core if self.r_end else "") else ""

    def _answer_tag(self, look: Look) -> None:
        """The output opens with the answer's marker although the prompt opened reasoning: the model
        skipped reasoning (a history turn without any writes just that), so there is none to read.  The
        marker may come without what the prompt wrote in front of the reasoning it opened (Solar Open: the
        prompt '<|begin|>assistant<|think|>', an answer '<|begin|>assistant<|content|>...')."""
        look.ws()
        short = self._short_answer()
        if short and look.opt(short):
            return
        look.lit(self._answer_start)

    def _short_answer_tag(self, look: Look) -> None:
        """The answer's marker without the prompt's head (:meth:`_answer_tag`), alone."""
        look.ws()
        short = self._short_answer()
        if not short:
            raise Fail
        look.lit(short)

    def _short_answer(self) -> str:
        """The answer's marker less what the prompt writes in front of the reasoning it opens ("": none)."""
        head, start = self._prompt_head(), self._answer_start
        return core_of(start[len(head) :]) if head and start.startswith(head) else ""

    def _prompt_head(self) -> str:
        """What the generation prompt writes in front of the reasoning start it ends with ("" if it ends
        with none)."""
        gen = self.spec.prompt.generation_prompt.rstrip()
        if not self.r_start or not gen.endswith(self.r_start):
            return ""
        return gen[: len(gen) - len(self.r_start)].strip()

    def _reasoning_after_calls(self) -> Gen[None]:
        """A reasoning block that opens right after the calls (Motif-2 and NexusRaven write the calls first,
        then the reasoning): read as reasoning, as it would be in front of them, not as the answer."""
        if not (self._called and self.reasoning_on and self.r_start and self.r_end) or self._after_end:
            return
        r = yield from self.lookahead(self._start_tag)
        if r is not None:
            self.emit_spans(r[0].spans)
            yield from self.reasoning(rewritten_start=False)

    def _start_tag(self, look: Look) -> None:
        look.ws()
        look.lit(self.r_start)

    def reasoning(self, *, rewritten_start: bool = True) -> Gen[None]:
        """Reasoning text up to the end marker (or an implicit end: a tool call, the end of the turn).

        One start marker opens one block: a start marker inside the block is reasoning text, kept verbatim
        (``<think><think>X</think>`` is the reasoning ``<think>X``), as the output grammar reads it (free text
        up to the end marker) and as vLLM's and transformers' parsers do; nothing the model wrote vanishes.
        ``rewritten_start``: the prompt opened the block, so a start marker right at the start of the output
        is the model writing the opening again (vLLM's reasoning parsers drop it too) and is read as a marker,
        once.
        """
        if rewritten_start and self.r_start:
            r = yield from self.lookahead(self._start_tag)
            if r is not None:
                self.emit_spans(r[0].spans)
        end = self.r_end.core if self.r_end else ""
        markers = marker_set([end, *self.end_cores, *(self.triggers if self.fmt else [])])
        while True:
            m, stop = self.scan(markers)
            self.out.add_reasoning(self.emit("reasoning", stop - self.pos))
            if m is None:
                if self.final:
                    self.truncated("reasoning (no end-of-reasoning marker)")
                    return
                yield from self.wait()
                continue
            core = m.group(0)
            if core == end:
                self.emit("marker", len(core))
                if self.r_end is not None and self.r_end.trail_ws:
                    yield from self.ws()
                return
            if self.kind_of.get(core) == END:
                self.emit("marker", len(core))
                self.out.diagnose("E-STREAM-TRUNCATED", "the turn ended inside reasoning", self.offset())
                self._after_end = True
                return
            if self.fmt is not None and self.tools_active:
                header = yield from self.fmt.header(0)
                if header is None:  # no call follows the word ('so I call the tool'): reasoning text
                    self.out.add_reasoning(self.emit("reasoning", len(core)))
                    continue
            return  # a tool-call start ends reasoning implicitly; content() takes it from here

    def content(self) -> Gen[None]:
        boundary = True
        soft = False  # the held whitespace ends content: it is content unless a tool call follows it
        space = self.options.space_before_calls
        strip = space == "strip" or (space == "strip_json" and self.spec.tools.format == "json_native")
        held = 0  # whitespace already held back after pos (kept across waits: pos does not move then)
        while True:
            m, limit, lead = yield from self.boundary_scan(self.content_markers, boundary, held)
            held = 0
            if lead >= 0 and m is None:  # whitespace that nothing follows only separated (or ends content)
                if soft:
                    self.emit_content(lead)
                else:
                    self.emit("marker", lead)
                return
            if lead < 0:
                lead = 0
                boundary = soft = False
                n = limit - self.pos
                keep = n
                if strip and self.tools_active and not (m is None and self.final):
                    # Hold the whitespace that ends this text: it is dropped if a tool call follows.
                    text = self.buf[self.pos : limit]
                    keep = len(text.rstrip())
                self.emit_content(keep)
                if keep < n:
                    boundary = soft = True
                    if m is None:
                        held = n - keep
                        yield from self.wait()
                        continue
                    lead = n - keep
                elif m is None:
                    if self.final:
                        return
                    yield from self.wait()
                    continue
            assert m is not None  # every path without a marker returned or waited above
            core = m.group(0)
            kind = self.kind_of.get(core)
            if kind == MSG:
                handled = yield from self.message(lead)
                if not handled:
                    self.emit_content(lead + len(core))
                boundary, soft = handled, False
                continue
            if kind == TOOL and not self.tools_active:
                continue  # the content just released ended tool parsing (exclusive policy)
            if kind == TOOL and self.fmt is not None:
                header = yield from self.fmt.header(lead)
                if header is None:
                    self.emit_content(lead + len(core))
                    boundary = soft = False
                    continue
                self.emit("marker", lead)
                yield from self.tool_section(header)
                yield from self._reasoning_after_calls()
                boundary = True
                soft = False
                continue
            if soft:
                self.emit_content(lead)
                lead = 0
            self.emit("marker", lead + len(core))
            if kind == END:
                self._after_end = True
            boundary = True
            soft = False
