"""Response-template profiles: the same template shaped for the consumer that will load it.

transformers' ``parse_response`` accepts the richest templates, but the serving engines refuse at start-up
what they cannot stream (vLLM 0.32 ``--tool-call-parser hf``: ``vllm/parser/response_template.py``;
SGLang 0.5.23 ``--tool-call-parser response_template``: ``sglang/srt/parser/response_template.py``), and
ports of the parser to JavaScript and Swift cannot run patterns that need the third-party ``regex`` module.

* ``transformers``: anything ``parse_response`` reads (``reasoning_content``, ``join``, ``\\G``/``\\K``).
* ``vllm``: fields named ``thinking``, ``content``, ``tool_calls`` only; no ``join``/``transform`` and only
  ``text`` on ``thinking``/``content`` (they stream as plain text).
* ``sglang``: the vLLM rules, and ``tool_calls`` has ``open``/``open_pattern``.
* ``portable``: the SGLang rules, and every pattern compiles with Python's ``re`` using only features a JS
  ``RegExp`` has, so one template serves every engine and every port.

``STRICTEST_FIRST`` orders them so that the first profile that can express a format is the one that drops
in everywhere the format can go.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from workbench.proofs import Unsupported
from workbench.runtime.spec import FormatSpec
from workbench.validate import CaseResult

PROFILES = ("transformers", "vllm", "sglang", "portable")
STRICTEST_FIRST = ("portable", "sglang", "vllm", "transformers")
SERVING_FIELDS = ("thinking", "content", "tool_calls")
# The engines' consumers, in the order a proof runs them.
CONSUMERS = {
    "transformers": ("transformers",),
    "vllm": ("vllm",),
    "sglang": ("sglang",),
    "portable": ("vllm", "sglang"),
}


def apply_profile(template: dict[str, Any], profile: str) -> dict[str, Any]:
    """``template`` (transformers profile) reshaped for ``profile``; raises Unsupported naming the gap."""
    if profile == "transformers":
        return template
    out = copy.deepcopy(template)
    fields: dict[str, dict[str, Any]] = {}
    for name, field in out["fields"].items():
        fields["thinking" if name == "reasoning_content" else name] = field
    unknown = sorted(set(fields) - set(SERVING_FIELDS))
    if unknown:
        raise Unsupported(
            f"{profile}: serving reads only the fields {', '.join(SERVING_FIELDS)}, not {unknown}"
        )
    for name in ("thinking", "content"):
        field = fields.get(name)
        if field is None:
            continue
        # Text regions stream chunk by chunk: pieces are concatenated, so `join` has nothing to do there.
        field.pop("join", None)
        if field.get("transform") is not None or field.get("content", "text") != "text":
            raise Unsupported(
                f"{profile}: the {name!r} region needs a transform or a {field.get('content')!r} body, which "
                "the serving adapter cannot stream as plain text"
            )
    calls = fields.get("tool_calls")
    if (
        profile in ("sglang", "portable")
        and calls is not None
        and not ("open" in calls or "open_pattern" in calls)
    ):
        raise Unsupported(
            f"{profile}: SGLang needs an opener to tell tool calls from text, and the format has none"
        )
    out["fields"] = fields
    if profile == "portable":
        _make_portable(out)
    return out


def patterns(template: dict[str, Any]) -> list[tuple[str, str]]:
    """Every regex in a template, as ``(where, pattern)``."""
    out = (
        [("start_anchor_pattern", template["start_anchor_pattern"])]
        if "start_anchor_pattern" in template
        else []
    )
    for name, field in template.get("fields", {}).items():
        for key in ("open_pattern", "close_pattern"):
            if key in field:
                out.append((f"{name}.{key}", field[key]))
        tag = (field.get("content_args") or {}).get("tag_pattern")
        if tag:
            out.append((f"{name}.content_args.tag_pattern", tag))
    return out


_END_OF_TEXT = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")


def _make_portable(template: dict[str, Any]) -> None:
    """Spell the end of text the way JS can (``(?![\\s\\S])``), then refuse anything else not portable."""
    close = template["fields"].get("tool_calls", {}).get("close_pattern", "")
    if close.endswith(r"|\Z"):
        raise Unsupported(
            "portable: a call with no closing marker ends at the end of the output; without a JSON-aware "
            r"end (\G, \K and a recursive pattern, regex-module only) a streamed parse would end it at the "
            "end of any chunk"
        )

    def fix(pattern: str) -> str:
        return _END_OF_TEXT.sub(lambda m: m.group(1) + r"(?![\s\S])", pattern)

    if "start_anchor_pattern" in template:
        template["start_anchor_pattern"] = fix(template["start_anchor_pattern"])
    for field in template["fields"].values():
        for key in ("open_pattern", "close_pattern"):
            if key in field:
                field[key] = fix(field[key])
        args = field.get("content_args") or {}
        if "tag_pattern" in args:
            args["tag_pattern"] = fix(args["tag_pattern"])
    for where, pattern in patterns(template):
        problems = portability_problems(pattern)
        if problems:
            raise Unsupported(f"portable: {where} needs {problems[0]}")


# Constructs after "(?" that need the `regex` module or that a JS RegExp lacks.
_GROUP_FEATURES = (
    ("(?(DEFINE)", "a DEFINE block (regex-module recursion), which Python's re and JS lack"),
    ("(?&", "recursion into a named group ((?&name)), which Python's re and JS lack"),
    ("(?P>", "recursion into a named group ((?P>name)), which Python's re and JS lack"),
    ("(?R", "recursion ((?R)), which Python's re and JS lack"),
    ("(?>", "an atomic group ((?>...)), which JS lacks"),
    ("(?(", "a conditional group ((?(...)...)), which JS lacks"),
    ("(?|", "a branch-reset group, which Python's re and JS lack"),
)
_ESCAPE_FEATURES = {
    "G": r"\G (continue where the last match ended), which Python's re and JS lack",
    "K": r"\K (reset the match start), which Python's re and JS lack",
    "Z": r"\Z (end of text), which JS lacks",
    "A": r"\A (start of text), which JS lacks",
    "z": r"\z, which Python's re and JS lack",
    "p": r"\p{...} classes, which Python's re lacks",
    "X": r"\X (grapheme), which Python's re and JS lack",
}


def portability_problems(pattern: str) -> list[str]:
    """Why ``pattern`` is not portable (empty when it compiles with Python's ``re`` using only features a JS
    ``RegExp`` has).  Named groups are written ``(?P<name>...)``: JS spells them ``(?<name>...)``, the same
    feature, which ports rewrite."""
    problems: list[str] = []
    try:
        re.compile(pattern)
    except re.error as exc:
        problems.append(f"a construct Python's re refuses ({exc})")
    i, in_class, after_quantifier = 0, False, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in _ESCAPE_FEATURES and not in_class:
                problems.append(_ESCAPE_FEATURES[nxt])
            i, after_quantifier = i + 2, False
            continue
        if in_class:
            in_class = ch != "]"
            i += 1
            continue
        if ch == "[":
            in_class, after_quantifier = True, False
            i += 2 if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]" else 1
            continue
        if ch == "+" and after_quantifier:
            problems.append("a possessive quantifier (*+, ++, ?+), which Python's re before 3.11 and JS lack")
        if ch == "(" and pattern.startswith("(?", i):
            for prefix, why in _GROUP_FEATURES:
                if pattern.startswith(prefix, i):
                    problems.append(why)
                    break
            else:
                flags = re.match(r"\(\?[aiLmsux-]+[:)]", pattern[i:])
                if flags:
                    problems.append("inline flags ((?s), (?i:...)), which JS lacks")
        after_quantifier = (
            ch in "*+?}"
            and not (ch == "?" and pattern[i - 1 : i] == "(")
            and not (ch in "+?" and after_quantifier)
        )
        i += 1
    return list(dict.fromkeys(problems))


def set_aside_reason(spec: FormatSpec, case: CaseResult) -> str:
    """Why a case a consumer got wrong is beyond what a response_template can express ("" when it is not:
    then the disagreement is a failure)."""
    marker = _own_marker_in_arguments(spec, case.expected)
    if marker:
        return f"{_TEXTUAL_ENDS} (the argument holds {marker!r})"
    literal = _python_literal_in_output(case.expected, case.output)
    return f"{_PYTHON_LITERALS} ({literal})" if literal else ""


_TEXTUAL_ENDS = (
    "response_template finds region ends by plain text search, even inside JSON strings, so an argument "
    "holding the format's own marker cannot be expressed"
)


_PYTHON_LITERALS = (
    "the template writes nested arguments as Python literals and parse_response casts them with JSON only"
)


def _python_literal_in_output(expected: dict[str, Any], output: str) -> str:
    """An object or array argument that the output holds as its Python repr (``{'a': True}``), if any."""
    for call in expected.get("tool_calls") or []:
        args = call.get("arguments")
        for key, value in args.items() if isinstance(args, dict) else ():
            if isinstance(value, (dict, list)) and value and repr(value) in output:
                return f"{key}={repr(value)[:40]}"
    return ""


def _own_marker_in_arguments(spec: FormatSpec, expected: dict[str, Any]) -> str:
    """The first of the spec's markers that an expected argument string contains ("" when none does)."""
    markers = sorted({m.strip() for m in spec.all_markers() if len(m.strip()) >= 2}, key=len, reverse=True)

    def strings(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return []

    for call in expected.get("tool_calls") or []:
        for text in strings(call.get("arguments")):
            for marker in markers:
                if marker in text:
                    return marker
    return ""
