"""The ``response-template`` target: the ``response_template`` dict of Hugging Face transformers.

``tokenizer.parse_response`` reads it (vLLM too, with ``--tool-call-parser hf --reasoning-parser hf``).  It
is proven by running transformers' own ``parse_response`` on every round-trip case and comparing with our
parser.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from workbench.engines.response_rules import set_aside_reason
from workbench.formats import response_fields
from workbench.formats.response_parts import ResponseGap, lit, optional, seq
from workbench.proofs import CaseProof, ExportError, Proof, Unsupported, first_line
from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.validate import (
    FAIL,
    PASS,
    ROUND_TRIP_TOOLS,
    UNSUPPORTED,
    ValidationReport,
    compare_messages,
)


def _reasoning_opener(spec: FormatSpec) -> str:
    """The text that opens reasoning: its start marker, or for a delimiter format (no start marker) the
    text the generation prompt ends with when thinking (Apriel: ``Here are my reasoning steps:``)."""
    if spec.reasoning.mode == "none":
        return ""
    return spec.reasoning.start.strip() or (
        spec.prompt.suffix_when_thinking.strip() if spec.prompt.thinking_opened else ""
    )


def _reasoning_anchor(spec: FormatSpec, *, portable: bool = False) -> dict[str, str]:
    """Where parsing starts in the prompt: at its very end, or just before a reasoning opener it ends with.

    transformers truncates the prompt after the *last* anchor match and parses the rest before the output,
    so a prompt ending in ``<think>\n`` starts the message inside reasoning.  The role header is never
    needed, which keeps the anchor independent of how the template writes it.
    """
    opener = _reasoning_opener(spec)
    if portable:
        # Python's `re` and JS have no variable-width look-behind and JS has no `\Z`: the end is
        # `(?![\s\S])`, and the whitespace after the opener is one of the paddings templates write.
        end = r"(?![\s\S])"
        if not opener:
            return {"start_anchor_pattern": end}
        lit = re.escape(opener)
        behind = "".join(f"(?<!{lit}{pad})" for pad in _PADDINGS)
        return {"start_anchor_pattern": rf"(?={lit}\s*{end})|{behind}{end}"}
    if opener:
        lit = re.escape(opener)
        return {"start_anchor_pattern": rf"(?={lit}\s*\Z)|(?<!{lit}\s*)\Z"}
    return {"start_anchor_pattern": r"\Z"}


# The whitespace templates write after a reasoning opener at the end of a generation prompt.
_PADDINGS = ("", r"\n", r"\n\n", " ", r"\r\n")


def _tool_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    """The regions the format's family contributes (its ``response_fields`` hook, ``formats/<name>/``)."""
    try:
        return response_fields(spec)
    except ResponseGap as exc:
        raise Unsupported(str(exc)) from None


# A JSON value as a recursive `regex` pattern (transformers parses response templates with `regex`).
_JSON_VALUE = (
    r'(?(DEFINE)(?P<jv>\s*+(?:"(?:[^"\\]|\\.)*+"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null'
    r"|\{\s*(?:(?&jv):(?&jv)(?:,(?&jv):(?&jv))*)?\s*\}|\[\s*(?:(?&jv)(?:,(?&jv))*)?\s*\])\s*))"
)


def _json_aware(close: str) -> str:
    r"""A close pattern that only fires after a complete JSON value.

    transformers looks for a region's close by plain text search, so an argument holding the format's own
    closing marker (``"</tool_call>"`` inside a JSON string) would end the call early.  Anchored at the
    region's start (``\G``), the pattern first consumes one JSON value and then ``\K`` starts the real
    match at the marker, so the body is exactly the JSON.  The value is optional so the pattern still
    matches when transformers has already moved past a complete value while waiting for the marker.
    """
    return rf"\G{_JSON_VALUE}(?:(?&jv))?\K(?:{close})"


def build_response_template(spec: FormatSpec, profile: str = "transformers") -> dict[str, Any]:
    """The ``response_template`` dict for ``spec`` in one consumer's profile (pure).

    ``transformers`` is the richest (``reasoning_content``, ``join``, JSON-aware ends written with the
    ``regex`` module); the serving profiles rename and drop what vLLM/SGLang refuse at start-up; ``portable``
    also keeps to regex features Python's ``re`` and a JS ``RegExp`` share (see
    :mod:`workbench.engines.response_rules`).

    Raises:
        ExportError: an unknown profile.
        Unsupported: the format (or the profile) cannot express the spec (the message names the feature).
    """
    from workbench.engines.response_rules import PROFILES, apply_profile

    if profile not in PROFILES:
        raise ExportError(f"unknown profile {profile!r} (choose from {', '.join(PROFILES)})")
    return apply_profile(_build_rich(spec, portable=profile == "portable"), profile)


def _build_rich(spec: FormatSpec, *, portable: bool) -> dict[str, Any]:
    """The transformers-profile template (``portable``: without the ``regex``-only JSON-aware ends)."""
    fields: dict[str, dict[str, Any]] = {}
    r, c = spec.reasoning, spec.content
    tools = _tool_fields(spec)
    # A family that reads the whole turn (Harmony's channels) gives the reasoning and content regions too.
    whole_turn = "content" in tools or "reasoning_content" in tools
    if not whole_turn and r.mode != "none":
        start, end = re.escape(_reasoning_opener(spec)), lit(r.end)
        if not end:
            raise Unsupported("reasoning has no end marker")
        if start:
            fields["reasoning_content"] = {"open_pattern": start, "close_pattern": end}
        elif c.mode == "plain":
            # A delimiter format with nothing that opens reasoning: everything before the delimiter is
            # reasoning, and the answer follows it.
            fields["reasoning_content"] = {}
            fields["content"] = {"open_pattern": end, "repeats": True, "join": ""}
    beside_calls = bool(c.with_calls_start.strip() or c.with_calls_end.strip())
    if beside_calls and not (c.mode == "always_wrapped" and c.start.strip() and c.with_calls_start.strip()):
        raise Unsupported(
            "the answer is written otherwise beside calls (content.with_calls_start "
            f"{c.with_calls_start!r}) and has no wrapper of its own to pair it with: a content region "
            "opens with one pattern or none"
        )
    if not whole_turn and "content" not in fields:
        if c.mode == "always_wrapped" and c.start:
            opens, closes = lit(c.start), lit(c.end)
            if beside_calls:  # either wrapper: the answer's own, or the one beside calls ('<report>')
                opens = f"(?:{opens}|{lit(c.with_calls_start)})"
                if closes and lit(c.with_calls_end):
                    closes = f"(?:{closes}|{lit(c.with_calls_end)})"
                elif lit(c.with_calls_end):
                    closes = lit(c.with_calls_end)
            fields["content"] = {"open_pattern": opens, "repeats": True, "join": ""}
            if closes:
                fields["content"]["close_pattern"] = closes
        elif c.mode == "wrapped_with_reasoning" and c.start and "reasoning_content" in fields:
            # Granite: `<think>..</think><response>..</response>`, but a plain answer without reasoning.  The
            # wrapper's start is swallowed with the end of reasoning, its end closes the (implicit) answer.
            reasoning = fields["reasoning_content"]
            reasoning["close_pattern"] = seq(reasoning["close_pattern"], optional(lit(c.start)))
            fields["content"] = {"repeats": True, "join": ""}
            if lit(c.end):
                fields["content"]["close_pattern"] = lit(c.end)
        else:
            fields["content"] = {"repeats": True, "join": ""}
    calls: dict[str, Any] = tools.get("tool_calls") or {}
    json_body = calls and calls.get("content") == "json" and not spec.tools.args_python_dict
    if json_body and calls.get("close_pattern") and not portable:
        calls["close_pattern"] = _json_aware(calls["close_pattern"])
    fields.update(tools)
    if not whole_turn and "open_pattern" in fields.get("content", {}) and tools:
        # An explicit content region must give way when a tool call starts.
        opener = re.sub(r"\(\?P<\w+>", "(?:", tools["tool_calls"]["open_pattern"])
        close = fields["content"].get("close_pattern")
        fields["content"]["close_pattern"] = f"{close}|(?={opener})" if close else f"(?={opener})"
    ordered = {name: {k: f[k] for k in _FIELD_KEY_ORDER if k in f} for name, f in fields.items()}
    return {
        "version": 1,
        **_reasoning_anchor(spec, portable=portable),
        "defaults": {"role": "assistant"},
        "fields": ordered,
    }


# The order keys are written in: how a reader scans a region (where it opens, closes, what it holds).
_FIELD_KEY_ORDER = (
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform_each",
    "transform",
)


def normalize_hf_message(message: dict[str, Any]) -> dict[str, Any]:
    """transformers' parsed message in our parse-contract shape, for comparison."""
    calls = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        calls.append(
            {"id": call.get("id", "") or "", "name": fn.get("name"), "arguments": fn.get("arguments")}
        )

    def text(value: Any) -> str:  # a repeated region without `join` is a list of its pieces
        return "".join(value) if isinstance(value, list) else (value or "")

    reasoning = message.get("reasoning_content", message.get("thinking"))
    return {
        "content": text(message.get("content")),
        "reasoning_content": text(reasoning),
        "tool_calls": calls,
    }


def prove_response_template(
    template: dict[str, Any],
    spec: FormatSpec,
    report: ValidationReport,
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS,
) -> Proof:
    """Run transformers' own ``parse_response`` on every round-trip case and compare with our parser.

    The comparison is against our parser's message for the case (what the report recorded), with text
    compared without surrounding whitespace (``parse_response`` strips text regions by default).
    """
    from transformers.utils.chat_parsing import parse_response

    tool_dicts = [t.to_openai() for t in tools]
    out: list[CaseProof] = []
    for case in report.cases:
        if case.status == UNSUPPORTED or case.parsed is None:
            out.append(CaseProof(case.id, UNSUPPORTED, case.reason or "case not applicable"))
            continue
        try:
            hf_tools: list[Any] = list(tool_dicts)
            hf = parse_response(case.output, template, prefix=case.generation_prefix, tools=hf_tools)
            diff = compare_messages(case.parsed, normalize_hf_message(hf), compare_ids=case.compare_ids)
            problem = diff[0] if diff else ""
        except Exception as exc:  # the consumer rejecting the output is the finding
            problem = f"parse_response raised {type(exc).__name__}: {first_line(exc)}"
        aside = set_aside_reason(spec, case) if problem else ""
        if aside:
            out.append(CaseProof(case.id, UNSUPPORTED, aside))
        else:
            out.append(CaseProof(case.id, FAIL if problem else PASS, problem))
    return Proof("response-template", tuple(out))
