"""Streaming invariants every streamed run must keep, whatever the case expects.

These are the parser's own contract (issue 3, "Streaming semantics") and llama.cpp's harness rule 4
("content, reasoning and argument text may only grow, and a tool call's name and id may not change once
they have been sent").  OpenAI deltas are the growth of the message between two partial parses
(``current()`` after each feed), so the rules are checked on successive partial parses and between the last
partial parse and the finished message:

- content, reasoning and each call's argument text only grow;
- a call's name and id never change once sent, and its argument text never grows before its name is known
  (so no name that is only a prefix of the real one is ever sent);
- calls are never taken back, except a call dropped *with a diagnostic* (DeepSeek RFC §3.2.6 drops a call
  whose JSON turns out invalid when it closes, after its deltas were necessarily sent);
- events have a known kind, and tool events carry call indices that count 0, 1, 2, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.streaming.observed import Observed, ObservedCall, show

EVENT_KINDS = frozenset({"reasoning", "content", "tool_name", "tool_args", "tool_id", "marker"})


def event_violations(events: Sequence[Any]) -> list[str]:
    """Structural problems in one stream's events (kinds and tool indices)."""
    out: list[str] = []
    highest = -1
    for n, ev in enumerate(events):
        if ev.kind not in EVENT_KINDS:
            out.append(f"event #{n}: unknown kind {ev.kind!r}")
            continue
        if ev.kind not in ("tool_name", "tool_args", "tool_id"):
            continue
        index = ev.tool_index
        if not isinstance(index, int) or index < 0:
            out.append(f"event #{n} ({ev.kind}): tool_index {index!r} is not a call index")
        elif index > highest:
            if index != highest + 1:
                out.append(f"event #{n} ({ev.kind}): call index {index} skips {highest + 1}")
            highest = index
    return out


def nameless_calls(snapshot: Observed, *, where: str) -> list[str]:
    """Calls whose argument text is visible before their name is (the name must be sent first)."""
    return [
        f"{where}: call {i} has arguments {show(c.arguments)} before a name"
        for i, c in enumerate(snapshot.tool_calls)
        if c.arguments and not c.name
    ]


def continuity_violations(before: Observed, after: Observed, *, where: str, drops_allowed: bool) -> list[str]:
    """What ``after`` (a later partial parse, or the finished message) takes back from ``before``."""
    out: list[str] = []
    for field, sent, kept in (
        ("content", before.content, after.content),
        ("reasoning_content", before.reasoning_content, after.reasoning_content),
    ):
        if sent and not (kept or "").startswith(sent):
            out.append(f"{where}: {field} changed from {show(sent)} to {show(kept or '')}")
    dropped: list[int] = []
    matched: set[int] = set()  # indices of ``after`` calls that continue a call of ``before``
    i = 0
    for k, kept_call in enumerate(after.tool_calls):
        while i < len(before.tool_calls) and not _continues(before.tool_calls[i], kept_call):
            dropped.append(i)
            i += 1
        if i == len(before.tool_calls):
            break  # new calls: nothing was sent for them before
        matched.add(k)
        i += 1
    if len(after.tool_calls) <= len(before.tool_calls):
        dropped.extend(range(i, len(before.tool_calls)))
    if dropped and not drops_allowed:
        changes = []
        for d in dropped:
            new = after.tool_calls[d] if d < len(after.tool_calls) and d not in matched else None
            changes.append(_describe_change(d, before.tool_calls[d], new))
        out.append(f"{where}: " + "; ".join(changes))
    return out


def _continues(sent: ObservedCall, kept: ObservedCall) -> bool:
    if sent.name and sent.name != kept.name:
        return False
    if sent.id and sent.id != kept.id:
        return False
    return kept.arguments.startswith(sent.arguments)


def _describe_change(index: int, old: ObservedCall, new: ObservedCall | None) -> str:
    if new is None:
        return f"call {index} ({show(old.name)}) taken back without a diagnostic"
    if old.name and old.name != new.name:
        return f"call {index} name changed {show(old.name)} -> {show(new.name)}"
    if old.id and old.id != new.id:
        return f"call {index} id changed {show(old.id)} -> {show(new.id)}"
    return f"call {index} arguments changed {show(old.arguments)} -> {show(new.arguments)}"
