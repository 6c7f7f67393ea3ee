"""The per-case checking rules of both suites, written from their READMEs.

llama.cpp (``../shared/conformance/llamacpp/README.md``, "How llama.cpp compares"):

1. ``content`` and ``reasoning_content`` are compared after trimming C ``isspace`` characters at both ends.
2. Same number of tool calls; each ``name`` and ``id`` exactly (an expected id ``""`` means none invented).
3. Arguments after a JSON round trip, **key order included**; if both sides fail to parse (cut-off
   arguments; the case gives ``arguments: null`` and ``arguments_text``) they count as equal.

Peers (``../shared/conformance/peers/README.md``, "expect"): only the keys present are checked; ``null`` and
``""`` are treated alike (our message type does not promise the vLLM distinction); ``arguments`` compares the
decoded JSON value (key order free), ``arguments_text`` the exact string; plus the partial checks
``content_contains`` & co., ``tool_calls_any_of``, ``no_crash`` and ``is_reasoning_end``; the workbench's
own case files (``workbench/data/conformance/``) add ``diagnostics_contains`` / ``diagnostics_excludes``,
diagnostic codes the finished parse must / must not report (OpenChatML's error taxonomy).

In both suites JSON values compare *typed*: ``true`` is not ``1`` and ``42`` is not ``42.0`` (vLLM's
"int stays int, float stays float"; llama.cpp's round trip prints them differently).  Python's ``==``
would call all of those equal.

Every function returns a list of differences, first one first, each a short sentence naming the field;
an empty list means the case passes.  Unknown expectation keys are reported as differences rather than
skipped, so a new kind of check in a case file can never pass silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.streaming.observed import Observed, ObservedCall, show

C_ISSPACE = " \t\n\v\f\r"
_MISSING = object()

LLAMACPP_KEYS = frozenset({"content", "reasoning_content", "tool_calls"})
PEER_KEYS = frozenset(
    {
        "content",
        "content_or_empty",
        "content_contains",
        "content_excludes",
        "content_startswith",
        "content_strip_startswith",
        "content_strip",
        "reasoning_content",
        "reasoning_contains",
        "tool_calls",
        "tool_calls_any_of",
        "no_crash",
        "is_reasoning_end",
        "diagnostics_contains",
        "diagnostics_excludes",
    }
)
PEER_CALL_KEYS = frozenset(
    {
        "name",
        "arguments",
        "arguments_text",
        "arguments_text_in",
        "arguments_text_startswith",
        "arguments_text_not_endswith",
        "id",
    }
)


# ----------------------------------------------------------------------------------------------- JSON values
def typed_equal(a: Any, b: Any, *, ordered: bool) -> bool:
    """JSON value equality that keeps bool/int/float apart and, if ``ordered``, object key order."""
    if isinstance(a, dict) and isinstance(b, dict):
        if ordered and list(a) != list(b):
            return False
        return a.keys() == b.keys() and all(typed_equal(a[k], b[k], ordered=ordered) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(typed_equal(x, y, ordered=ordered) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b):
        return False
    return bool(a == b)


def decode_json(text: str) -> Any:
    """The decoded JSON value of ``text``, or ``_MISSING`` when it is not (complete) JSON."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError, ValueError):
        return _MISSING


# ----------------------------------------------------------------------------------------------- llama.cpp
def c_trim(text: str | None) -> str:
    """llama.cpp's trim: C ``isspace`` characters only (Python's ``strip`` would also eat e.g. U+3000)."""
    return (text or "").strip(C_ISSPACE)


def check_llamacpp(expect: Mapping[str, Any], got: Observed) -> list[str]:
    """Differences between a llama.cpp ``expect`` and an observed message (llama.cpp's comparison)."""
    diffs = [f"unknown expectation key {k!r}" for k in expect if k not in LLAMACPP_KEYS]
    for key, actual in (("content", got.content), ("reasoning_content", got.reasoning_content)):
        if key in expect and c_trim(expect[key]) != c_trim(actual):
            diffs.append(f"{key}: expected {show(c_trim(expect[key]))}, got {show(c_trim(actual))} (trimmed)")
    if "tool_calls" in expect:
        diffs.extend(_llamacpp_calls(expect["tool_calls"] or [], got.tool_calls))
    return diffs


def _call_count_differs(expected: Sequence[Mapping[str, Any]], actual: Sequence[ObservedCall]) -> list[str]:
    """One line when the number of calls differs (the calls are then not compared one by one)."""
    if len(expected) == len(actual):
        return []
    return [
        f"tool_calls: expected {len(expected)} call(s) {show([c.get('name') for c in expected])}, "
        f"got {len(actual)} {show([c.name for c in actual])}"
    ]


def _llamacpp_calls(expected: Sequence[Mapping[str, Any]], actual: Sequence[ObservedCall]) -> list[str]:
    if len(expected) != len(actual):
        return _call_count_differs(expected, actual)
    diffs: list[str] = []
    for i, (want, have) in enumerate(zip(expected, actual, strict=True)):
        where = f"tool_calls[{i}]"
        if want.get("name") != have.name:
            diffs.append(f"{where}.name: expected {show(want.get('name'))}, got {show(have.name)}")
        if (want.get("id") or "") != have.id:
            diffs.append(f"{where}.id: expected {show(want.get('id') or '')}, got {show(have.id)}")
        diffs.extend(_llamacpp_arguments(where, want, have.arguments))
    return diffs


def _llamacpp_arguments(where: str, want: Mapping[str, Any], text: str) -> list[str]:
    actual = decode_json(text)
    expected = want.get("arguments")
    if expected is None and "arguments_text" in want:
        # Cut-off arguments: llama.cpp counts two unparsable sides as equal.
        if actual is _MISSING or text == want["arguments_text"]:
            return []
        cut = show(want["arguments_text"])
        return [f"{where}.arguments: expected cut-off text {cut}, got complete JSON {text}"]
    if actual is _MISSING:
        return [f"{where}.arguments: expected {show(expected)}, got text that is not JSON: {show(text)}"]
    if not typed_equal(expected, actual, ordered=True):
        order_only = typed_equal(expected, actual, ordered=False)
        note = " (same keys and values, different key order)" if order_only else ""
        return [f"{where}.arguments: expected {show(expected)}, got {show(actual)}{note}"]
    return []


# ----------------------------------------------------------------------------------------------- peers
def check_peer(expect: Mapping[str, Any], got: Observed) -> list[str]:
    """Differences between a peer ``expect`` and an observed message (README "expect" rules)."""
    diffs = [f"unknown expectation key {k!r}" for k in expect if k not in PEER_KEYS]
    content = got.content or ""
    reasoning = got.reasoning_content or ""
    for key in ("content", "content_or_empty"):
        if key in expect and (expect[key] or "") != content:
            diffs.append(f"{key}: expected {show(expect[key] or '')}, got {show(content)}")
    diffs += _inclusion(
        expect,
        "content",
        content.__contains__,
        lambda needle: f"{show(needle)} not in content {show(content)}",
        lambda needle: f"{show(needle)} found in content {show(content)}",
    )
    start = expect.get("content_startswith")
    if start is not None and not content.startswith(start):
        diffs.append(f"content_startswith: content {show(content)} does not start with {show(start)}")
    if "content_strip_startswith" in expect and not content.strip().startswith(
        expect["content_strip_startswith"]
    ):
        diffs.append(
            f"content_strip_startswith: stripped content {show(content.strip())} does not start with "
            f"{show(expect['content_strip_startswith'])}"
        )
    if "content_strip" in expect and content.strip() != expect["content_strip"]:
        diffs.append(f"content_strip: expected {show(expect['content_strip'])}, got {show(content.strip())}")
    if "reasoning_content" in expect and (expect["reasoning_content"] or "") != reasoning:
        diffs.append(
            f"reasoning_content: expected {show(expect['reasoning_content'] or '')}, got {show(reasoning)}"
        )
    for needle in expect.get("reasoning_contains", ()):
        if needle not in reasoning:
            diffs.append(f"reasoning_contains: {show(needle)} not in reasoning {show(reasoning)}")
    if "tool_calls" in expect:
        diffs.extend(peer_calls_differences(expect["tool_calls"] or [], got.tool_calls))
    if "tool_calls_any_of" in expect:
        options = expect["tool_calls_any_of"]
        results = [peer_calls_differences(alt, got.tool_calls) for alt in options]
        if options and all(results):
            firsts = "; ".join(f"option {i}: {r[0]}" for i, r in enumerate(results))
            diffs.append(f"tool_calls_any_of: no option matches ({firsts})")
    if "is_reasoning_end" in expect and got.reasoning_ended is not expect["is_reasoning_end"]:
        diffs.append(f"is_reasoning_end: expected {expect['is_reasoning_end']}, got {got.reasoning_ended}")
    codes = set(got.diagnostics)
    diffs += _inclusion(
        expect,
        "diagnostics",
        codes.__contains__,
        lambda code: f"{code} not among {show(sorted(codes))}",
        lambda code: f"{code} was reported",
    )
    # ``no_crash`` holds by construction once we have an Observed: a raised exception never gets here.
    return diffs


def peer_calls_differences(
    expected: Sequence[Mapping[str, Any]], actual: Sequence[ObservedCall]
) -> list[str]:
    """Differences for one expected list of calls (also used for each ``tool_calls_any_of`` option)."""
    if len(expected) != len(actual):
        return _call_count_differs(expected, actual)
    diffs: list[str] = []
    for i, (want, have) in enumerate(zip(expected, actual, strict=True)):
        where = f"tool_calls[{i}]"
        got_text = show(have.arguments)
        diffs.extend(f"{where}: unknown expectation key {k!r}" for k in want if k not in PEER_CALL_KEYS)
        if "name" in want and want["name"] != have.name:
            diffs.append(f"{where}.name: expected {show(want['name'])}, got {show(have.name)}")
        if "id" in want and (want["id"] or "") != have.id:
            diffs.append(f"{where}.id: expected {show(want['id'] or '')}, got {show(have.id)}")
        if "arguments" in want:
            value, wanted = decode_json(have.arguments), show(want["arguments"])
            if value is _MISSING:
                diffs.append(f"{where}.arguments: expected {wanted}, got non-JSON {got_text}")
            elif not typed_equal(want["arguments"], value, ordered=False):
                diffs.append(f"{where}.arguments: expected {wanted}, got {show(value)}")
        if "arguments_text" in want and want["arguments_text"] != have.arguments:
            diffs.append(f"{where}.arguments_text: expected {show(want['arguments_text'])}, got {got_text}")
        if "arguments_text_in" in want and have.arguments not in want["arguments_text_in"]:
            options = show(want["arguments_text_in"])
            diffs.append(f"{where}.arguments_text_in: {got_text} is none of {options}")
        prefix = want.get("arguments_text_startswith")
        if prefix is not None and not have.arguments.startswith(prefix):
            diffs.append(f"{where}.arguments_text_startswith: {got_text} does not start with {show(prefix)}")
        suffix = want.get("arguments_text_not_endswith")
        if suffix is not None and have.arguments.endswith(suffix):
            diffs.append(
                f"{where}.arguments_text_not_endswith: {show(have.arguments)} ends with {show(suffix)}"
            )
    return diffs


def _inclusion(
    expect: Mapping[str, Any],
    field: str,
    has: Callable[[str], bool],
    missing: Callable[[str], str],
    found: Callable[[str], str],
) -> list[str]:
    """The ``FIELD_contains`` / ``FIELD_excludes`` expectations: every needle listed must (must not) be in
    what was observed; ``missing`` / ``found`` say how one failed.  Content and diagnostics are held to
    them alike, so the rule is written once."""
    diffs = [f"{field}_contains: {missing(n)}" for n in expect.get(f"{field}_contains", ()) if not has(n)]
    diffs += [f"{field}_excludes: {found(n)}" for n in expect.get(f"{field}_excludes", ()) if has(n)]
    return diffs
