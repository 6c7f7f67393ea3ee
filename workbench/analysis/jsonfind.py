"""Locating JSON values inside rendered text: the analyzer's one heuristic (as in llama.cpp).

Whether a function name sits *inside* a JSON document (``{"name": "foofoo", ...}``) or *outside* it, in
tags (``<function=foofoo>{...}``), decides between the JSON-native and the tag formats.  The test is a real
JSON parse: every ``{`` or ``[`` before the needle is tried as the start of a JSON value, outermost first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class JsonSpan:
    start: int
    end: int
    value: Any


def find_json_containing(text: str, pos: int, lo: int = 0, hi: int | None = None) -> JsonSpan | None:
    """The outermost JSON object/array within ``text[lo:hi]`` that spans position ``pos`` (pure)."""
    hi = len(text) if hi is None else hi
    for p in range(lo, min(pos, hi)):
        if text[p] not in "{[":
            continue
        try:
            value, end = _DECODER.raw_decode(text, p)
        except json.JSONDecodeError:
            continue
        if end > pos and end <= hi:
            return JsonSpan(p, end, value)
    return None


def contains_string(value: Any, needle: str) -> bool:
    """True when ``needle`` is a string value or an object key anywhere in ``value`` (pure)."""
    if isinstance(value, str):
        return value == needle
    if isinstance(value, dict):
        return needle in value or any(contains_string(v, needle) for v in value.values())
    if isinstance(value, list):
        return any(contains_string(v, needle) for v in value)
    return False


def key_with_value(obj: dict[str, Any], wanted: Any) -> str:
    """The first key of ``obj`` whose value equals ``wanted`` (also as JSON text); ``""`` if none (pure)."""
    for k, v in obj.items():
        if v == wanted:
            return str(k)
        if isinstance(v, str) and not isinstance(wanted, str):
            try:
                if json.loads(v) == wanted:
                    return str(k)
            except json.JSONDecodeError:
                continue
    return ""
