"""Parsing a case's output back, one-shot and at random chunkings, and comparing it with the input."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.validate.cases import ROUND_TRIP_TOOLS
from workbench.validate.report import ERROR, FAIL, PASS


def compare_messages(expected: dict[str, Any], parsed: dict[str, Any], *, compare_ids: bool) -> list[str]:
    """Differences between an expected and a parsed message (parse-contract dicts), one line each.

    Text is compared without leading/trailing whitespace (templates trim and pad content); arguments are
    compared as JSON values where ``true`` is not ``1``; ids only when the format carries them.
    """
    out: list[str] = []
    for key in ("content", "reasoning_content"):
        want, got = (expected.get(key) or "").strip(), (parsed.get(key) or "").strip()
        if want != got:
            out.append(f"{key}: expected {want!r}, got {got!r}")
    want_calls, got_calls = expected.get("tool_calls") or [], parsed.get("tool_calls") or []
    if len(want_calls) != len(got_calls):
        out.append(f"tool_calls: expected {len(want_calls)}, got {len(got_calls)}")
    for i, (w, g) in enumerate(zip(want_calls, got_calls, strict=False)):
        if w.get("name") != g.get("name"):
            out.append(f"tool_calls[{i}].name: expected {w.get('name')!r}, got {g.get('name')!r}")
        if not json_equal(w.get("arguments"), g.get("arguments")):
            out.append(
                f"tool_calls[{i}].arguments: expected {_short(w.get('arguments'))}, "
                f"got {_short(g.get('arguments'))}"
            )
        if compare_ids and (w.get("id") or "") != (g.get("id") or ""):
            out.append(f"tool_calls[{i}].id: expected {w.get('id')!r}, got {g.get('id')!r}")
    return out


def json_equal(a: Any, b: Any) -> bool:
    """JSON value equality where booleans are not numbers (Python's ``True == 1`` is wrong here)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------------------------------------ parsing
ParseFn = Callable[[FormatSpec, str, Sequence[Tool], bool, Sequence[int] | None], dict[str, Any]]


def parse_output(
    spec: FormatSpec, text: str, tools: Sequence[Tool], thinking_opened: bool, cuts: Sequence[int] | None
) -> dict[str, Any]:
    """Parse ``text`` with the spec's stream parser, fed in one piece (``cuts=None``) or cut at ``cuts``."""
    from workbench.runtime.parsing import ParseOptions, StreamParser

    parser = StreamParser(
        spec, list(tools), options=ParseOptions(enable_thinking=True, thinking_opened=thinking_opened)
    )
    last = 0
    for cut in [*(cuts or ()), len(text)]:
        parser.feed(text[last:cut])
        last = cut
    return parser.finish().message.to_contract()


def chunkings(text: str, seed: str, count: int = 3) -> list[list[int]]:
    """Deterministic random cut points (seeded by the case id), plus one cut between every character."""
    rng = random.Random(seed)
    out = [list(range(1, len(text)))]
    for _ in range(count):
        k = rng.randint(1, max(1, len(text) // 3))
        out.append(sorted(rng.sample(range(1, len(text)), min(k, max(0, len(text) - 1)))))
    return out


def check_output(
    spec: FormatSpec,
    case_id: str,
    output: str,
    expected: dict[str, Any],
    *,
    thinking_opened: bool,
    compare_ids: bool,
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS,
    parse: ParseFn = parse_output,
) -> tuple[str, str, dict[str, Any] | None, tuple[str, ...]]:
    """Parse ``output`` one-shot and at random chunkings; return (status, reason, parsed, mismatches)."""
    try:
        parsed = parse(spec, output, tools, thinking_opened, None)
    except Exception as exc:  # a parser crash is a finding, not a reason to stop validating
        return ERROR, f"the parser raised {type(exc).__name__}: {exc}", None, ()
    mismatches = compare_messages(expected, parsed, compare_ids=compare_ids)
    if mismatches:
        return FAIL, "one-shot parse differs from the input: " + mismatches[0], parsed, tuple(mismatches)
    for i, cuts in enumerate(chunkings(output, case_id)):
        label = "one character at a time" if i == 0 else f"random chunking #{i} ({len(cuts) + 1} chunks)"
        try:
            streamed = parse(spec, output, tools, thinking_opened, cuts)
        except Exception as exc:
            return ERROR, f"the parser raised {type(exc).__name__} when fed {label}: {exc}", parsed, ()
        diff = compare_messages(expected, streamed, compare_ids=compare_ids)
        if diff:
            return FAIL, f"streamed {label}, the parse differs: {diff[0]}", parsed, tuple(diff)
    return PASS, "", parsed, ()
