"""OpenAI ``chat.completion.chunk`` deltas from a streaming parser.

Deltas are computed from the growth of the parser's message log rather than from event texts: for tagged
and Python-style calls the arguments JSON is built by the parser and is not the model's characters, while
the message log only ever grows.  That gives the client-side guarantees by construction: text deltas add up
to the message, a call's first delta carries its complete name (and id), argument fragments concatenate to
exactly its arguments JSON, and tool indices are 0, 1, ...
"""

from __future__ import annotations

from typing import Any

from workbench.runtime.parsing.builder import CallLog, MessageBuilder
from workbench.runtime.parsing.options import ParseResult


class DeltaTracker:
    """Remembers what was already sent for one :class:`~workbench.runtime.parsing.stream.StreamParser`."""

    def __init__(self, parser: Any) -> None:
        self._parser = parser
        self._content = 0
        self._reasoning = 0
        self._args_sent: dict[int, int] = {}
        # Calls before this index are finished and fully sent: they can never grow again, so ``take`` starts
        # here and its cost follows what grew, not how many calls the output already holds.
        self._settled = 0

    def take(self) -> list[dict[str, Any]]:
        """The deltas for everything that grew since the last call (does not change the parser)."""
        log: MessageBuilder = self._parser.builder
        out: list[dict[str, Any]] = []
        if len(log.reasoning) > self._reasoning:
            out.append({"reasoning_content": "".join(log.reasoning[self._reasoning :])})
            self._reasoning = len(log.reasoning)
        if len(log.content) > self._content:
            out.append({"content": "".join(log.content[self._content :])})
            self._content = len(log.content)
        calls = log.calls
        for i in range(self._settled, len(calls)):
            self._take_call(calls[i], out)
        while self._settled < len(calls) and self._is_settled(calls[self._settled]):
            self._settled += 1
        return out

    def _is_settled(self, call: CallLog) -> bool:
        """True when ``call`` will never produce another delta (closed or dropped, and everything sent)."""
        if not (call.closed or call.dropped):
            return False
        if call.name is None:
            return True
        sent = self._args_sent.get(call.index)
        return sent is not None and sent == len(call.args)

    def _take_call(self, call: CallLog, out: list[dict[str, Any]]) -> None:
        if call.name is None:
            return
        sent = self._args_sent.get(call.index)
        if sent is None:
            if call.id_expected and not call.id and not call.closed and not call.dropped:
                return  # the id comes later in this format: send name and id together
            out.append(
                {
                    "tool_calls": [
                        {
                            "index": call.index,
                            "id": call.id or None,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            sent = 0
        if len(call.args) > sent:
            fragment = "".join(call.args[sent:])
            out.append({"tool_calls": [{"index": call.index, "function": {"arguments": fragment}}]})
            sent = len(call.args)
        self._args_sent[call.index] = sent


def chunk(
    delta: dict[str, Any], *, finish_reason: str | None = None, chunk_id: str = "chatcmpl-workbench"
) -> dict[str, Any]:
    """An OpenAI ``chat.completion.chunk`` object around one delta."""
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def finish_reason(result: ParseResult) -> str:
    """``length`` when the output ended inside a call's arguments (:attr:`ParseResult.cut_calls`: the pieces
    already streamed are not a call that was made), else ``tool_calls`` when the message calls tools, else
    ``stop``."""
    if result.cut_calls:
        return "length"
    return "tool_calls" if result.message.tool_calls else "stop"
