"""The streaming machine every format parser runs on: buffer, events, suspension, lookahead.

Parsers are written as plain sequential generator code ("read a header, then stream the arguments until
the closing marker") and suspend with ``yield`` whenever the buffer runs out; :meth:`Machine.resume` runs
them again after the next chunk.  This keeps each format readable and makes chunking irrelevant: the same
code runs whether the text arrives in one piece or one character at a time.

Invariants the helpers maintain:
- text leaves the buffer only through :meth:`Machine.emit`, in input order, so the concatenated event texts
  equal the input;
- text is emitted as soon as it can no longer be the start of a marker (held back otherwise), and is never
  re-scanned after it was emitted: the buffer only holds unreleased text, and offsets kept across a
  suspension are relative to ``pos`` (the buffer is compacted between chunks), so the cost is linear;
- nothing blocks at the end of input: with ``final`` set every decision is taken.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeVar

from workbench.runtime.chat import Tool
from workbench.runtime.events import Event
from workbench.runtime.parsing import schema_check
from workbench.runtime.parsing.builder import CallLog, MessageBuilder
from workbench.runtime.parsing.lookahead import Fail, Look, More
from workbench.runtime.parsing.markers import MarkerSet
from workbench.runtime.parsing.options import ParseOptions
from workbench.runtime.parsing.partial_json import (
    BAD,
    DONE,
    MORE,
    STOP,
    JsonValueScanner,
    loads_or_none,
    repair,
)
from workbench.runtime.spec import FormatSpec

T = TypeVar("T")
Gen = Generator[None, None, T]

WS_RX = re.compile(r"\s*")


class Stalled(RuntimeError):
    """A parser asked for more input after the input was declared complete (a bug, never user error)."""


class Machine:
    """Buffer + event sink + message builder shared by all format parsers.  Subclasses implement ``run``."""

    def __init__(self, spec: FormatSpec, tools: Sequence[Tool] | None, options: ParseOptions) -> None:
        self.spec = spec
        self.options = options
        self.tools: dict[str, Tool] | None = {t.name: t for t in tools} if tools is not None else None
        # Output-format text the prompt already wrote (functionary's ">>>") is read as if the output began
        # with it, but it is not the model's: it is released silently (no event, no message text).
        self.buf = spec.prompt.output_prefix
        self._silent = len(self.buf)
        self.pos = 0
        self.base = -self._silent  # absolute input offset of buf[0]
        self.final = False
        self.out = MessageBuilder()
        # Events not taken yet, as flat lists of atoms (kind and tool index per merged event, where its
        # texts start in ``_parts``): a one-shot parse of megabytes holds ~100k of them until the end, and
        # a list per event would give the garbage collector that many more containers to scan.
        self._kinds: list[str] = []
        self._indexes: list[int | None] = []
        self._starts: list[int] = []
        self._parts: list[str] = []
        #: False when nobody reads the events (a one-shot :func:`~workbench.runtime.parsing.parse`): none are
        #: kept.
        self.keep_events = True
        self._validators: dict[str, Any] = {}
        # The text of the tool section being parsed, kept only when an unfinished call at the end of the
        # output is to become content (``unclosed_calls="content"``); ``_recorded`` is its length.
        self._record: list[str] | None = None
        self._recorded = 0
        self._warned: set[tuple[str, str]] = set()  # see warn_once
        self._gen = self.run()
        self.done = False

    # ------------------------------------------------------------------------------------------ driver
    def run(self) -> Gen[None]:
        raise NotImplementedError

    def push(self, text: str) -> None:
        """Append input (compacting the released prefix away first)."""
        if self.pos:
            self.buf = self.buf[self.pos :] + text
            self.base += self.pos
            self.pos = 0
        else:
            self.buf += text

    def resume(self) -> None:
        """Run the parser until it needs more input (or, once ``final`` is set, to the end)."""
        if self.done:
            return
        try:
            next(self._gen)
        except StopIteration:
            self.done = True
        except Stalled:
            self.done = True
            self._bail_out("E-INTERNAL", "the parser stalled at the end of the input")
        except Exception as exc:  # the last line of defence: bad input must never crash a caller
            self.done = True
            self._bail_out("E-INTERNAL", f"internal parser error ({type(exc).__name__}: {exc})")

    def _bail_out(self, code: str, message: str) -> None:
        self.out.diagnose(code, message, self.offset(), "error")
        rest = len(self.buf) - self.pos
        if rest:
            self.out.add_content(self.emit("content", rest))

    def wait(self) -> Gen[None]:
        """Suspend until more input arrives."""
        if self.final:
            raise Stalled
        yield

    def offset(self) -> int:
        """The absolute input offset of the next unreleased character."""
        return self.base + self.pos

    @property
    def unreleased(self) -> str:
        """The fed text not released yet (without a silent output prefix); does not change state."""
        return self.buf[self.pos + self._silent :]

    @property
    def avail(self) -> int:
        return len(self.buf) - self.pos

    # ------------------------------------------------------------------------------------------ events
    def emit(self, kind: str, n: int, index: int | None = None) -> str:
        """Release the next ``n`` characters as one event span of ``kind``; returns the text."""
        if n <= 0:
            return ""
        text = self.buf[self.pos : self.pos + n]
        self.pos += n
        if self._silent:
            hidden = min(n, self._silent)
            self._silent -= hidden
            text, n = text[hidden:], n - hidden
            if not text:
                return ""
        if self._record is not None:
            self._record.append(text)
            self._recorded += n
        if not self.keep_events:
            return text
        if not self._kinds or self._kinds[-1] != kind or self._indexes[-1] != index:
            self._kinds.append(kind)
            self._indexes.append(index)
            self._starts.append(len(self._parts))
        self._parts.append(text)
        return text

    def emit_spans(self, spans: Sequence[Sequence[Any]], index: int | None = None) -> dict[str, str]:
        """Emit lookahead spans in order; tool kinds get ``index`` (or become markers without a call)."""
        texts: dict[str, str] = {}
        for kind, n in spans:
            k = str(kind)
            if k.startswith("tool_") and index is None:
                k = "marker"
            text = self.emit(k, int(n), index if k.startswith("tool_") or k == "marker" else None)
            texts[str(kind)] = texts.get(str(kind), "") + text
        return texts

    def take_events(self) -> list[Event]:
        parts, starts = self._parts, [*self._starts, len(self._parts)]
        out = [
            Event(kind, "".join(parts[starts[i] : starts[i + 1]]), index)
            for i, (kind, index) in enumerate(zip(self._kinds, self._indexes, strict=True))
        ]
        self._kinds, self._indexes, self._starts, self._parts = [], [], [], []
        return out

    # ------------------------------------------------------------------------------------------ primitives
    def lookahead(
        self, fn: Callable[[Look], T], lead: int = 0, limit: int = 512
    ) -> Gen[tuple[Look, T] | None]:
        """Run a pure lookahead from ``pos + lead`` until it decides; None when the text does not match."""
        while True:
            look = Look(self.buf, self.pos + lead, self.final, limit)
            try:
                value = fn(look)
            except More:
                yield from self.wait()
                continue
            except Fail:
                return None
            return look, value

    def scan(self, markers: MarkerSet, skip: int = 0) -> tuple[re.Match[str] | None, int]:
        """The next marker and where the text before it ends; ``(None, safe_end)`` when none is decided.

        A complete marker is not decided while a longer one could still start at the same place
        (``<|message_sep|>`` vs ``<|message_sep|>\n\nfunction call``): the text before it is released, the
        marker waits.  ``skip`` characters after ``pos`` are known to hold no marker start (held-back
        whitespace: cores never start with a space), so a long hold is not searched again.  Does not change
        state.
        """
        start = self.pos + skip
        m = markers.search(self.buf, start)
        if m is not None:
            if not self.final and markers.could_start_at(self.buf, m.start()):
                return None, m.start()
            return m, m.start()
        return None, (len(self.buf) if self.final else markers.safe_end(self.buf, start))

    def boundary_scan(
        self, markers: Callable[[], MarkerSet], boundary: bool, held: int = 0
    ) -> Gen[tuple[re.Match[str] | None, int, int]]:
        """The next marker, with the whitespace after a boundary held back until something decides it.

        Whitespace right after a boundary (the start, a message's or a tool section's end) is separation
        when a marker or the end of the output follows it, and text otherwise; so while only whitespace
        has come it is not released (the wait keeps it, ``held`` characters are not searched again).
        Returns ``(m, limit, lead)`` as :meth:`scan` does plus ``lead``: the whitespace before ``m`` when
        only whitespace precedes it (``m`` None: the output ended with it, the caller releases it), or -1
        when text comes first (the caller releases the text up to ``limit``).  The turn machine and the
        Harmony parser read their top level this way.
        """
        while True:
            m, limit = self.scan(markers(), held)
            if not boundary or WS_RX.match(self.buf, self.pos + held).end() < limit:  # type: ignore[union-attr]
                return m, limit, -1
            if m is not None or self.final:
                return m, limit, limit - self.pos
            held = limit - self.pos
            yield from self.wait()

    def ws(self, kind: str = "marker", index: int | None = None) -> Gen[str]:
        """Consume whitespace (emitted as ``kind``) up to the next non-space character or the end."""
        taken: list[str] = []
        while True:
            m = WS_RX.match(self.buf, self.pos)
            n = (m.end() if m else self.pos) - self.pos
            if n:
                taken.append(self.emit(kind, n, index))
            if self.pos < len(self.buf) or self.final:
                return "".join(taken)
            yield from self.wait()

    def opt_marker(self, core: str, index: int | None = None) -> Gen[bool]:
        """Consume optional whitespace + ``core`` as markers when ``core`` comes next; else nothing."""
        if not core:
            return False
        r = yield from self.lookahead(lambda look: look.opt_ws_then(core))
        if r is None or not r[1]:
            return False
        self.emit_spans(r[0].spans, index)
        return True

    # ------------------------------------------------------------------------------------------ tools
    def known_tool(self, name: str, *, strict: bool = False) -> bool:
        """Whether a call to ``name`` is accepted (``strict``: regardless of ``check_tool_names``)."""
        if self.tools is None or name in self.tools:
            return True
        return not (strict or self.options.check_tool_names)

    def param_schema(self, call_name: str | None, param: str) -> Any:
        """The JSON schema of one parameter of a requested tool (None when unknown)."""
        if self.tools is None or call_name is None or call_name not in self.tools:
            return None
        props = (self.tools[call_name].parameters or {}).get("properties")
        return props.get(param) if isinstance(props, dict) else None

    def open_call(self, name: str | None, call_id: str = "") -> CallLog:
        if self.out.calls and not self.options.parallel_tool_calls and len(self.out.calls) == 1:
            self.out.diagnose(
                "W-PARALLEL-CALLS",
                "several tool calls although parallel tool calls were not requested",
                self.offset(),
            )
        call = self.out.open_call(name, call_id)
        call.record_at = self._recorded
        return call

    def unknown_tool(self, name: str) -> None:
        self.out.diagnose(
            "E-CALL-SCHEMA",
            f"call to unknown tool {name!r} ignored (not in the request's tools)",
            self.offset(),
        )

    def record(self, kind: str, text: str) -> None:
        """Released text that is part of the message: the content or the reasoning, by its event kind.

        Parsers that read a body as one kind or another (Harmony's channels, a layout's messages) record it
        through this; markers and a call's own arguments are recorded where they are read.
        """
        if not text:
            return
        if kind == "content":
            self.out.add_content(text)
        elif kind == "reasoning":
            self.out.add_reasoning(text)

    def warn_once(self, code: str, message: str) -> None:
        """Diagnose ``code`` with ``message`` the first time only.

        A policy that leaves text out (text after the calls, text outside any message) applies to every
        piece of that text, chunk after chunk; one diagnostic says so.  The parsers kept a flag per warning.
        """
        if (code, message) not in self._warned:
            self._warned.add((code, message))
            self.out.diagnose(code, message, self.offset())

    def drop_text(self, n: int, code: str, message: str) -> None:
        """Release ``n`` characters as markers (text a policy leaves out), diagnosing the first that is not
        blank (see :meth:`warn_once`)."""
        if self.emit("marker", n).strip():
            self.warn_once(code, message)

    def truncated(self, what: str) -> None:
        """E-STREAM-TRUNCATED: the output ended inside ``what`` ("tool call 2", "a literal block").

        Every parser reports a stream cut short with this one code and wording, so it is written once.
        """
        self.out.diagnose("E-STREAM-TRUNCATED", f"the output ended inside {what}", self.offset())

    def stream_json(
        self, call: CallLog | None, terminators: MarkerSet
    ) -> Gen[tuple[str, JsonValueScanner, str]]:
        """Stream one JSON value as the call's arguments; returns (status, scanner, raw text).

        The raw text goes to ``call`` fragment by fragment (JSON formats pass the model's text through, so
        the fragments concatenate to exactly the final arguments).  Status: DONE, STOP (a terminator marker
        cut the value short), BAD (no JSON value here) or MORE (the input ended inside the value).
        """
        scanner = JsonValueScanner(terminators)
        raw: list[str] = []
        index = call.index if call is not None else None
        kind = "tool_args" if call is not None else "marker"
        yield from self.ws(index=index)  # whitespace before the value is separation, not arguments
        while True:
            i, status = scanner.advance(self.buf, self.pos, self.final)
            text = self.emit(kind, i - self.pos, index)
            if text:
                raw.append(text)
                if call is not None:
                    call.add_args(text)
            if status == MORE:
                if self.final:
                    return MORE, scanner, "".join(raw)
                yield from self.wait()
                continue
            return status, scanner, "".join(raw)

    def typed_json_body(
        self, call: CallLog | None, terminators: MarkerSet, declared: str
    ) -> Gen[tuple[bool, str]]:
        """A call body that may be JSON: streamed as the arguments when it opens like a JSON value.

        Headed formats (Harmony's ``<|constrain|>json``, a learned layout's type word) may declare the body's
        type; ``declared`` names that declaration for the diagnostics ("" when the header declares none), and
        a declared body that is not (valid) JSON is ``E-BODY-CONSTRAINT-VIOLATION``.  Both the Harmony parser
        and :class:`~workbench.runtime.parsing.layout.LayoutMachine` read call bodies this way, so it lives
        once here.  Returns (the body was JSON, the stream status; "" when it was not JSON): a body that is
        not JSON is left unread for the caller, which takes it as raw text.
        """
        yield from self.ws(index=call.index if call is not None else None)
        is_json = yield from self.lookahead(lambda lk: lk.peek("{") or lk.peek("["))
        if is_json is None or not is_json[1]:
            if declared and call is not None:
                self.out.diagnose(
                    "E-BODY-CONSTRAINT-VIOLATION",
                    f"the body of tool call {call.index} is not JSON {declared}".rstrip(),
                    self.offset(),
                    "error",
                )
            return False, ""
        status, scanner, raw = yield from self.stream_json(call, terminators)
        if call is not None:
            ok, _ = loads_or_none(raw)
            if status != MORE and not ok and declared:
                self.out.diagnose(
                    "E-BODY-CONSTRAINT-VIOLATION",
                    f"the body of tool call {call.index} is not valid JSON {declared}",
                    self.offset(),
                    "error",
                )
            self.close_json_call(call, status, scanner, raw)
        return True, status

    def close_json_call(
        self, call: CallLog | None, status: str, scanner: JsonValueScanner, raw: str, *, closes: bool = True
    ) -> None:
        """Validate a call's JSON arguments when their value ended (invalid: dropped, see ``builder``).

        ``closes=False`` when the call goes on after its arguments (a JSON object with more members).
        """
        self._close_json(call, status, scanner, raw)
        if call is not None and not closes and not call.dropped:
            call.closed = False

    def _close_json(self, call: CallLog | None, status: str, scanner: JsonValueScanner, raw: str) -> None:
        if call is None:
            return
        if status == MORE:
            self.truncated(f"the arguments of tool call {call.index}")
            return
        if status == BAD or not raw.strip():
            if raw.strip():
                self.drop_call(call, "arguments are not JSON")
            else:
                call.add_args("{}")
                call.closed = True
            return
        ok, _ = loads_or_none(raw)
        if ok:
            call.closed = True
            self.check_schema(call)
            return
        fixed = repair(raw, scanner) if status == STOP else None
        if fixed is not None:
            call.add_args(fixed[len(raw) :])
            call.closed = True
            self.out.diagnose(
                "W-ARGS-REPAIRED",
                f"arguments of tool call {call.index} were cut off by a closing marker and were closed",
                self.offset(),
            )
            self.check_schema(call)
            return
        self.drop_call(call, "arguments are not valid JSON")

    def drop_call(self, call: CallLog, why: str) -> None:
        call.dropped = True
        call.closed = True
        self.out.diagnose(
            "E-CALL-SCHEMA", f"tool call {call.index} ({call.name}) dropped: {why}", self.offset()
        )

    def _check_duplicate_keys(self, call: CallLog) -> None:
        """An argument written twice: engines disagree on which value counts, so say which one we kept
        (the last, as JSON decoders do), one-shot and streamed alike."""
        seen: list[str] = []

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            out = dict(items)
            if len(out) < len(items):  # counted once per object, not once per key (quadratic)
                counts = Counter(k for k, _ in items)
                seen.extend(k for k in out if counts[k] > 1)
            return out

        try:
            json.loads(call.arguments, object_pairs_hook=pairs)
        except (ValueError, RecursionError):
            return
        if seen:
            self.out.diagnose(
                "W-ARGS-DUPLICATE-KEY",
                f"tool call {call.index} ({call.name}): argument {seen[0]!r} is written more than once; "
                "the last value is kept",
                self.offset(),
            )

    def check_schema(self, call: CallLog) -> None:
        """Validate the arguments against the tool's JSON schema; a mismatch is reported, not fatal.

        The schema is the request's, so it is not trusted (:mod:`workbench.runtime.parsing.schema_check`): a
        ``$ref`` that does not resolve, or a regex that runs out of time, is reported once and that tool's
        arguments are not checked any further (no verdict rather than a wrong one or a hang).
        """
        self._check_duplicate_keys(call)
        if self.tools is None or call.name not in self.tools:
            return
        schema = self.tools[call.name].parameters
        ok, value = loads_or_none(call.arguments)
        if not ok or not isinstance(schema, dict):
            return
        import jsonschema
        import regex

        validator = self._validator(call.name, schema)
        if validator is None:
            return
        try:
            error = schema_check.first_error(validator, call.arguments, value)
        except schema_check.PatternTimeout as exc:
            self._validators[call.name] = None
            self.out.diagnose(
                "E-TOOL-SCHEMA",
                f"tool {call.name!r}: the schema pattern {exc.pattern!r} took over "
                f"{schema_check.PATTERN_TIMEOUT:g} s on one value (catastrophic backtracking): "
                "its arguments are not checked against the schema",
                self.offset(),
            )
            return
        except (
            jsonschema.SchemaError,
            jsonschema.exceptions.UnknownType,
            regex.error,
            TypeError,
            ValueError,
            LookupError,
            RecursionError,
        ):
            return  # a schema this validator cannot read (e.g. a non-standard "float" type): no verdict
        if error is not None:
            self.out.diagnose(
                "E-CALL-SCHEMA",
                f"tool call {call.index} ({call.name}): {error}",
                self.offset(),
                "info",
            )

    def _validator(self, name: str, schema: dict[str, Any]) -> Any:
        """The tool's validator (built once), or None when its schema cannot give a verdict."""
        if name in self._validators:
            return self._validators[name]
        bad, validator = schema_check.checked_validator(schema)
        if bad:
            self.out.diagnose(
                "E-TOOL-SCHEMA",
                f"tool {name!r}: the schema's $ref {bad[0]!r} does not resolve "
                "(only references inside the schema are followed): its arguments are not checked",
                self.offset(),
            )
        self._validators[name] = validator
        return validator


__all__ = ["BAD", "DONE", "MORE", "STOP", "Gen", "Machine", "Stalled"]
