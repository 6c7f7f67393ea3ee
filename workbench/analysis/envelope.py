"""The reply as one JSON object (spec v6): learned from the turn learner's outputs, by where the needles sit.

Some models answer with one JSON object whose members hold the text and the calls (xLAM's
``{"thought": "...", "tool_calls": [...]}``, BlueLM's ``{"answer": ..., "function_calls": [...]}``): the
answer's text is then a JSON string, escaped, and the calls a list inside the same object.  Marker reading
cannot say that (the member's key and quote would be the answer's "markers", its escapes text), so the
learner proposes an envelope next to its layouts, and :func:`~workbench.analysis.layout.adopt_layout` keeps it
only when it reads the template's turns back better.

Everything comes from the renders: an object is where a JSON value decodes (the one heuristic allowed is
JSON) and holds a needle as a member's value; the member holding the answer is the one whose value is the
answer's text, the calls member the one whose value holds the call's name and arguments, and so on.  How a
member is written when it has nothing (``""``, ``null``, ``[]``, or left out) is read off the turns that
lack that part; the separators off the object's own text.  An object the generation prompt opens
(``{"role": "assistant", `` then the model's members) is found by decoding the prompt's tail with the
output.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from workbench.analysis.probes import ARG_A, CONTENT_TEXT, FUNC_A, ID_A, REASONING_TEXT, VALUE_A
from workbench.runtime.spec import (
    ContentSpec,
    EnvelopeMember,
    FormatSpec,
    ReasoningSpec,
    ReplyEnvelope,
    ToolsSpec,
)

_DECODER = json.JSONDecoder()
_SEPARATORS = ((", ", ": "), (",", ":"), (",", ": "), (", ", ":"))


class _Found:
    """One turn's object: the text before it, the object, its own text and what follows it."""

    def __init__(self, head: str, value: dict[str, Any], raw: str, tail: str) -> None:
        self.head, self.value, self.raw, self.tail = head, value, raw, tail


def _objects(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """Every JSON object that decodes at a ``{`` of ``text`` (start, end, value), outermost first."""
    out = []
    at = text.find("{")
    while at >= 0:
        try:
            value, end = _DECODER.raw_decode(text, at)
        except ValueError:
            value, end = None, -1
        if isinstance(value, dict):
            out.append((at, end, value))
        at = text.find("{", at + 1)
    return out


def _holds_call(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return any(isinstance(i, dict) and _call_fields(i) is not None for i in items)


def _call_fields(item: dict[str, Any]) -> tuple[str, str, str, str] | None:
    """(name field, arguments field, id field, function field) of a call object holding the needle call;
    ``("", "", "", "")`` for one whose only key is the function's name, its value the arguments (Browser
    Use's ``{"NAME": ARGS}``)."""
    if list(item) == [FUNC_A] and _is_args(item[FUNC_A]):
        return "", "", "", ""
    function, outer = "", item
    for key, value in item.items():
        if isinstance(value, dict) and FUNC_A in value.values():
            function, item = key, value
            break
    name = next((k for k, v in item.items() if v == FUNC_A), "")
    args = next((k for k, v in item.items() if _is_args(v)), "")
    if not args and item.get(ARG_A) == VALUE_A and name:
        args = ""  # flat: the arguments are members beside the name
    elif not args:
        return None
    if not name:
        return None
    call_id = next((k for k, v in (*outer.items(), *item.items()) if v == ID_A), "")
    return name, args, call_id, function


def _is_args(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    return value == {ARG_A: VALUE_A}


def _find(output: str, prefix: str, wanted: Any) -> _Found | None:
    """The object of ``output`` (or of ``prefix`` + ``output``: the prompt opened it) that ``wanted``
    accepts, ending inside the output."""
    text = prefix + output
    for start, end, value in _objects(text):
        if end > len(prefix) and start <= len(prefix) + len(output) and wanted(value):
            return _Found(text[:start], value, text[start:end], text[end:])
    return None


def _seps(raw: str, keys: list[str]) -> tuple[str, str] | None:
    """The item and key separators the object's own text uses (None: none of the usual ones)."""
    for item, key in _SEPARATORS:
        quoted = [json.dumps(k, ensure_ascii=False) for k in keys]
        if all(q + key in raw for q in quoted) and all(item + q in raw for q in quoted[1:]):
            return item, key
    return None


def learn_envelope(
    base: FormatSpec, outputs: dict[str, str | None], gen: str
) -> tuple[FormatSpec, str] | None:
    """The envelope spec the turn learner's ``outputs`` (by turn name, see
    :data:`~workbench.analysis.layout.TURNS`) show, with a note; None when the answer is not a member of
    one JSON object.  ``gen`` is what the generation prompt writes after the user turn (it may open the
    object)."""
    content = outputs.get("content")
    if content is None:
        return None
    prefix = ""
    found = _find(content, "", lambda v: CONTENT_TEXT in v.values())
    if found is None:
        for at in range(len(gen) - 1, -1, -1):  # the prompt opened the object: its tail decodes with it
            if gen[at] == "{":
                found = _find(content, gen[at:], lambda v: CONTENT_TEXT in v.values())
                if found is not None and found.head == "":
                    prefix = gen[at:]
                    break
                found = None
    if found is None:
        return None
    content_key = next(k for k, v in found.value.items() if v == CONTENT_TEXT)
    turns: dict[str, _Found] = {"content": found}
    for name, output in outputs.items():
        if name == "content" or output is None:
            continue
        wanted = _holds_call_member if "call" in name else _holds_text(content_key)
        got = _find(output, prefix, wanted)
        if got is None:
            return None
        turns[name] = got
    call = turns.get("call")
    if call is None:
        return None
    calls_key = next((k for k, v in call.value.items() if _holds_call(v)), "")
    if not calls_key:
        return None
    calls_value = call.value[calls_key]
    item = calls_value[0] if isinstance(calls_value, list) else calls_value
    fields = _call_fields(item)
    if fields is None:
        return None
    reasoning_key = ""
    reasoning = turns.get("reasoning")
    if reasoning is not None:
        reasoning_key = next((k for k, v in reasoning.value.items() if v == REASONING_TEXT), "")
    tails = {t.tail for t in turns.values()}
    if len(tails) != 1:
        return None
    order = _merged_order([list(t.value) for t in turns.values()])
    seps = _seps(turns.get("content_call", found).raw, list(turns.get("content_call", found).value))
    if seps is None:
        return None
    holds = {content_key: "content", calls_key: "calls", reasoning_key: "reasoning"}
    lacking = {"content": ("call", "call_two"), "calls": ("content", "reasoning"), "reasoning": ("content",)}
    members = []
    for key in order:
        kind = holds.get(key, "other")
        if kind == "other":
            written = (json.dumps(t.value[key], ensure_ascii=False) for t in turns.values() if key in t.value)
            values = tuple(dict.fromkeys(written))
            members.append(EnvelopeMember(key, "other", (), values))
            continue
        empty = tuple(
            dict.fromkeys(
                json.dumps(turns[n].value[key], ensure_ascii=False)
                for n in lacking[kind]
                if n in turns and key in turns[n].value
            )
        )
        members.append(EnvelopeMember(key, kind, empty))  # type: ignore[arg-type]
    name_field, args_field, id_field, function_field = fields
    name_is_key = not name_field
    envelope = ReplyEnvelope(
        members=tuple(members),
        calls_list=isinstance(calls_value, list),
        flat_calls=not args_field and not name_is_key,
        item_sep=seps[0],
        key_sep=seps[1],
    )
    # only how one call object is written: the markers the probes read off the object's own text
    # ('", "tool_calls": [') are the envelope's, not the calls'
    inner = item.get(function_field) if function_field else item
    tools = ToolsSpec(
        format="json_native",
        name_field=name_field or "name",
        args_field=args_field or "arguments",
        fun_name_is_key=name_is_key,
        id_field=id_field,
        function_field=function_field,
        parameter_order=tuple(inner) if isinstance(inner, dict) and not name_is_key else (),
        parallel=base.tools.parallel or "call_two" in turns,
    )
    spec_reasoning = base.reasoning
    if reasoning_key:
        spec_reasoning = ReasoningSpec()  # in the object: no markers to look for
    tail = next(iter(tails)).strip()
    # what follows the object ends the turn; nothing (a transcript's line break): the end-of-sequence only,
    # never what the probes took for a turn end (the object's own closing)
    ends = tuple(e for e in (tail or base.eos_token,) if e)
    spec = replace(
        base,
        envelope=envelope,
        tools=tools,
        content=ContentSpec(),
        reasoning=spec_reasoning,
        end_markers=ends,
        prompt=replace(base.prompt, output_prefix=prefix or base.prompt.output_prefix),
    )
    keys = ", ".join(f"{m.key!r} ({m.holds})" for m in members)
    return spec, f"reply envelope: one JSON object with {keys}"


def _merged_order(orders: list[list[str]]) -> list[str]:
    """The keys of every turn in one order that keeps each turn's (a key a turn leaves out still goes where
    the others put it); ties go to the key seen first."""
    seen: list[str] = []
    after: dict[str, set[str]] = {}
    for order in orders:
        for i, key in enumerate(order):
            if key not in seen:
                seen.append(key)
            after.setdefault(key, set()).update(order[:i])
    out: list[str] = []
    while len(out) < len(seen):
        ready = [k for k in seen if k not in out and after[k] <= set(out)]
        out.append(ready[0] if ready else next(k for k in seen if k not in out))  # a cycle: first seen
    return out


def _holds_text(content_key: str) -> Any:
    """An object of a turn without calls: it has the answer's member, or holds the reasoning."""
    return lambda v: content_key in v or REASONING_TEXT in v.values()


def _holds_call_member(value: dict[str, Any]) -> bool:
    return any(_holds_call(v) for v in value.values())


__all__ = ["learn_envelope"]
