"""Parsing a case's output back, one-shot and at random chunkings, and comparing it with the input."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.validate.cases import ROUND_TRIP_TOOLS
from workbench.validate.report import ERROR, FAIL, PASS


def compare_messages(
    expected: dict[str, Any],
    parsed: dict[str, Any],
    *,
    compare_ids: bool,
    exact: bool = False,
    words: tuple[str, str] = ("expected", "got"),
) -> list[str]:
    """Differences between an expected and a parsed message (parse-contract dicts), one line each.

    The one message comparison (validation, the exports' proofs, session replay).  Text is compared without
    leading/trailing whitespace (templates trim and pad content) unless ``exact`` (a replay: the same parser
    on the same text); arguments are compared as JSON values where ``true`` is not ``1``; ids only when the
    format carries them.  ``words`` name the two sides in the lines (``("recorded", "replayed")``).
    """
    want_word, got_word = words
    out: list[str] = []
    for key in ("content", "reasoning_content"):
        want, got = expected.get(key) or "", parsed.get(key) or ""
        if not exact:
            want, got = want.strip(), got.strip()
        if want != got:
            out.append(f"{key}: {want_word} {want!r}, {got_word} {got!r}")
    want_calls, got_calls = expected.get("tool_calls") or [], parsed.get("tool_calls") or []
    if len(want_calls) != len(got_calls):
        out.append(f"tool_calls: {want_word} {len(want_calls)}, {got_word} {len(got_calls)}")
    for i, (w, g) in enumerate(zip(want_calls, got_calls, strict=False)):
        if w.get("name") != g.get("name"):
            out.append(f"tool_calls[{i}].name: {want_word} {w.get('name')!r}, {got_word} {g.get('name')!r}")
        if not json_equal(w.get("arguments"), g.get("arguments")):
            out.append(
                f"tool_calls[{i}].arguments: {want_word} {_short(w.get('arguments'))}, "
                f"{got_word} {_short(g.get('arguments'))}"
            )
        if compare_ids and (w.get("id") or "") != (g.get("id") or ""):
            out.append(f"tool_calls[{i}].id: {want_word} {w.get('id')!r}, {got_word} {g.get('id')!r}")
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
#: A streamed parse as a client sees it: the text fed in ``pieces``; the finished message (a parse
#: contract) and the streaming invariants it broke on the way (what was sent and later taken back).
StreamFn = Callable[[FormatSpec, Sequence[str], Sequence[Tool]], tuple[dict[str, Any], list[str]]]


def parse_output(
    spec: FormatSpec, text: str, tools: Sequence[Tool], thinking_opened: bool, cuts: Sequence[int] | None
) -> dict[str, Any]:
    """Parse ``text`` with the spec's stream parser, fed in one piece (``cuts=None``) or cut at ``cuts``."""
    from workbench.runtime.parsing import StreamParser

    parser = StreamParser(spec, list(tools), options=_options(thinking_opened))
    last = 0
    for cut in [*(cuts or ()), len(text)]:
        parser.feed(text[last:cut])
        last = cut
    return parser.finish().message.to_contract()


def _options(thinking_opened: bool, start_stage: str | None = None) -> Any:
    from workbench.runtime.parsing import ParseOptions

    return ParseOptions(enable_thinking=True, thinking_opened=thinking_opened, start_stage=start_stage)


def stream_contract(
    spec: FormatSpec, pieces: Sequence[str], tools: Sequence[Tool], options: Any
) -> tuple[dict[str, Any], list[str]]:
    """Feed ``pieces`` to the spec's stream parser as a server streams a model's output, and read the
    message after every feed, as the deltas a client receives are computed from it.  Returns the finished
    message and the streaming invariants broken (``workbench.streaming.invariants``, the runner's own
    checks): text or arguments already sent and then changed, a call's arguments before its name, a call
    taken back without a diagnostic."""
    from workbench.runtime.parsing import StreamParser
    from workbench.streaming.invariants import continuity_violations, nameless_calls
    from workbench.streaming.observed import observed_from_message

    parser = StreamParser(spec, list(tools), options=options)
    violations: list[str] = []
    before = observed_from_message(parser.current())
    for n, piece in enumerate(pieces, start=1):
        parser.feed(piece)
        after = observed_from_message(parser.current())
        where = f"after feed #{n}"
        violations += nameless_calls(after, where=where)
        violations += continuity_violations(before, after, where=where, drops_allowed=False)
        before = after
    finished = parser.finish()
    final = observed_from_message(finished.message, finished.diagnostics)
    drops = any(d.severity != "info" for d in finished.diagnostics)
    violations += continuity_violations(before, final, where="at finish", drops_allowed=drops)
    return finished.message.to_contract(), violations


def streamed_from_prompt(thinking_opened: bool) -> StreamFn:
    """The built-in parser streamed with the options validation parses a round-trip case with."""

    def stream(
        spec: FormatSpec, pieces: Sequence[str], tools: Sequence[Tool]
    ) -> tuple[dict[str, Any], list[str]]:
        return stream_contract(spec, pieces, tools, _options(thinking_opened))

    return stream


def feeding_runs(text: str, key: str) -> list[tuple[str, tuple[str, ...] | None]]:
    """How a case's output is fed: one-shot (``None``), one character at a time and three seeded random
    chunkings: the conformance runner's runs (``streaming.chunks.chunk_runs``), seeded by the case id so a
    report is the same every time."""
    from workbench.streaming.chunks import chunk_runs

    return chunk_runs(text, key)


_RUN_WORDS = {"per_char": "one character at a time"}


def run_label(name: str, pieces: Sequence[str]) -> str:
    """``one character at a time`` / ``random chunking random-2 (14 chunks)``."""
    return _RUN_WORDS.get(name) or f"random chunking {name} ({len(pieces)} chunks)"


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
    stream: StreamFn | None = None,
    streamed: bool = True,
) -> tuple[str, str, dict[str, Any] | None, tuple[str, ...]]:
    """Parse ``output`` one-shot, then (``streamed``) streamed one character at a time and at seeded random
    chunkings; return (status, reason, parsed, mismatches).

    Streamed runs go through ``stream`` when given (the built-in parser, read after every feed: a value
    sent to the client and later changed fails the case even when the finished message is right), else
    through ``parse`` with the chunk boundaries as cuts.
    """
    try:
        parsed = parse(spec, output, tools, thinking_opened, None)
    except Exception as exc:  # a parser crash is a finding, not a reason to stop validating
        return ERROR, f"the parser raised {type(exc).__name__}: {exc}", None, ()
    mismatches = compare_messages(expected, parsed, compare_ids=compare_ids)
    if mismatches:
        return FAIL, "one-shot parse differs from the input: " + mismatches[0], parsed, tuple(mismatches)
    for name, pieces in feeding_runs(output, case_id) if streamed else ():
        if pieces is None:
            continue
        label = run_label(name, pieces)
        violations: list[str] = []
        try:
            if stream is not None:
                fed, violations = stream(spec, pieces, tools)
            else:
                fed = parse(spec, output, tools, thinking_opened, _cuts(pieces))
        except Exception as exc:
            return ERROR, f"the parser raised {type(exc).__name__} when fed {label}: {exc}", parsed, ()
        diff = compare_messages(expected, fed, compare_ids=compare_ids)
        if diff:
            return FAIL, f"streamed {label}, the parse differs: {diff[0]}", parsed, tuple(diff)
        if violations:
            return (
                FAIL,
                f"streamed {label}, the client is sent text that is later changed: {violations[0]}",
                parsed,
                tuple(violations),
            )
    return PASS, "", parsed, ()


def _cuts(pieces: Sequence[str]) -> list[int]:
    """Chunk boundaries as offsets into the joined text."""
    out, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        out.append(at)
    return out
