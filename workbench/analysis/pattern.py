"""Learn a tool call as a pattern: literal text and typed slots (issue 10, spec v2 ``tools.pattern``).

The marker-field analysis (``tools.py``) reads a call through fixed fields (name prefix, argument tags...)
and only ever probes string arguments, so formats outside those fields come out silently wrong: an
argument tag that says the value's type (``text="no"``), values in an encoding of their own
(``{city:<|q|>Paris<|q|>}``), element markup with a call counter, an id before the name.  This phase renders
calls whose every part is a known needle, finds the needles, and keeps what lies between them as literals:

1. one call against a plain answer -> the call's text; the name, id and arguments needles in it give the
   slots; the arguments are JSON when their JSON is there, an *object* in an encoding of its own when the
   template writes ``{`` ... ``}`` around them otherwise, else *tagged* (one element per argument);
2. two calls -> what is written once per turn (section markers), once per call (call markers) and between
   calls, by the aligned common suffix/prefix of the text around the calls; literals that differ only in
   digits between the first and the second call hold the ``$index`` slot;
3. one argument of every JSON type -> how each type is written: per-type variants of a tagged argument's
   literals, or the encoding's string delimiters, key quoting and separators.

The pattern replaces the marker-field tools spec only when it reads the template's own renders back better
(:func:`adopt_pattern`), so formats that already work keep their spec.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from itertools import pairwise
from typing import Any

from workbench.analysis.diff import common_prefix_aligned, common_suffix_aligned, diff_split, marker_evidence
from workbench.analysis.probes import ARG_A, ARG_B, CONTENT_TEXT, FUNC_A, FUNC_B, ID_A, ID_B, TOOLS, USER
from workbench.analysis.probes import VALUE_A as _VALUE_A
from workbench.analysis.probes import VALUE_B as _VALUE_B
from workbench.runtime.spec import (
    ArgVariant,
    CallPattern,
    FormatSpec,
    ToolsSpec,
    ValueEncoding,
    literal_part,
    pattern_literal,
)
from workbench.template.render_cache import fingerprint

#: ``(messages, tools, add_generation_prompt) -> render`` (None when the template refuses the input).
Render = Callable[[list[dict[str, Any]], list[dict[str, Any]], bool], "str | None"]

_WS = " \t\r\n"
VALUE_A, VALUE_B = _VALUE_A, _VALUE_B
#: One value of every JSON type but string (strings are the probes' VALUE_A).
TYPED_VALUES: tuple[tuple[str, Any], ...] = (
    ("integer", 7),
    ("number", 2.5),
    ("boolean", True),
    ("null", None),
    ("array", [1, "ab"]),
    ("object", {"kk": 1}),
)
_ESCAPE_PROBE = 'q"b'


def _call(name: str, args: Mapping[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": dict(args)}}


def _conversation(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    msg: dict[str, Any] = {"role": "assistant", "content": CONTENT_TEXT}
    if calls:
        msg["tool_calls"] = list(calls)
    return [dict(USER), msg]


def typed_tools(calls: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The probe tools with each argument of the first call typed as its value: templates that write a
    value by its declared type, and parsers that read a raw value by it, then agree with the value."""
    from workbench.runtime.values import json_type

    args = calls[0]["function"]["arguments"] if calls else {}
    out = []
    for tool in TOOLS:
        fn = dict(tool["function"])
        params = dict(fn["parameters"])
        props = {k: dict(v) for k, v in params["properties"].items()}
        for key, value in args.items():
            if key in props:
                props[key]["type"] = json_type(value)
        fn["parameters"] = {**params, "properties": props}
        out.append({**tool, "function": fn})
    return out


@dataclass
class _Renders:
    """The learner's renders, each reduced to the region the call(s) take (None when not rendered)."""

    render: Render
    end_markers: Sequence[str]

    def region(self, *calls: dict[str, Any]) -> str | None:
        tools = typed_tools(calls)
        base = self.render(_conversation(), tools, False)
        text = self.render(_conversation(*calls), tools, False)
        if base is None or text is None:
            return None
        out = self._cut(base, text)
        if out is not None and CONTENT_TEXT in out:
            # the answer's text is written otherwise beside calls (an agent's '<report>' or 'Plan: ' when it
            # calls, its answer when not): the calls are what a turn of calls alone writes instead
            calls_only = {"role": "assistant", "content": None, "tool_calls": list(calls)}
            alone = self.render([dict(USER), calls_only], tools, False)
            cut = self._cut(base, alone) if alone is not None else None
            if cut is not None and CONTENT_TEXT not in cut:
                return cut
        return out

    def _cut(self, base: str, text: str) -> str | None:
        """What ``text`` writes instead of ``base``'s answer, up to the turn's end."""
        d = diff_split(base, text)
        start, end = len(d.prefix), len(text) - len(d.suffix)
        while start < end and text[start] in _WS:
            start += 1
        # The turn ends at its end marker, whatever the diff aligned after it (DeepSeek-R1's
        # "<｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜Assistant｜>"): a model stops there, so calls do too.
        cuts = [text.find(m.strip(), start, end) for m in self.end_markers if m.strip()]
        cuts = [c for c in cuts if c > start]
        if cuts:
            end = min(cuts)
        moved = True
        while moved:
            moved = False
            while end > start and text[end - 1] in _WS:
                end -= 1
            for m in self.end_markers:
                if m and end - len(m) >= start and text.startswith(m, end - len(m)):
                    end -= len(m)
                    moved = True
        return text[start:end] if end > start else None


@dataclass(frozen=True)
class _Slots:
    """Where the slots of one call sit in a region: ``(start, end, slot)`` sorted."""

    spans: tuple[tuple[int, int, str], ...]

    @property
    def first(self) -> int:
        return self.spans[0][0]

    @property
    def last(self) -> int:
        return self.spans[-1][1]


def _find_slots(region: str, name: str, call_id: str, args_text: str, after: int = 0) -> _Slots | None:
    at = region.find(name, after)
    if at < 0:
        return None
    spans = [(at, at + len(name), "$name")]
    i = region.find(call_id, after)
    if call_id and i >= 0:
        spans.append((i, i + len(call_id), "$id"))
    if args_text:
        a = region.find(args_text, after)
        if a < 0:
            return None
        spans.append((a, a + len(args_text), "$args"))
    spans.sort()
    for (_, e1, _), (s2, _, _) in pairwise(spans):
        if s2 < e1:
            return None
    # The name written again outside the other slots (a header that names the function, then a JSON body
    # that names it too: ``NAME<|content_invoke_tool_json|>{"name":"NAME","args":{...}}``; an element
    # named after the function, closed after the arguments: ``<NAME>...</NAME>``): a slot too.
    end = spans[-1][1]
    again = region.find(name, at + len(name))
    while again >= 0:
        if again >= end and not closes_a_call(region, at, again):
            break
        if not any(s < again + len(name) and again < e for s, e, _ in spans):
            spans.append((again, again + len(name), "$name"))
        again = region.find(name, again + len(name))
    return _Slots(tuple(sorted(spans)))


def closes_a_call(region: str, at: int, again: int) -> bool:
    """Does the name written again at ``again``, after the call's other slots, close the element the name
    at ``at`` opened (``</NAME>`` after ``<NAME>``, ``[/NAME]`` after ``[NAME]``): the text in front of the
    second is the text in front of the first and a slash?"""
    opened, closing = region[:at], region[:again]
    for n in range(1, 4):
        head = opened[-n:] if n <= len(opened) else ""
        if head.strip() and closing.endswith(head + "/"):
            return True
    return False


def _json_spellings(value: Any) -> list[str]:
    return [
        json.dumps(value, ensure_ascii=False),
        json.dumps(value, ensure_ascii=False, separators=(",", ":")),
    ]


@dataclass
class _Args:
    kind: str
    one: str  # the arguments' text for {first: VALUE_A}
    empty_prefix: str = ""


def _arguments(r: _Renders, region: str) -> _Args | None:
    """How the arguments of the one-call render are written, and their text."""
    for spelling in _json_spellings({ARG_A: VALUE_A}):
        if spelling in region:
            return _Args("json", spelling)
    empty = r.region(_call(FUNC_A, {}, ID_A))
    if empty is None:
        return None
    d = diff_split(empty, region)
    if d.left and empty and region.startswith(d.prefix):
        # a unit found by a coincidence of characters across the value's edge ('"}}' of '{{#tool name="' ~
        # n ~ '"}}' in 'first="XXXX"}}') holds the common end back: the renders differ by the arguments
        # alone, so the plain split is the one (the needles fix both edges)
        with marker_evidence(None):
            d = diff_split(empty, region)
    if d.left or not d.right:
        return None
    if d.prefix.endswith("{") and d.suffix.startswith("}"):
        return _Args("object", "{" + d.right + "}")
    return _Args("tagged", d.right)


def _split_index(lit_a: str, lit_b: str, base_of_a: int) -> tuple[list[str], int] | None:
    """A literal that differs from the next call's only by a counter: (parts with $index, index base)."""
    i = 0
    while i < min(len(lit_a), len(lit_b)) and lit_a[i] == lit_b[i]:
        i += 1
    j = i
    while j < len(lit_a) and lit_a[j].isdigit():
        j += 1
    k = i
    while k < len(lit_b) and lit_b[k].isdigit():
        k += 1
    while i > 0 and lit_a[i - 1].isdigit():
        i -= 1
    if i == j or lit_a[j:] != lit_b[k:] or not lit_a[i:j].isdigit() or not lit_b[i:k].isdigit():
        return None
    if int(lit_b[i:k]) != int(lit_a[i:j]) + 1:
        return None
    parts = [p for p in (lit_a[:i],) if p] + ["$index"] + [p for p in (lit_a[j:],) if p]
    return parts, int(lit_a[i:j]) - base_of_a


def _core_parts(region: str, slots: _Slots) -> list[str]:
    out: list[str] = []
    for n, (_, e, slot) in enumerate(slots.spans):
        out.append(slot)
        if n + 1 < len(slots.spans):
            lit = region[e : slots.spans[n + 1][0]]
            if lit:
                out.append(lit)
    return out


def _encoding(r: _Renders, one_args: str) -> ValueEncoding | None:
    """The encoding of an object argument list, from renders of one argument of each type."""
    inner = one_args[1:-1]
    k = inner.find(ARG_A)
    if k < 0:
        return None
    key_quote = inner[:k]
    after_key = k + len(ARG_A) + len(key_quote)
    seven = r.region(_call(FUNC_A, {ARG_A: 7}, ID_A))
    if seven is None or "7" not in seven:
        return None
    s_inner = _between_braces(seven, key_quote + ARG_A)
    if s_inner is None:
        return None
    key_sep = s_inner[len(key_quote + ARG_A + key_quote) : s_inner.rfind("7")]
    v = inner.find(VALUE_A, after_key)
    if v < 0 or inner[after_key : after_key + len(key_sep)] != key_sep:
        return None
    string_open = inner[after_key + len(key_sep) : v]
    string_close = inner[v + len(VALUE_A) :]
    if not string_open or not string_close:
        return None
    two = r.region(_call(FUNC_A, {ARG_A: VALUE_A, ARG_B: VALUE_B}, ID_A))
    item_sep = ", "
    if two is not None:
        first_end = two.find(VALUE_A)
        nxt = two.find(key_quote + ARG_B, first_end)
        if first_end >= 0 and nxt > 0:
            item_sep = two[first_end + len(VALUE_A) + len(string_close) : nxt]
    escape = "none"
    esc = r.region(_call(FUNC_A, {ARG_A: _ESCAPE_PROBE}, ID_A))
    if esc is not None and json.dumps(_ESCAPE_PROBE)[1:-1] in esc and _ESCAPE_PROBE not in esc:
        escape = "json"
    return ValueEncoding(
        string_open=string_open,
        string_close=string_close,
        escape=escape,  # type: ignore[arg-type]
        key_quote=key_quote,
        key_sep=key_sep,
        item_sep=item_sep,
    )


def _between_braces(region: str, key: str) -> str | None:
    k = region.find(key)
    if k <= 0 or region[k - 1] != "{":
        return None
    depth, i = 0, k - 1
    while i < len(region):
        if region[i] == "{":
            depth += 1
        elif region[i] == "}":
            depth -= 1
            if depth == 0:
                return region[k:i]
        i += 1
    return None


def _arg_parts(text: str, key: str, value_text: str, like: Sequence[str] = ()) -> list[str] | None:
    """``text`` cut into literals around the argument's key and value (the first place the value is
    written after the key).

    ``like``: the parts of the string argument's way.  A value may be spelled inside the literal too (a
    null written ``type="null">null``): then the place whose literal after the value is the string
    way's is the value, as rendering the two types side by side shows; without such a place, the first.
    """
    k = text.find(key)
    if k < 0:
        return None
    found: list[list[str]] = []
    v = text.find(value_text, k + len(key))
    while v >= 0:
        before, between, after = text[:k], text[k + len(key) : v], text[v + len(value_text) :]
        parts = [literal_part(before), "$key", literal_part(between), "$value", *_closing(after, key)]
        found.append([p for p in parts if p])
        v = text.find(value_text, v + 1)
    if not found:
        return None
    tail = like[-1] if like and like[-1] != "$value" else None
    for parts in found:
        if tail is not None and parts[-1] == tail:
            return parts
    return found[0]


def _closing(after: str, key: str) -> list[str]:
    """The literal after an argument's value as parts: the key where the closing tag names it again
    (``</city>`` of ``<city>Paris</city>``, an element named by its key), found as a whole word."""
    at = after.find(key)
    while at >= 0:
        end = at + len(key)
        if (at == 0 or not after[at - 1].isalnum()) and (end == len(after) or not after[end].isalnum()):
            return [literal_part(after[:at]), "$key", literal_part(after[end:])]
        at = after.find(key, at + 1)
    return [literal_part(after)]


def _tagged_variants(r: _Renders, one_args: str, empty_call: str | None) -> list[ArgVariant] | None:
    """One way per JSON type of writing a tagged argument, merged where the literals agree."""
    ways: list[tuple[str, tuple[str, ...], str]] = []
    if f'"{VALUE_A}"' in one_args:
        parts = _arg_parts(one_args, ARG_A, f'"{VALUE_A}"')
        how = "json"
    elif f"'{VALUE_A}'" in one_args and _escapes_like_python(r, empty_call):
        parts = _arg_parts(one_args, ARG_A, f"'{VALUE_A}'")
        how = "python"
    else:
        parts = _arg_parts(one_args, ARG_A, VALUE_A)
        how = "raw"
    if parts is None:
        return None
    ways.append(("string", tuple(parts), how))
    ways += _typed_ways(r, empty_call, parts)
    raw = _strings_between_typed_literals(ways, one_args)
    if raw is not None:  # the other types read again beside the raw string's literals (a null among them)
        ways = [("string", raw, "raw"), *_typed_ways(r, empty_call, list(raw))]
    escaped = _xml_escaped(r, empty_call)
    return _merged_variants([(t, p, h, "xml" if _escaped_way(t, h, escaped) else "none") for t, p, h in ways])


def _typed_ways(
    r: _Renders, empty_call: str | None, parts: list[str]
) -> list[tuple[str, tuple[str, ...], str]]:
    """The way each JSON type but string is written, read beside the string's ``parts``."""
    ways: list[tuple[str, tuple[str, ...], str]] = []
    for type_name, value in TYPED_VALUES:
        region = r.region(_call(FUNC_A, {ARG_A: value}, ID_A))
        if region is None or empty_call is None:
            continue
        d = diff_split(empty_call, region)
        found = None
        spellings = [*((j, "json") for j in _json_spellings(value)), (repr(value), "python")]
        spellings += [(e, "json") for e in _xml_spellings(_json_spellings(value))]
        for spelling, how in spellings:
            found = _arg_parts(d.right, ARG_A, spelling, like=parts)
            if found is not None:
                if how == "python" and type_name in ("integer", "number"):
                    how = "json"  # 7 and 2.5 are the same in both
                break
        if value is None and (found is None or found[-1] != parts[-1]):
            # null written as nothing (``type="null"></arg>``): the word in the literal is not the value
            empty = _empty_value_parts(d.right, ARG_A, parts)
            if empty is not None:
                found, how = empty, "json"
        if found is not None:
            ways.append((type_name, tuple(found), how))
    return ways


def _strings_between_typed_literals(
    ways: list[tuple[str, tuple[str, ...], str]], one_args: str
) -> tuple[str, ...] | None:
    """The raw parts of a string read as JSON whose quotes are the literals another type is written
    between: the same closing literal, and the same character in front of the value (``key="VALUE"``
    beside ``key="7"``, ``type="text" value="V">`` beside ``type="number" value="7">``: an attribute's
    quotes); None when the string is JSON after all."""
    if not ways or ways[0][0] != "string" or ways[0][2] != "json":
        return None
    raw = _arg_parts(one_args, ARG_A, VALUE_A)
    if raw is None or "$value" not in raw:
        return None
    k = raw.index("$value")
    for type_name, p, _ in ways[1:]:
        same_place = type_name != "string" and len(p) == len(raw) and "$value" in p and p.index("$value") == k
        if (
            same_place
            and p[-1] == raw[-1]
            and k
            and pattern_literal(p[k - 1])[-1:] == pattern_literal(raw[k - 1])[-1:]
        ):
            return tuple(raw)
    return None


#: A string an XML-escaping template writes as entities (``&lt;``, ``&amp;``, ``&quot;`` or ``&#34;``).
_XML_PROBE = 'a<b&c"d'


def _xml_escaped(r: _Renders, empty_call: str | None) -> set[str]:
    """Which values the template writes XML-escaped: ``string`` (the text of a string) and ``json`` (the
    JSON text of an array), read off renders of a string and an array holding markup (empty: none)."""
    out: set[str] = set()
    if empty_call is None:
        return out
    for what, value in (("string", _XML_PROBE), ("json", [_XML_PROBE])):
        region = r.region(_call(FUNC_A, {ARG_A: value}, ID_A))
        if region is None:
            continue
        written = diff_split(empty_call, region).right
        text = _XML_PROBE if what == "string" else '["'
        if text not in written and text in html.unescape(written):
            out.add(what)
    return out


def _xml_spellings(texts: Sequence[str]) -> list[str]:
    """``texts`` XML-escaped as templates do (``&quot;`` or ``&#34;`` for a quote) where that changes them."""
    out: list[str] = []
    for text in texts:
        for escaped in (
            html.escape(text),
            html.escape(text).replace("&quot;", "&#34;").replace("&#x27;", "&#39;"),
        ):
            if escaped != text and escaped not in out:
                out.append(escaped)
    return out


def _escaped_way(type_name: str, how: str, escaped: set[str]) -> bool:
    """Is this way's value text XML-escaped?  A string's raw or JSON text as strings are; a JSON value of
    another type as an array's JSON text is (a number's text holds nothing to escape either way)."""
    if how not in ("raw", "json"):
        return False
    return ("string" if type_name == "string" else "json") in escaped


def _merged_variants(ways: Sequence[tuple[str, tuple[str, ...], str, str]]) -> list[ArgVariant]:
    """One variant per way of writing, types merged where the literals and the reading agree.  Where the
    literals agree, a Python-literal reading also takes the JSON-written types (numbers are spelled
    alike, and the Python reader reads JSON): a parser picks a variant by its literals alone."""
    merged: list[ArgVariant] = []
    for type_name, parts_t, how, escape in ways:
        for n, v in enumerate(merged):
            if (
                v.parts == parts_t
                and v.escape == escape
                and (v.value == how or {v.value, how} == {"python", "json"})
            ):
                value = "python" if "python" in (v.value, how) else v.value
                merged[n] = replace(v, types=(*v.types, type_name), value=value)
                break
        else:
            merged.append(
                ArgVariant(types=(type_name,), parts=parts_t, value=how, escape=escape)  # type: ignore[arg-type]
            )
    return merged


def _empty_value_parts(text: str, key: str, like: Sequence[str]) -> list[str] | None:
    """``text`` read as an argument whose value is written as nothing, right before the literal that
    closes the string way's value (``<arg name="k" type="null"></arg>``: the value is between ``>`` and
    ``</arg>``); None when ``text`` does not end with that literal after the key.  An empty JSON value
    reads as null."""
    if not like or like[-1].startswith("$"):
        return None
    tail = pattern_literal(like[-1])
    k = text.find(key)
    if k < 0 or not tail.strip(_WS) or not text.endswith(tail) or len(text) - len(tail) < k + len(key):
        return None
    v = len(text) - len(tail)
    parts = [literal_part(text[:k]), "$key", literal_part(text[k + len(key) : v]), "$value", like[-1]]
    return [p for p in parts if p]


#: A string a Python literal must escape (a quote and a backslash); a template that writes it raw does not.
_PY_ESCAPE_PROBE = "it's a\\b"


def _escapes_like_python(r: _Renders, empty_call: str | None) -> bool:
    """True when the template writes a string argument as a Python literal: a value holding a quote and a
    backslash reads back from its render with ``ast.literal_eval`` (Python-literal detection, the one
    heuristic besides JSON; a template that puts quotes around a raw value fails it)."""
    from workbench.runtime.values import NotJsonError, PythonExtent, python_literal

    region = r.region(_call(FUNC_A, {ARG_A: _PY_ESCAPE_PROBE}, ID_A))
    if region is None or empty_call is None:
        return False
    right = diff_split(empty_call, region).right
    at = right.find(ARG_A)
    if at < 0:
        return False
    for start in range(at + len(ARG_A), len(right)):
        if right[start] in "'\"":
            end, done = PythonExtent().advance(right, start, True)
            try:
                return done and python_literal(right[start:end]) == _PY_ESCAPE_PROBE
            except NotJsonError:
                return False
    return False


def learn_pattern(
    render: Render, end_markers: Sequence[str], *, renders: _Renders | None = None
) -> tuple[ToolsSpec | None, list[str]]:
    """The tools spec of a call pattern for the template behind ``render``; None (with why) when the
    needles cannot be found.  ``renders`` replaces the regions (the turn layout learns calls on outputs)."""
    notes: list[str] = []
    r = renders if renders is not None else _Renders(render, end_markers)
    one = r.region(_call(FUNC_A, {ARG_A: VALUE_A}, ID_A))
    if one is None:
        return None, ["the template renders no call"]
    args = _arguments(r, one)
    if args is None:
        return None, ["the arguments could not be located"]
    slots = _find_slots(one, FUNC_A, ID_A, args.one)
    if slots is None:
        return None, ["the call's slots overlap or are missing"]
    core = _core_parts(one, slots)
    x_pre, y_post = one[: slots.first], one[slots.last :]
    section_start, call_start, call_end, section_end, separator = "", x_pre, y_post, "", ""
    index_base = 0
    two = r.region(_call(FUNC_A, {ARG_A: VALUE_A}, ID_A), _call(FUNC_B, {ARG_A: VALUE_B}, ID_B))
    parallel = False
    if two is not None:
        s1 = _find_slots(two, FUNC_A, ID_A, args.one)
        s2 = (
            _find_slots(two, FUNC_B, ID_B, args.one.replace(VALUE_A, VALUE_B), s1.last)
            if s1 is not None
            else None
        )
        if s1 is not None and s2 is not None and two[: s1.first] == x_pre and two[s2.last :] == y_post:
            parallel = True
            middle = two[s1.last : s2.first]
            head = common_suffix_aligned(x_pre, middle)
            tail = common_prefix_aligned(y_post, middle)
            if len(head) + len(tail) > len(middle):
                tail = tail[: max(0, len(middle) - len(head))]
            call_start, call_end = head, tail
            section_start, section_end = x_pre[: len(x_pre) - len(head)], y_post[len(tail) :]
            separator = middle[len(tail) : len(middle) - len(head)]
            core2 = _core_parts(two, s2)
            if len(core2) == len(core) and core2 != core:
                new_core: list[str] = []
                for a, b in zip(core, core2, strict=True):
                    split = _split_index(a, b, 0) if a != b and not a.startswith("$") else None
                    if split is not None:
                        new_core += split[0]
                        index_base = split[1]
                    else:
                        new_core.append(a)
                core = new_core
    arguments: tuple[ArgVariant, ...] = ()
    encoding = ValueEncoding()
    arg_separator = ""
    if args.kind == "object":
        enc = _encoding(r, args.one)
        if enc is None:
            return None, ["the arguments' encoding could not be read"]
        encoding = enc
    elif args.kind == "tagged":
        empty = r.region(_call(FUNC_A, {}, ID_A))
        variants = _tagged_variants(r, args.one, empty)
        if not variants:
            return None, ["the tagged arguments could not be read"]
        arguments = tuple(variants)
        both = r.region(_call(FUNC_A, {ARG_A: VALUE_A, ARG_B: VALUE_B}, ID_A))
        second = args.one.replace(ARG_A, ARG_B).replace(VALUE_A, VALUE_B)
        if both is not None and empty is not None:
            d = diff_split(empty, both)
            if d.right.startswith(args.one) and d.right.endswith(second):
                arg_separator = d.right[len(args.one) : len(d.right) - len(second)]
    pattern = CallPattern(
        call=tuple(
            p if p.startswith("$") and p in ("$name", "$id", "$index", "$args") else literal_part(p)
            for p in core
        ),
        index_base=index_base,
        args=args.kind,  # type: ignore[arg-type]
        arguments=arguments,
        encoding=encoding,
    )
    notes.append(f"call pattern: {pattern.describe()}")
    return (
        ToolsSpec(
            format="call_pattern",
            section_start=section_start,
            section_end=section_end,
            call_start=call_start,
            call_end=call_end,
            call_separator=separator,
            arg_separator=arg_separator,
            parallel=parallel,
            pattern=pattern,
        ),
        notes,
    )


def probe_render(renderer: Any, kwargs: Mapping[str, Any] | None = None) -> Render:
    """A :data:`Render` over the analysis's renderer (its fallbacks included; a failure gives None), which
    :func:`render_ahead` can ask for several renders in one batch; ``kwargs``: template switches every
    render is made with (thinking off, for the turn learner)."""

    def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]], prompt: bool) -> str | None:
        return renderer.render_conversation(messages, tools, add_generation_prompt=prompt, kwargs=kwargs)

    def many(requests: Sequence[Request]) -> list[str | None]:
        return renderer.render_conversations(requests, kwargs)

    render.many = many  # type: ignore[attr-defined]
    return render


#: One render a learner asks for: (messages, tools, add_generation_prompt).
Request = tuple[list[dict[str, Any]], list[dict[str, Any]], bool]


def render_ahead(render: Render, requests: Sequence[Request]) -> None:
    """Have ``render`` make ``requests`` ahead, in one batch, when it keeps what it made and can batch
    (:func:`memoized` over :func:`probe_render`); otherwise nothing happens and each render is made when
    asked for.  The read-backs call it with the conversations they are about to read."""
    ahead = getattr(render, "ahead", None)
    if ahead is not None:
        ahead(requests)


def pattern_markers(pattern: CallPattern) -> list[str]:
    """The special-token-like markers inside a pattern's literals (the tokenizer must keep them whole)."""
    from workbench.analysis.markers import markers_in

    parts = [*pattern.call, *(p for v in pattern.arguments for p in v.parts)]
    out: list[str] = []
    for part in parts:
        if part in ("$name", "$id", "$index", "$args", "$key", "$value"):
            continue
        for m in markers_in(part):
            if m not in out:
                out.append(m)
    return out


# ----------------------------------------------------------------------------------------- adoption
#: One render that holds every way a call varies (two calls; a string and a nested value of every JSON
#: type), and its one-call twin for templates that write one call per turn: a spec that reads it back
#: needs no pattern.
_NESTED = {"kk": [7, "ab", None, True, 2.5]}
#: Call ids of the read-backs, unlike the probes' (``call00001``): a spec that took a probe's id for part
#: of a marker reads the probes' own renders back, and must not pass for reading every call.
READ_ID_A, READ_ID_B = "rk4Tq8", "zm7Wv2"
QUICK_CASES: tuple[tuple[dict[str, Any], ...], ...] = (
    (_call(FUNC_A, {ARG_A: VALUE_A, ARG_B: _NESTED}, READ_ID_A), _call(FUNC_B, {ARG_A: VALUE_B}, READ_ID_B)),
    (_call(FUNC_A, {ARG_A: VALUE_A, ARG_B: _NESTED}, READ_ID_A),),
)


def read_back_score(
    spec: FormatSpec,
    render: Render,
    end_markers: Sequence[str],
    cases: Sequence[tuple[dict[str, Any], ...]] | None = None,
) -> int:
    """How many of the learner's call renders (or of ``cases``) ``spec`` parses back to the calls rendered
    (pure w.r.t. the template: renders only)."""
    from workbench.runtime.chat import Tool
    from workbench.runtime.parsing import ParseOptions, parse

    r = _Renders(render, end_markers)
    cases = (
        list(cases)
        if cases is not None
        else [
            (_call(FUNC_A, {ARG_A: VALUE_A}, READ_ID_A),),
            (_call(FUNC_A, {ARG_A: VALUE_A}, READ_ID_A), _call(FUNC_B, {ARG_A: VALUE_B}, READ_ID_B)),
            (_call(FUNC_A, {ARG_A: VALUE_A, ARG_B: VALUE_B}, READ_ID_A),),
            *((_call(FUNC_A, {ARG_A: value}, READ_ID_A),) for _, value in TYPED_VALUES),
        ]
    )
    render_ahead(
        render,
        [r for calls in cases for r in (([dict(USER)], typed_tools(calls), True), _turn_request(calls))],
    )
    score = 0
    for calls in cases:
        typed = typed_tools(calls)
        tools = [Tool.from_openai(t) for t in typed]
        prompt = render([dict(USER)], typed, True)
        output, content = _turn_output(render, prompt, calls, end_markers), CONTENT_TEXT
        if output is None:  # the template rewrites earlier turns: read the calls' region alone
            output, content = r.region(*calls), ""
        if output is None:
            continue
        try:
            stage = spec.output_start_stage(generation_prompt=prompt) if content else None
            message = parse(spec, output, tools, ParseOptions(start_stage=stage)).message
        except Exception:  # a spec that cannot even build a parser reads nothing back
            continue
        if content and content not in output:
            content = ""  # the template drops an answer's text next to calls (Llama 3.1)
        got = [(c.name, c.arguments_value()) for c in message.tool_calls]
        want = [(c["function"]["name"], c["function"]["arguments"]) for c in calls]
        if got == want and _text_read(message.content or "", content, calls):
            score += 1
    return score


def _text_read(got: str, want: str, calls: Sequence[dict[str, Any]]) -> bool:
    """Whether the answer's text read beside the calls is the one rendered: exactly, or behind a header the
    call pattern does not know (the answer's wrapper beside calls, ``<report>...</report>``, ``Plan:``, which
    the turn layout learns next) that holds nothing of the calls.  Text after it alone is no header: a
    section's closer left in the content (``]\n[[/fulu]]``) is a misreading."""
    got = got.strip()
    if got == want:
        return True
    if not want or want not in got:
        return False
    header, _, trailer = got.partition(want)
    return bool(header.strip()) and not any(c["function"]["name"] in header + trailer for c in calls)


def _carries_probe_names(tools: ToolsSpec) -> bool:
    """Does a marker field of ``tools`` hold a probe's function name?"""
    values = [getattr(tools, f.name) for f in fields(tools)]
    return any(isinstance(v, str) and (FUNC_A in v or FUNC_B in v) for v in values)


def _reads_quick_case(spec: FormatSpec, render: Render, end_markers: Sequence[str]) -> bool:
    """True when ``spec`` reads back the first quick case the template renders."""
    for case in QUICK_CASES:
        if render(_conversation(*case), typed_tools(case), False) is not None:
            return read_back_score(spec, render, end_markers, [case]) == 1
    return False


def typed_value_request(value: Any) -> Request:
    """The render :func:`read_back_score` makes for its case of one call whose only argument is ``value``:
    a detector that reads how the template spells a value asks for the same render (made once)."""
    return _turn_request((_call(FUNC_A, {ARG_A: value}, READ_ID_A),))


def _turn_request(calls: tuple[dict[str, Any], ...]) -> Request:
    """The render :func:`_turn_output` reads: the conversation answered with ``calls``."""
    return (_conversation(*calls), typed_tools(calls), False)


def _turn_output(
    render: Render, prompt: str | None, calls: tuple[dict[str, Any], ...], end_markers: Sequence[str]
) -> str | None:
    """The model's part of an answer with ``calls``: after the generation prompt, before the turn's end."""
    full = render(*_turn_request(calls))
    if prompt is None or full is None or not full.startswith(prompt):
        return None
    out = full[len(prompt) :]
    cuts = [out.find(m.strip()) for m in end_markers if m.strip() and m.strip() in out]
    return out[: min(cuts)].rstrip(_WS) if cuts else out.rstrip(_WS)  # a model stops at the end of turn


def memoized(render: Render) -> Render:
    """``render`` with its results kept: the learner and both read-backs render the same conversations.
    The result also takes :func:`render_ahead`'s batches when ``render`` can batch (``render.many``).
    A ``render`` that is already memoized is returned as it is: a second layer would keep the same texts
    again, and would hide the first layer's batches (its own misses are renders made one at a time)."""
    if getattr(render, "memoized", False):
        return render
    cache: dict[bytes, str | None] = {}

    def key(messages: list[dict[str, Any]], tools: list[dict[str, Any]], prompt: bool) -> bytes:
        return fingerprint((messages, tools, prompt))  # key order kept: templates see it

    def cached(messages: list[dict[str, Any]], tools: list[dict[str, Any]], prompt: bool) -> str | None:
        k = key(messages, tools, prompt)
        if k not in cache:
            cache[k] = render(messages, tools, prompt)
        return cache[k]

    many = getattr(render, "many", None)
    if many is not None and not hasattr(render, "ahead"):

        def ahead(requests: Sequence[Request]) -> None:
            todo = {key(*r): r for r in requests}
            todo = {k: r for k, r in todo.items() if k not in cache}
            if todo:
                cache.update(zip(todo, many(list(todo.values())), strict=True))

        cached.ahead = ahead  # type: ignore[attr-defined]
    cached.memoized = True  # type: ignore[attr-defined]
    return cached


def adopt_pattern(
    spec: FormatSpec, render: Render, end_markers: Sequence[str]
) -> tuple[FormatSpec, list[str]]:
    """``spec`` with a learned call pattern when the pattern reads the template's calls back better.

    The marker-field spec is checked first: when it reads every call render back, nothing is learned (the
    common case costs the read-back renders only).
    """
    render = memoized(render)
    # A marker field holding a probe's function name learned a sampled value as a literal (``</foofoo>``
    # closing an element named after its function): whatever it reads back (the parsers close a call
    # leniently), the grammars built from it hold the model to the probe's name.
    sound = spec.tools.supported and not _carries_probe_names(spec.tools)
    if sound and _reads_quick_case(spec, render, end_markers):
        return spec, []
    before = read_back_score(spec, render, end_markers) if sound else 0
    learned, notes = learn_pattern(render, end_markers)
    if learned is None:
        return spec, []
    candidate = replace(spec, tools=learned)
    after = read_back_score(candidate, render, end_markers)
    if after > before:
        return candidate, [
            *notes,
            f"the call pattern reads back {after} of the call renders (marker fields: {before})",
        ]
    return spec, []
