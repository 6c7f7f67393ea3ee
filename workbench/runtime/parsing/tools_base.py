"""The small base every tool-call format implements (one file per format, as SGLang's detectors).

The turn machine (:mod:`workbench.runtime.parsing.turn`) finds a *trigger* (the first marker of a tool call)
in the content, asks the format whether a real call header follows (:meth:`ToolParser.header`, a pure bounded
lookahead: nothing is emitted if the answer is no, so the text stays content), and then lets the format
parse the whole section (:meth:`ToolParser.section`) until it returns to content.

A *weak* trigger (``{`` for Llama 3's bare JSON, ``[`` for pythonic lists) is ordinary text far more often
than a call, and a call's name can never be taken back once sent.  So before committing, such a format
holds the whole candidate back (:meth:`ToolParser.hold_whole`) and checks it is a well-formed call; prose
that merely contains braces is then released as content, verbatim (vLLM's and SGLang's "not a call:
normal text").  The hold is bounded by :data:`WEAK_HOLD_LIMIT` characters: a longer candidate whose header
already names a tool is committed as a call and streamed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.runtime.parsing.core import Gen
from workbench.runtime.parsing.markers import MarkerSet, core_of, marker_set
from workbench.runtime.spec import ToolsSpec

if TYPE_CHECKING:
    from workbench.runtime.parsing.turn import TurnMachine

_INDEXED_RX = re.compile(r"^(?P<name>.+?)(?::(?P<idx>\d+))?$")

#: How many characters of a weak-trigger candidate are held back to be checked whole.
WEAK_HOLD_LIMIT = 16384
#: Outcomes of :meth:`ToolParser.hold_whole`.
WHOLE, CUT, LONG = "whole", "cut", "long"


class ToolParser:
    """Base class: subclasses set ``name`` and implement ``trigger_cores``, ``header`` and ``section``."""

    name = "none"
    #: True when the trigger is ordinary text (``{``, ``[``): a header that names an unknown tool is then
    #: prose, not a broken call.
    weak_trigger = False
    #: True when the format's markers also route plain content (functionary's ``>>>all``): its triggers
    #: stay active when tool parsing is off, and :meth:`header` declines the real calls itself.
    routes_content = False

    @property
    def has_closing_markers(self) -> bool:
        """True when a call (or its section) ends with a marker of its own, so a call still open at the end
        of the output is recognisably unclosed (``unclosed_calls``); formats whose calls run to the end
        of their JSON (Llama 3, Mistral v11) have none."""
        return False

    def __init__(self, machine: TurnMachine) -> None:
        self.m = machine
        self.t = t = machine.spec.tools
        # The section and call wrappers every format reads the same way (their cores: no edge whitespace).
        self.sec_start = core_of(t.section_start)
        self.sec_end = core_of(t.section_end)
        self.call_end = core_of(t.call_end)
        self.sep = core_of(t.call_separator)
        self.setup(t)

    def setup(self, t: ToolsSpec) -> None:
        """The format's own markers, read off the spec's tools part once the shared ones above are set.

        A hook instead of a constructor in every format parser (each repeated the signature, the call up
        and the ``t = self.t``); a parser that extends another's calls ``super().setup(t)`` first.
        """

    # --------------------------------------------------------------------------- contract
    def trigger_cores(self) -> list[str]:
        """The marker cores whose occurrence may start a tool call."""
        raise NotImplementedError

    def header(self, lead: int) -> Gen[Any]:
        """Look ahead from ``pos + lead`` (the trigger); return a header object, or None for "not a call"."""
        raise NotImplementedError

    def section(self, header: Any) -> Gen[None]:
        """Emit the header and parse calls until the section ends; returns with ``pos`` after it."""
        raise NotImplementedError

    # --------------------------------------------------------------------------- shared helpers
    def hold_whole(
        self, lead: int, advance: Callable[[str, int, bool], tuple[int, bool]]
    ) -> Gen[tuple[str, str]]:
        """Hold the text from ``pos + lead`` back until ``advance`` finds its end; nothing is emitted.

        ``advance(buf, i, final) -> (i, ended)`` resumes a scanner from ``i`` (so the total cost stays
        linear: each character is scanned once).  Returns ``(WHOLE, text)`` when the end was found,
        ``(CUT, text)`` when the output ended first, ``(LONG, "")`` when the text runs past
        :data:`WEAK_HOLD_LIMIT` characters, whether or not its end is already in the buffer, so the
        verdict depends on the text alone, never on how it was chunked.  ``pos`` does not move while
        holding, so offsets relative to it survive buffer compaction.
        """
        m = self.m
        rel = lead
        while True:
            i, ended = advance(m.buf, m.pos + rel, m.final)
            rel = i - m.pos
            if rel - lead > WEAK_HOLD_LIMIT:
                return LONG, ""
            if ended:
                return WHOLE, m.buf[m.pos + lead : m.pos + rel]
            if m.final:
                return CUT, m.buf[m.pos + lead : m.pos + rel]
            yield from m.wait()

    def terminators(self, *extra: str) -> MarkerSet:
        """Markers that end a call's arguments early (closing markers and the end of the turn)."""
        t = self.t
        cores = [core_of(x) for x in (t.call_end, t.args_end, t.func_close, t.section_end)]
        cores += [c for c in extra if c]
        cores += self.m.end_cores
        return marker_set(c for c in cores if c)

    def resolve_name(self, raw: str) -> tuple[str, str] | None:
        """(name, call id) for the name text of a call, applying ``function_namespace``; None if malformed.

        With a namespace (Kimi-K2: ``functions.get_weather:0``) the whole token is the call id and the name
        is what sits between the namespace and the ``:index``; a bare counter (``0``) names the only tool of
        the request when there is exactly one.
        """
        ns = self.t.function_namespace
        if not ns:
            return raw, ""
        body = raw[len(ns) :] if raw.startswith(ns) else raw
        m = _INDEXED_RX.match(body)
        if m is None:
            return None
        name = m.group("name")
        if name.isdigit() and m.group("idx") is None:
            tools = self.m.tools
            if tools is not None and len(tools) == 1:
                return next(iter(tools)), raw
            return None  # several tools: see TagParser's inference from the arguments
        if not re.fullmatch(r"[\w\-/@$]+", name):
            return None
        return name, raw
