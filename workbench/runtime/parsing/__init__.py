"""Parsers generated from a FormatSpec: one-shot and streaming (see ARCHITECTURE.md, docs/INTERFACES.md).

``StreamParser(spec, tools, options=...)`` reads a model output chunk by chunk and yields events (every
input character, coloured by kind); ``parse`` is the same machine fed once.  ``DeltaTracker`` turns the
parser's growing message into OpenAI ``chat.completion.chunk`` deltas.

Where serving engines disagree about what an output means, :class:`ParseOptions` names the choice as a
policy; :func:`workbench.engines.policies.parse_options` selects the policies one serving engine follows
(see :mod:`workbench.runtime.parsing.options`).
"""

from workbench.runtime.parsing.deltas import DeltaTracker
from workbench.runtime.parsing.options import ParseOptions, ParseResult
from workbench.runtime.parsing.stream import Snapshot, StreamParser, parse, parse_events

__all__ = [
    "DeltaTracker",
    "ParseOptions",
    "ParseResult",
    "Snapshot",
    "StreamParser",
    "parse",
    "parse_events",
]
