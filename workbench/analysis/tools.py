"""Phase 3: how tool calls are written (probes T1-T7).

T1 isolates one call: the call render against a plain answer (tools offered in both), trimmed of an empty
reasoning block in front and the end-of-turn marker behind.  The format follows from where the function
name sits (the one heuristic, a JSON parse, as in llama.cpp): inside a JSON document -> ``json_native``;
outside, with a JSON object of arguments -> ``tag_with_json``; outside, with each argument in tags ->
``tag_with_tagged``.  Dedicated detectors run first for what diffs cannot express (Harmony channels,
``>>>`` recipients, pythonic ``[f(a=1)]`` calls).

For the tag formats every marker is read in *render coordinates* (positions in the call render), which keeps
the bookkeeping honest: the name span comes from T4, the arguments span from T6 (no arguments against one),
and T2/T3 (one call against two) split what comes before the name into section markers (once per output)
and per-call markers (repeated before the second call), and likewise after the arguments.  T7 finds the call
id, when the template writes one, and its position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.analysis import dedicated
from workbench.analysis.diff import common_prefix_aligned, common_suffix_aligned, diff_split, segmentize
from workbench.analysis.jsonfind import JsonSpan, contains_string, find_json_containing, key_with_value
from workbench.analysis.markers import (
    first_marker_after,
    last_marker_before,
    leading_ws,
    markers_in,
    strip_leading_ws,
)
from workbench.analysis.probes import ARG_A, FUNC_A, FUNC_B, ID_A, VALUE_A
from workbench.analysis.state import Findings

_WS = " \t\r\n"


@dataclass(frozen=True)
class CallRegion:
    """The span ``[start, end)`` of the call inside ``text`` (a full render)."""

    text: str
    start: int
    end: int

    @property
    def body(self) -> str:
        return self.text[self.start : self.end]

    def find(self, needle: str, start: int | None = None) -> int:
        i = self.text.find(needle, self.start if start is None else start, self.end)
        return i


def call_region(f: Findings, variant: str, base: str = "tools_content") -> CallRegion | None:
    """Where the call(s) of ``variant`` are in its render, relative to a plain answer (pure w.r.t. ``f``)."""
    a = f.renderer.get(base)
    b = f.renderer.get(variant)
    if a is None or b is None:
        return None
    d = diff_split(a, b)
    start, end = len(d.prefix), len(b) - len(d.suffix)
    skip = [m.strip(_WS) for m in (f.reasoning.get("start", ""), f.reasoning.get("end", "")) if m.strip(_WS)]
    moved = True
    while moved:
        moved = False
        while start < end and b[start] in _WS:
            start += 1
        for m in skip:
            if b.startswith(m, start) and start + len(m) <= end:
                start += len(m)
                moved = True
    ends = [m for m in f.end_markers if m]
    moved = True
    while moved:
        moved = False
        while end > start and b[end - 1] in _WS:
            end -= 1
        for m in ends:
            if end - len(m) >= start and b.startswith(m, end - len(m)):
                end -= len(m)
                moved = True
    return CallRegion(b, start, end)


def _cut_at_end_marker(tail: str, f: Findings) -> str:
    """A call never extends past an end-of-turn marker (R1-Distill renders an empty turn after its calls)."""
    cut = len(tail)
    for m in f.end_markers:
        i = tail.find(m) if m else -1
        if 0 <= i < cut:
            cut = i
    return tail[:cut].rstrip(_WS)


def _call_turn_end(f: Findings, t1_left: str, region: CallRegion) -> CallRegion:
    """Tool-call turns may end with their own token (Llama 3.1's ``<|eom_id|>``, gpt-oss's ``<|call|>``).

    When the answer side of T1 ends with a known end-of-turn marker and the call side ends with a different
    marker in the same place, that marker ends call turns: record it and trim it from the region.  It is
    the call's own closer instead when the call side goes on with the answers' end marker after it
    (Nemotron's ``]</TOOLCALL><SPECIAL_12>``), or when it closes each of two calls (``</tool_call>``).
    """
    body = region.body.rstrip(_WS)
    answer_end = next((m for m in f.end_markers if m and t1_left.rstrip(_WS).endswith(m)), "")
    if not answer_end:
        return region
    last = markers_in(body)
    if not last or not body.endswith(last[-1]) or last[-1] in f.end_markers:
        return region
    marker = last[-1]
    after = region.text[region.start + len(body) :]
    if marker.strip(_WS) == f.reasoning.get("end", "").strip(_WS) or any(
        m.strip(_WS) and m.strip(_WS) in after for m in f.end_markers
    ):
        return region  # the turn still ends as answers do: the marker belongs to the call
    two = f.renderer.get("call_two")
    if two is not None and two.count(marker) >= 2 * max(1, region.text.count(marker)):
        return region  # it closes every call
    f.end_markers.append(marker)
    f.note("T1", f"tool-call turns end with {marker!r} (answers with {answer_end!r})")
    return CallRegion(region.text, region.start, region.start + len(body) - len(marker))


def analyze_tools(f: Findings) -> None:
    """Classify the tool-call format and extract its markers (mutates ``f``)."""
    t1 = f.probe("T1")
    if t1.render_b is None:
        f.note("T1", "the call could not be rendered: no tool-call format")
        f.warn(f"T1: tool calls could not be rendered ({t1.error})")
        return
    region = call_region(f, "call")
    if region is None or region.find(FUNC_A) < 0:
        f.note("T1", "the template does not render tool calls: no tool-call format")
        return
    f.tools["parallel"] = False
    if t1.diff is not None and not t1.diff.suffix.strip(_WS):
        region = _call_turn_end(f, t1.diff.left, region)
    if dedicated.detect(f, region, t1):
        return
    ns = region.find(FUNC_A)
    span = find_json_containing(region.text, ns, region.start, region.end)
    if span is not None and contains_string(span.value, FUNC_A):
        _json_native(f, region, span)
        return
    vpos = region.find(VALUE_A, ns + len(FUNC_A))
    args = find_json_containing(region.text, vpos, ns + len(FUNC_A), region.end) if vpos >= 0 else None
    if args is not None and isinstance(args.value, dict) and ARG_A in args.value:
        f.tools["format"] = "tag_with_json"
        f.note("T1", "function name outside JSON, arguments a JSON object: tag_with_json")
        _tagged_layout(f, region, ns, args.start, args.end)
        return
    if region.find(ARG_A, ns + len(FUNC_A)) >= 0 and vpos >= 0:
        f.tools["format"] = "tag_with_tagged"
        f.note("T1", "function name and each argument in tags: tag_with_tagged")
        a_start, a_end = _tagged_args_span(f, region, ns)
        f.note("T6", f"one argument is written as {region.text[a_start:a_end]!r}")
        _tagged_layout(f, region, ns, a_start, a_end)
        return
    f.note("T1", f"call found ({region.body!r}) but its format is not recognised")
    f.warn("T1: tool calls are rendered in a format the analyzer does not recognise")


# ----------------------------------------------------------------------------------------- JSON native
def _call_object(value: Any) -> tuple[dict[str, Any] | None, bool]:
    """The first call object and whether calls are wrapped in a JSON array."""
    if isinstance(value, list):
        first = value[0] if value and isinstance(value[0], dict) else None
        return first, True
    return (value, False) if isinstance(value, dict) else (None, False)


def _json_native(f: Findings, region: CallRegion, span: JsonSpan) -> None:
    t = f.tools
    t["format"] = "json_native"
    obj, wrapped = _call_object(span.value)
    t["array_wrapped"] = wrapped
    if obj is None:
        f.warn("T1: JSON call without an object")
        return
    args_obj: Any = {ARG_A: VALUE_A}
    if FUNC_A in obj:
        t.update(fun_name_is_key=True, name_field="", args_field="")
        f.note("T1", f"JSON call with the function name as key{' in an array' if wrapped else ''}")
    else:
        inner = obj
        for k, v in obj.items():
            if isinstance(v, dict) and contains_string(v, FUNC_A) and key_with_value(obj, FUNC_A) == "":
                t["function_field"] = str(k)
                inner = v
                break
        t["name_field"] = key_with_value(inner, FUNC_A)
        t["args_field"] = key_with_value(inner, args_obj)
        t["id_field"] = key_with_value(obj, ID_A) or key_with_value(inner, ID_A)
        gen = [k for k, v in obj.items() if v in ("0", 0) and k not in (t["name_field"], t["args_field"])]
        if gen:
            t["gen_id_field"] = gen[0]
        t["parameter_order"] = tuple(str(k) for k in obj if isinstance(k, str))
        f.note(
            "T1",
            f"JSON call: name in {t['name_field']!r}, arguments in {t['args_field']!r}"
            + (f", nested under {t['function_field']!r}" if t.get("function_field") else "")
            + (" in an array" if wrapped else ""),
        )
    before = region.text[region.start : span.start]
    after = _cut_at_end_marker(region.text[span.end : region.end], f)
    t["section_start"] = strip_leading_ws(before)
    t["section_end"] = strip_leading_ws(after)
    _json_parallel(f, region, span, wrapped)
    _json_ids(f)


def _json_parallel(f: Findings, region: CallRegion, span: JsonSpan, wrapped: bool) -> None:
    """T2/T3 for JSON calls: same array, or the whole section repeated per call."""
    t = f.tools
    two = call_region(f, "call_two")
    if two is None:
        f.note("T2", "two calls could not be rendered: no parallel calls")
        return
    nb = two.find(FUNC_B)
    if nb < 0:
        f.note("T2", "the second call is not rendered: no parallel calls")
        return
    t["parallel"] = True
    if wrapped:
        second = find_json_containing(two.text, nb, span.start, two.end)
        if second is not None and isinstance(second.value, list) and len(second.value) >= 2:
            inner = two.text[span.start + 1 : second.end - 1]
            first_end = find_json_containing(inner, inner.find(FUNC_A) if FUNC_A in inner else 0)
            if first_end is not None:
                rest = inner[first_end.end :]
                t["call_separator"] = rest[: len(rest) - len(rest.lstrip(_WS + ","))]
            f.note("T2", "both calls share one JSON array")
            return
    first_end = find_json_containing(two.text, two.find(FUNC_A), two.start, two.end)
    second = find_json_containing(two.text, nb, first_end.end if first_end else two.start, two.end)
    if first_end is None or second is None:
        return
    between = two.text[first_end.end : second.start]
    sec_start, sec_end = t.get("section_start", ""), t.get("section_end", "")
    if sec_start and sec_start.strip(_WS) in between:
        # The whole wrapper repeats: it is per call, not per section.
        t.update(call_start=sec_start, call_end=sec_end, section_start="", section_end="")
        sep = between
        if sec_end.strip(_WS) and between.lstrip(_WS).startswith(sec_end.strip(_WS)):
            sep = between.lstrip(_WS)[len(sec_end.strip(_WS)) :]
        i = sep.find(sec_start.strip(_WS))
        t["call_separator"] = sep[:i] if i >= 0 else ""
        f.note("T2", f"the wrapper {sec_start!r} repeats before each call: per-call markers")
    else:
        t["call_separator"] = between
        f.note("T2", f"calls follow each other inside one section, separated by {between!r}")


def _json_ids(f: Findings) -> None:
    t7 = f.probe("T7")
    if t7.diff is None:
        return
    if t7.diff.identical:
        f.note("T7", "the call id is not written")
    elif f.tools.get("id_field"):
        f.note("T7", f"the call id is the JSON field {f.tools['id_field']!r}")
    if f.tools.get("gen_id_field"):
        f.note("T3", f"calls are numbered in the JSON field {f.tools['gen_id_field']!r}")


# ----------------------------------------------------------------------------------------- tag formats
def _tagged_args_span(f: Findings, region: CallRegion, ns: int) -> tuple[int, int]:
    """The span of the whole argument list of a tagged call, from T6 (no arguments against one)."""
    t6 = f.probe("T6")
    if t6.diff is not None and t6.render_b == region.text and ARG_A in t6.diff.right:
        start = len(t6.diff.prefix)
        return start, start + len(t6.diff.right)
    # Fallback: from the unit that opens the argument name to the end of the value's closing unit.
    a = region.find(ARG_A, ns + len(FUNC_A))
    start = a
    before = last_marker_before(region.text[ns + len(FUNC_A) : a])
    if before is not None:
        at = region.text.rfind(before.text, ns + len(FUNC_A), a)
        start = at if at >= 0 else a
    v = region.find(VALUE_A, a)
    close = first_marker_after(region.text[v + len(VALUE_A) : region.end])
    end = v + len(VALUE_A)
    if close is not None:
        rest = region.text[end : region.end]
        end += rest.find(close.text) + len(close.text)
        end += len(leading_ws(region.text[end : region.end]))
    return start, end


def _split_repeated_head(rep: str) -> tuple[str, str]:
    """Split the text repeated before every function name into (per-call start, name prefix).

    The name prefix is what the text ends with after its last unit of evidence (text of no literal of
    the template, ``functions.`` built from data), or its last unit when a line break sets it off from the
    units before it (``<tool_call>\n<function=``); otherwise the whole text opens the call.
    """
    segs = segmentize(rep)
    if segs and not segs[-1].is_marker:
        prefix = segs[-1].text
        rest = rep[: len(rep) - len(prefix)]
        stripped = strip_leading_ws(prefix)
        return rest + prefix[: len(prefix) - len(stripped)], stripped
    if len(segs) >= 3 and segs[-1].is_marker and not segs[-2].text.strip() and "\n" in segs[-2].text:
        last = segs[-1].text
        return rep[: len(rep) - len(last)], last
    return rep, ""


def _tagged_layout(f: Findings, region: CallRegion, ns: int, a_start: int, a_end: int) -> None:
    """Fill section / per-call / name / close markers from the call and two-call renders."""
    t = f.tools
    b = region.text
    f.call_text, f.name_at, f.args_span = b, ns, (a_start, a_end)
    ne = ns + len(FUNC_A)
    head = b[region.start : ns]
    tail = _cut_at_end_marker(b[a_end : region.end], f)
    name_suffix = b[ne:a_start]
    f.note("T4", f"function name between {head!r} and {name_suffix!r}")
    two = call_region(f, "call_two")
    nb = two.find(FUNC_B, a_end) if two is not None and two.text.startswith(b[:a_end]) else -1
    if nb < 0:
        # One call only: everything in front of the name wraps the call.
        call_start, name_prefix = _split_repeated_head(head)
        t.update(call_start=strip_leading_ws(call_start), name_prefix=name_prefix)
        close_markers = markers_in(tail)
        t["func_close"] = ""
        t["call_end"] = strip_leading_ws(tail)
        if close_markers and call_start.strip(_WS) == "":
            t.update(func_close=strip_leading_ws(tail), call_end="")
        f.note(
            "T2",
            "two calls could not be rendered: no parallel calls"
            if two is None or two.find(FUNC_B) < 0
            else "the second call is not rendered",
        )
    else:
        assert two is not None  # nb >= 0 only when the second call was rendered
        t["parallel"] = True
        between = two.text[a_end:nb]
        rep_head = common_suffix_aligned(head, between)
        rep_head = strip_leading_ws(rep_head) if rep_head.strip(_WS) else ""
        rep_tail = common_prefix_aligned(tail, between)
        # Nothing repeats before the second name: all of the head is written once, as a section start.
        section_start = head[: len(head) - len(rep_head)] if rep_head else head
        call_start, name_prefix = _split_repeated_head(rep_head)
        t["section_start"] = strip_leading_ws(section_start)
        t["call_start"] = strip_leading_ws(call_start)
        t["name_prefix"] = name_prefix
        section_end = tail[len(rep_tail) :]
        t["section_end"] = strip_leading_ws(section_end)
        close = strip_leading_ws(rep_tail)
        close_markers = markers_in(close)
        if t["call_start"] and close_markers:
            last = close_markers[-1]
            i = close.rfind(last)
            t["func_close"] = close[:i]
            t["call_end"] = close[i:]
        else:
            t["func_close"] = close
            t["call_end"] = ""
        sep_start, sep_end = len(rep_tail), len(between) - len(rep_head)
        t["call_separator"] = between[sep_start:sep_end] if sep_end >= sep_start else ""
        f.note(
            "T2",
            f"section {t['section_start']!r} ... {t['section_end']!r}, per call {t['call_start']!r} "
            f"... {t['call_end']!r}",
        )
        f.note("T3", f"calls separated by {t['call_separator']!r}")
        _counters(f, two, b, ne, a_start, nb)
    _name_suffix_and_ids(f, region, ne, a_start, a_end, name_suffix)
    if f.tools["format"] == "tag_with_json":
        t["args_start"] = t.get("args_start", "")
        t["args_end"] = ""


def _counters(f: Findings, two: CallRegion, b: str, ne: int, a_start: int, nb: int) -> None:
    """A number that differs between call 1 and call 2 right after the name is a generated call index."""
    first = b[ne:a_start]
    second_end = nb + len(FUNC_B)
    second = two.text[second_end : second_end + len(first)]
    d = diff_split(first, second)
    if ID_A in first or not (d.left.isdigit() and d.right.isdigit()) or int(d.right) != int(d.left) + 1:
        return  # not a counter (a call id, for instance, is read by T7)
    f.tools.update(id_prefix=d.prefix, _index_digits=(len(d.prefix), len(d.prefix) + len(d.left)))
    f.note("T3", f"calls are numbered after the name: {first!r} then {second!r}")


def _name_suffix_and_ids(
    f: Findings, region: CallRegion, ne: int, a_start: int, a_end: int, name_suffix: str
) -> None:
    t = f.tools
    digits = t.pop("_index_digits", None)
    if digits is not None:
        # Kimi-K2: <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}.  The label
        # "namespace + name + ':' + index" is the call id (llama.cpp's prefixed-indexed format): the spec
        # names the namespace and lets the name run to the marker after the index.
        t.update(name_suffix=name_suffix[digits[1] :], id_position="none", id_prefix="", id_suffix="")
        namespace = t.get("name_prefix", "")
        if not namespace:
            # The label's namespace is the last unit of the call's opening, right in front of the name.
            segs = segmentize(t.get("call_start", ""))
            if len(segs) >= 2 and segs[-1].text.strip() and not segs[-2].text.isspace():
                namespace = segs[-1].text
                t["call_start"] = t["call_start"][: len(t["call_start"]) - len(namespace)]
        if namespace:
            t.update(function_namespace=namespace, name_prefix="")
        return
    t["name_suffix"] = name_suffix
    t7 = f.probe("T7")
    if t7.diff is None or t7.diff.identical:
        f.note("T7", "the call id is not written")
        return
    b = region.text
    i = b.find(ID_A, region.start, region.end)
    if i < 0:
        f.note("T7", "the call id changes the render outside the call")
        return
    ns = ne - len(FUNC_A)
    if i < ns:
        pos = "pre_func_name"
        before = b[region.start : i]
        after_id = b[i + len(ID_A) : ns]
    elif i < a_start:
        pos = "between_func_and_args"
        before = b[ne:i]
        after_id = b[i + len(ID_A) : a_start]
    else:
        pos = "post_args"
        before = b[a_end:i]
        after_id = b[i + len(ID_A) : region.end]
    prefix_markers = markers_in(before)
    id_prefix = prefix_markers[-1] if prefix_markers else before
    id_prefix = before[before.rfind(id_prefix) :] if id_prefix in before else id_prefix
    suffix_marker = first_marker_after(after_id)
    id_suffix = ""
    if suffix_marker is not None:
        j = after_id.find(suffix_marker.text)
        id_suffix = after_id[: j + len(suffix_marker.text)]
    if pos == "between_func_and_args":
        t["name_suffix"] = before[: len(before) - len(id_prefix)]
        rest = after_id[len(id_suffix) :]
        if id_suffix and not rest.strip(_WS) and len(markers_in(id_suffix)) == 1:
            # "[CALL_ID]ID[ARGS]{...}": the marker after the id opens the arguments, and it is what
            # remains when a call has no id ("NAME[ARGS]{...}"); the id ends at that marker.
            id_suffix, rest = "", id_suffix + rest
        t["args_start"] = rest
    t.update(id_position=pos, id_prefix=strip_leading_ws(id_prefix), id_suffix=id_suffix)
    f.note("T7", f"the call id is written {pos.replace('_', ' ')}, between {id_prefix!r} and {id_suffix!r}")
