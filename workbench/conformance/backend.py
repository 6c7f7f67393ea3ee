"""The parser the runner drives, behind a small seam so the runner can be tested with a fake.

The real backend is ``workbench.runtime.parsing`` (``parse``, ``StreamParser``, ``ParseOptions``).  The runner
only needs what :class:`Backend` lists; tests pass a tiny fake that honours the same contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any, Protocol

from workbench.engines.policies import parse_options
from workbench.runtime.chat import Message
from workbench.runtime.events import Diagnostic, Event
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.spec import FormatSpec


class Result(Protocol):
    """``workbench.runtime.parsing.ParseResult``'s shape: the finished message and the diagnostics."""

    @property
    def message(self) -> Message: ...

    @property
    def diagnostics(self) -> Sequence[Diagnostic]: ...


class Stream(Protocol):
    """``workbench.runtime.parsing.StreamParser``'s shape: events per feed, the partial parse, the finished
    one."""

    def feed(self, text: str) -> list[Event]: ...

    def current(self) -> Message: ...

    def finish(self) -> Result: ...


class Backend(Protocol):
    """What the runner needs from a parser implementation (options stay opaque: a fake may use dicts)."""

    def make_options(self, values: dict[str, Any], profile: str, streaming: bool) -> tuple[Any, list[str]]:
        """Parse options for the request switches under an engine profile, plus what is not supported."""
        ...

    def stream(self, spec: FormatSpec, tools: Sequence[Any] | None, options: Any) -> Stream: ...

    def parse(self, spec: FormatSpec, text: str, tools: Sequence[Any] | None, options: Any) -> Result: ...


class ParsingBackend:
    """``workbench.runtime.parsing`` as a :class:`Backend`."""

    def make_options(self, values: dict[str, Any], profile: str, streaming: bool) -> tuple[Any, list[str]]:
        known = {f.name for f in fields(ParseOptions)}
        unsupported = [repr(k) for k in values if k not in known]
        kept = {k: v for k, v in values.items() if k in known}
        return parse_options(profile, streaming=streaming, **kept), unsupported

    def stream(self, spec: FormatSpec, tools: Sequence[Any] | None, options: Any) -> Stream:
        return StreamParser(spec, tools, options=options)

    def parse(self, spec: FormatSpec, text: str, tools: Sequence[Any] | None, options: Any) -> Result:
        return parse(spec, text, tools, options)
