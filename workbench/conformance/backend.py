"""The parser the runner drives, behind a small seam so the runner can be tested with a fake.

The real backend is ``workbench.parsing`` (``parse``, ``StreamParser``, ``ParseOptions``).  The runner only
needs what :class:`Backend` lists; tests pass a tiny fake that honours the same contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Any, Protocol


class Stream(Protocol):
    """``workbench.parsing.StreamParser``'s shape: events per feed, the partial parse, the finished one."""

    def feed(self, text: str) -> list[Any]: ...

    def current(self) -> Any: ...

    def finish(self) -> Any: ...


class Backend(Protocol):
    """What the runner needs from a parser implementation."""

    def make_options(self, values: dict[str, Any], profile: str, streaming: bool) -> tuple[Any, list[str]]:
        """Parse options for the request switches under an engine profile, plus what is not supported."""
        ...

    def stream(self, spec: Any, tools: Sequence[Any] | None, options: Any) -> Stream: ...

    def parse(self, spec: Any, text: str, tools: Sequence[Any] | None, options: Any) -> Any: ...


class ParsingBackend:
    """``workbench.parsing`` as a :class:`Backend` (imported on first use: it is another stage)."""

    def __init__(self) -> None:
        import workbench.parsing as parsing

        self._parsing = parsing

    def make_options(self, values: dict[str, Any], profile: str, streaming: bool) -> tuple[Any, list[str]]:
        cls = self._parsing.ParseOptions
        known = {f.name for f in fields(cls)} if is_dataclass(cls) else set(values)
        unsupported = [repr(k) for k in values if k not in known]
        kept = {k: v for k, v in values.items() if k in known}
        for_engine = getattr(cls, "for_engine", None)
        if for_engine is not None:
            return for_engine(profile, streaming=streaming, **kept), unsupported
        if profile != "workbench":
            unsupported.append(f"engine profile {profile!r}")
        return cls(**kept), unsupported

    def stream(self, spec: Any, tools: Sequence[Any] | None, options: Any) -> Stream:
        parser: Stream = self._parsing.StreamParser(spec, tools, options=options)
        return parser

    def parse(self, spec: Any, text: str, tools: Sequence[Any] | None, options: Any) -> Any:
        return self._parsing.parse(spec, text, tools, options)
