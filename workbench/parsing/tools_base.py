"""The small base every tool-call format implements (one file per format, as SGLang's detectors).

The turn machine (:mod:`workbench.parsing.turn`) finds a *trigger* (the first marker of a tool call) in the
content, asks the format whether a real call header follows (:meth:`ToolFormat.header`, a pure bounded
lookahead: nothing is emitted if the answer is no, so the text stays content), and then lets the format
parse the whole section (:meth:`ToolFormat.section`) until it returns to content.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from workbench.parsing.core import Gen
from workbench.parsing.markers import MarkerSet, core_of, marker_set

if TYPE_CHECKING:
    from workbench.parsing.turn import TurnMachine

_INDEXED_RX = re.compile(r"^(?P<name>.+?)(?::(?P<idx>\d+))?$")


class ToolFormat:
    """Base class: subclasses set ``name`` and implement ``trigger_cores``, ``header`` and ``section``."""

    name = "none"
    #: True when the trigger is ordinary text (``{``, ``[``): a header that names an unknown tool is then
    #: prose, not a broken call.
    weak_trigger = False
    #: True when the format's markers also route plain content (functionary's ``>>>all``): its triggers
    #: stay active when tool parsing is off, and :meth:`header` declines the real calls itself.
    routes_content = False

    def __init__(self, machine: TurnMachine) -> None:
        self.m = machine
        self.t = machine.spec.tools

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
            return None
        if not re.fullmatch(r"[\w\-/@$]+", name):
            return None
        return name, raw
