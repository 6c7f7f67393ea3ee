"""Export a validated FormatSpec to the formats real consumers load, each proven by its consumer.

Targets:

* ``spec`` — the canonical FormatSpec JSON (schema: ``workbench/data/spec.schema.json``) with provenance
  (template sha256, workbench version) and the round-trip validation report.  Exporting it again from the
  exported file gives the same bytes.
* ``response-template`` — the ``response_template`` dict of Hugging Face transformers
  (``tokenizer.parse_response``; vLLM reads it with ``--tool-call-parser hf --reasoning-parser hf``).  It is
  proven by running transformers' own ``parse_response`` on every round-trip case and comparing with our
  parser.
* ``structural-tag`` — an xgrammar StructuralTag for a given tool list, proven by compiling it and feeding
  every round-trip tool-call output to a ``GrammarMatcher`` token by token.
* ``tests`` — a pytest file holding the round-trip cases (and recorded sessions) that a user can drop into
  their own repository; it needs only this package (the spec is embedded).

Every builder is a pure function of the spec (plus tools); every ``prove_*`` function runs the consumer and
returns a :class:`Proof` listing each case it checked.  Nothing here writes files except :func:`write_export`,
which writes atomically and never overwrites with a half-finished result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.chat import Tool
from workbench.session import Session, write_atomic
from workbench.spec import FormatSpec, Provenance, SpecError
from workbench.template.source import TemplateSource
from workbench.validate import (
    FAIL,
    PASS,
    ROUND_TRIP_TOOLS,
    UNSUPPORTED,
    ValidationReport,
    compare_messages,
    report_from_spec,
    validate,
    validate_recorded,
)

TARGETS = ("spec", "response-template", "structural-tag", "tests")
SCHEMA_PATH = Path(__file__).resolve().parent / "data" / "spec.schema.json"


class ExportError(Exception):
    """The spec cannot be exported to the requested target (the message says why, in one line)."""


@dataclass(frozen=True)
class CaseProof:
    """One round-trip case as checked by a consumer."""

    id: str
    status: str  # pass | fail | unsupported
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class Proof:
    """What running the consumer on the round-trip cases showed."""

    target: str
    cases: tuple[CaseProof, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        checked = [c for c in self.cases if c.status != UNSUPPORTED]
        return bool(checked) and all(c.status == PASS for c in checked)

    def summary(self) -> str:
        checked = [c for c in self.cases if c.status != UNSUPPORTED]
        ok = sum(c.status == PASS for c in checked)
        return f"{self.target}: {ok}/{len(checked)} round-trip cases accepted by the consumer"

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "passed": self.passed,
            "summary": self.summary(),
            "notes": list(self.notes),
            "cases": [c.to_dict() for c in self.cases],
        }


# =============================================================================================== spec target
def load_spec_schema() -> dict[str, Any]:
    """The JSON Schema shipped with the package for exported specs."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def check_spec_schema(data: Any) -> list[str]:
    """Schema errors of a spec's JSON form (empty when it conforms), one readable line each."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_spec_schema())
    return [
        f"{'.'.join(str(p) for p in err.absolute_path) or '(root)'}: {err.message}"
        for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    ]


def spec_with_provenance(
    spec: FormatSpec, report: ValidationReport | None, *, template_sha256: str, template_name: str
) -> FormatSpec:
    """The spec as exported: provenance filled in, the validation report attached.

    ``edited`` is kept: a spec a person changed stays marked as such.  The workbench version of a spec that
    already carries one is kept too, so re-exporting an exported spec gives the same bytes.
    """
    prov = spec.provenance
    return replace(
        spec,
        provenance=Provenance(
            template_sha256=template_sha256 or prov.template_sha256,
            template_name=template_name or prov.template_name,
            workbench_version=prov.workbench_version or __version__,
            edited=prov.edited,
            validation=report.to_dict() if report is not None else prov.validation,
        ),
    )


def render_spec_export(spec: FormatSpec) -> str:
    """The exported spec's text (checked against the shipped schema before it is returned)."""
    errors = check_spec_schema(spec.to_dict())
    if errors:
        raise ExportError(f"the spec does not conform to spec.schema.json: {errors[0]}")
    return spec.to_json()


def load_spec_file(path: str | Path) -> FormatSpec:
    """Read an exported spec; one clear :class:`SpecError` line on any problem (never writes)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec file not found: {p}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{p} is not a spec file (not UTF-8 text)") from None
    except OSError as exc:
        raise SpecError(f"cannot read spec file {p}: {exc.strerror or exc}") from None
    if not text.strip():
        raise SpecError(f"spec file {p} is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        what = "truncated" if exc.pos >= len(text.rstrip()) - 1 else "corrupt"
        raise SpecError(
            f"spec file {p} is {what}: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if isinstance(data, dict) and "spec" in data and "reasoning" not in data:
        data = data["spec"]  # accept `workbench analyze --json` output as well
    try:
        return FormatSpec.from_dict(data)
    except SpecError as exc:
        raise SpecError(f"{p}: {exc}") from None


# ================================================================================= response-template target
class Unsupported(ExportError):
    """The target format cannot express this spec (e.g. a response_template cannot read Python calls)."""


def _lit(marker: str) -> str:
    """A marker as a regex, surrounding whitespace made flexible (templates pad markers with newlines)."""
    core = marker.strip()
    return re.escape(core) if core else ""


def _seq(*parts: str) -> str:
    """Join regex parts with optional whitespace between them."""
    return r"\s*".join(p for p in parts if p)


def _reasoning_opener(spec: FormatSpec) -> str:
    """The text that opens reasoning: its start marker, or for a delimiter format (no start marker) the
    text the generation prompt ends with when thinking (Apriel: ``Here are my reasoning steps:``)."""
    if spec.reasoning.mode == "none":
        return ""
    return spec.reasoning.start.strip() or (
        spec.prompt.suffix_when_thinking.strip() if spec.prompt.thinking_opened else ""
    )


def _reasoning_anchor(spec: FormatSpec) -> dict[str, str]:
    """Where parsing starts in the prompt: at its very end, or just before a reasoning opener it ends with.

    transformers truncates the prompt after the *last* anchor match and parses the rest before the output,
    so a prompt ending in ``<think>\n`` starts the message inside reasoning.  The role header is never
    needed, which keeps the anchor independent of how the template writes it.
    """
    opener = _reasoning_opener(spec)
    if opener:
        lit = re.escape(opener)
        return {"start_anchor_pattern": rf"(?={lit}\s*\Z)|(?<!{lit}\s*)\Z"}
    return {"start_anchor_pattern": r"\Z"}


def _call_transform(spec: FormatSpec, *, from_captures: bool, each: bool = False) -> dict[str, Any]:
    """The transform turning one parsed call into an OpenAI tool call.

    ``each``: the transform is applied to every element of a JSON array, whose keys are then top-level
    placeholders (``{name}``) rather than paths under ``{content}``.
    """
    t = spec.tools
    if from_captures:
        function: dict[str, Any] = {"name": "{name}", "arguments": "{content}"}
        out: dict[str, Any] = {"type": "function", "function": function}
        if t.id_position in ("pre_func_name", "between_func_and_args") or t.function_namespace:
            out["id"] = "{id}"
        return out
    if t.fun_name_is_key:
        raise Unsupported("the function name is a JSON key; response_template transforms cannot read it")
    parts = [p for p in ("" if each else "content", t.function_field) if p]
    root = "".join(f"{p}." for p in parts)
    function = {"name": f"{{{root}{t.name_field}}}", "arguments": f"{{{root}{t.args_field}}}"}
    out = {"type": "function", "function": function}
    if t.id_field:
        out["id"] = f"{{{'' if each else 'content.'}{t.id_field}}}"
    return out


def _name_regex(spec: FormatSpec) -> str:
    """The part of a call header that holds the function name (and an id, when the format writes one).

    With a ``function_namespace`` (Kimi-K2: ``functions.get_weather:0``) the whole token is the call id and
    the name sits between the namespace and an optional ``:index``, as our parser reads it.
    """
    t = spec.tools
    if t.function_namespace:
        name = rf"(?P<id>{re.escape(t.function_namespace)}(?P<name>[\w\-/@$.]+?)(?::\d+)?)"
        return _seq(_lit(t.name_prefix), name, _lit(t.name_suffix))
    name = r"(?P<name>[^\s<>\[\]{}\"'=]+)"
    ident = r"(?P<id>[^\s<>]+?)"
    if t.id_position == "pre_func_name":
        return _seq(
            _lit(t.id_prefix), ident, _lit(t.id_suffix), _lit(t.name_prefix), name, _lit(t.name_suffix)
        )
    if t.id_position == "between_func_and_args":
        return _seq(
            _lit(t.name_prefix), name, _lit(t.name_suffix), _lit(t.id_prefix), ident, _lit(t.id_suffix)
        )
    return _seq(_lit(t.name_prefix), name, _lit(t.name_suffix))


def _optional(pattern: str) -> str:
    return f"(?:{pattern})?" if pattern else ""


def _tool_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    t = spec.tools
    if t.format == "none":
        return {}
    if t.format == "pythonic":
        raise Unsupported("pythonic calls (f(a=1)) cannot be read by any response_template content parser")
    if t.format == "recipient":
        raise Unsupported(
            "recipient-style calls (>>>name) have no closing marker a response_template can use"
        )
    if t.format == "harmony":
        return _harmony_fields()
    section_open, section_close = _lit(t.section_start), _lit(t.section_end)
    if t.format == "json_native":
        if t.array_wrapped:
            opener = _lit(t.section_start or t.call_start or t.code_block_marker)
            closer = _lit(t.section_end or t.call_end)
            if not opener:
                raise Unsupported("a bare JSON array with no marker before it cannot start a region")
            fields: dict[str, Any] = {
                "open_pattern": opener,
                "content": "json",
                "transform_each": True,
                "transform": _call_transform(spec, from_captures=False, each=True),
            }
            if closer:
                fields["close_pattern"] = closer
            if t.code_block_marker:
                fields["open_pattern"] = _seq(opener, r"```(?:\w+)?")
                fields["close_pattern"] = _seq("```", closer) if closer else "```"
            return {"tool_calls": fields}
        opener = _lit(t.call_start) or section_open
        fields = {"content": "json", "repeats": True, "transform": _call_transform(spec, from_captures=False)}
        if opener:
            fields["open_pattern"] = _seq(_optional(section_open), opener) if _lit(t.call_start) else opener
            closer = _seq(_lit(t.call_end), _optional(section_close)) if _lit(t.call_end) else section_close
            fields["close_pattern"] = closer or rf"(?={opener})"
        else:
            # Bare JSON calls (Llama 3.x): a call starts where an object opens with the name key, and ends
            # where the object is followed by another call or by the end of the output.
            key = re.escape(json.dumps(t.name_field))
            fields["open_pattern"] = rf"(?=\{{\s*{key}\s*:)"
            fields["close_pattern"] = rf"(?<=\}})(?=\s*(?:[;,]?\s*\{{\s*{key}\s*:|\Z))"
        return {"tool_calls": fields}
    # tag_with_json / tag_with_tagged: the name sits in the call header and is captured.
    header = _seq(_optional(section_open), _lit(t.call_start), _name_regex(spec), _lit(t.args_start))
    if not header.strip():
        raise Unsupported("the call header has no markers")
    closer = _seq(_lit(t.args_end), _lit(t.func_close), _lit(t.call_end), _optional(section_close))
    fields = {
        "open_pattern": header,
        "repeats": True,
        "transform": _call_transform(spec, from_captures=True),
    }
    if closer:
        fields["close_pattern"] = closer
    else:
        nxt = _lit(t.call_start) or _lit(t.name_prefix)
        if nxt:
            fields["close_pattern"] = rf"(?={nxt})"
    if t.format == "tag_with_json":
        fields["content"] = "json"
    else:
        if not _lit(t.arg_name_prefix) or not (_lit(t.arg_value_suffix) or _lit(t.arg_separator)):
            raise Unsupported("tagged arguments need a name marker and a value end marker")
        # Whitespace is flexible around markers, but a value keeps its own (one newline of padding aside).
        key = _seq(_lit(t.arg_name_prefix), r"(?P<key>[^\s<>=\"]+?)", _lit(t.arg_name_suffix))
        opener = _seq(key, _lit(t.arg_value_prefix))
        pattern = opener + r"\s*?\n?(?P<value>.*?)\n?" + _lit(t.arg_value_suffix or t.arg_separator)
        fields["content"] = "xml-inline"
        fields["content_args"] = {"tag_pattern": pattern}
    return {"tool_calls": fields}


def _harmony_fields() -> dict[str, dict[str, Any]]:
    """Harmony (gpt-oss) messages: channel headers open regions, ``<|end|>``/``<|call|>``/``<|return|>``
    close them.  The channel names are the Harmony format's own vocabulary, not a template's."""
    ends = r"<\|end\|>|<\|call\|>|<\|return\|>"
    return {
        "reasoning_content": {
            "open_pattern": r"<\|channel\|>analysis<\|message\|>",
            "close_pattern": ends,
            "repeats": True,
            "join": "\n",
        },
        "content": {
            # A commentary message without a recipient is a preamble shown to the user.
            "open_pattern": r"<\|channel\|>(?:final|commentary)<\|message\|>",
            "close_pattern": ends,
            "repeats": True,
            "join": "\n",
        },
        "tool_calls": {
            "open_pattern": r"(?:<\|channel\|>commentary\s*)?to=functions\.(?P<name>[^\s<]+)\s*"
            r"(?:<\|channel\|>commentary)?\s*(?:<\|constrain\|>)?\s*(?:json)?\s*<\|message\|>",
            "close_pattern": ends,
            "content": "json",
            "repeats": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
    }


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


def build_response_template(spec: FormatSpec) -> dict[str, Any]:
    """The transformers ``response_template`` dict for ``spec`` (pure).

    Raises:
        Unsupported: the format uses something a response_template cannot express (named in the message).
    """
    fields: dict[str, dict[str, Any]] = {}
    r, c = spec.reasoning, spec.content
    tools = _tool_fields(spec)
    harmony = spec.tools.format == "harmony"
    if not harmony and r.mode != "none":
        start, end = re.escape(_reasoning_opener(spec)), _lit(r.end)
        if not end:
            raise Unsupported("reasoning has no end marker")
        if start:
            fields["reasoning_content"] = {"open_pattern": start, "close_pattern": end}
        elif c.mode == "plain":
            # A delimiter format with nothing that opens reasoning: everything before the delimiter is
            # reasoning, and the answer follows it.
            fields["reasoning_content"] = {}
            fields["content"] = {"open_pattern": end, "repeats": True, "join": ""}
    if not harmony and "content" not in fields:
        if c.mode == "always_wrapped" and c.start:
            fields["content"] = {"open_pattern": _lit(c.start), "repeats": True, "join": ""}
            if _lit(c.end):
                fields["content"]["close_pattern"] = _lit(c.end)
        elif c.mode == "wrapped_with_reasoning" and c.start and "reasoning_content" in fields:
            # Granite: `<think>..</think><response>..</response>`, but a plain answer without reasoning.  The
            # wrapper's start is swallowed with the end of reasoning, its end closes the (implicit) answer.
            reasoning = fields["reasoning_content"]
            reasoning["close_pattern"] = _seq(reasoning["close_pattern"], _optional(_lit(c.start)))
            fields["content"] = {"repeats": True, "join": ""}
            if _lit(c.end):
                fields["content"]["close_pattern"] = _lit(c.end)
        else:
            fields["content"] = {"repeats": True, "join": ""}
    calls = tools.get("tool_calls")
    json_body = calls and calls.get("content") == "json" and not spec.tools.args_python_dict
    if json_body and calls.get("close_pattern"):
        calls["close_pattern"] = _json_aware(calls["close_pattern"])
    fields.update(tools)
    if not harmony and "open_pattern" in fields.get("content", {}) and tools:
        # An explicit content region must give way when a tool call starts.
        opener = re.sub(r"\(\?P<\w+>", "(?:", tools["tool_calls"]["open_pattern"])
        close = fields["content"].get("close_pattern")
        fields["content"]["close_pattern"] = f"{close}|(?={opener})" if close else f"(?={opener})"
    ordered = {name: {k: f[k] for k in _FIELD_KEY_ORDER if k in f} for name, f in fields.items()}
    return {"version": 1, **_reasoning_anchor(spec), "defaults": {"role": "assistant"}, "fields": ordered}


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
    return {
        "content": message.get("content") or "",
        "reasoning_content": message.get("reasoning_content") or "",
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
            hf = parse_response(case.output, template, prefix=case.generation_prefix, tools=tool_dicts)
            diff = compare_messages(case.parsed, normalize_hf_message(hf), compare_ids=case.compare_ids)
            problem = diff[0] if diff else ""
        except Exception as exc:  # the consumer rejecting the output is the finding
            problem = f"parse_response raised {type(exc).__name__}: {_first(exc)}"
        marker = _own_marker_in_arguments(spec, case.expected) if problem else ""
        literal = _python_literal_in_output(case.expected, case.output) if problem else ""
        if marker:
            out.append(CaseProof(case.id, UNSUPPORTED, f"{_TEXTUAL_ENDS} (the argument holds {marker!r})"))
        elif literal:
            out.append(CaseProof(case.id, UNSUPPORTED, f"{_PYTHON_LITERALS} ({literal})"))
        else:
            out.append(CaseProof(case.id, FAIL if problem else PASS, problem))
    return Proof("response-template", tuple(out))


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


def _first(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else ""


# ==================================================================================== structural-tag target
_WS = {"type": "regex", "pattern": r"[ \t\n]*"}


def _const(text: str) -> dict[str, Any]:
    return {"type": "const_string", "value": text}


def _spaced(*items: dict[str, Any] | str) -> dict[str, Any]:
    """A sequence of formats (strings become their stripped literal) with optional whitespace between.

    Templates pad markers with newlines in ways a spec does not always record, so whitespace between
    structural pieces is free; the pieces themselves are exact.
    """
    elements: list[dict[str, Any]] = []
    for item in items:
        fmt = _const(item.strip()) if isinstance(item, str) else item
        if isinstance(item, str) and not item.strip():
            continue
        if elements:
            elements.append(_WS)
        elements.append(fmt)
    return elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}


def _json_value(schema: Any) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": schema if isinstance(schema, (dict, bool)) else True}


def _properties(tool: Tool) -> dict[str, Any]:
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    return props if isinstance(props, dict) else {}


def _call_object_schema(spec: FormatSpec, tool: Tool) -> dict[str, Any]:
    """The JSON schema of one whole call object of a json_native format, fields in the template's order."""
    t = spec.tools
    if t.fun_name_is_key:
        return {
            "type": "object",
            "properties": {tool.name: tool.parameters},
            "required": [tool.name],
            "additionalProperties": False,
        }
    fields_: dict[str, Any] = {
        t.name_field: {"const": tool.name},
        t.args_field: tool.parameters,
    }
    for id_key in (t.id_field, t.gen_id_field):
        if id_key:
            fields_[id_key] = {"type": "string"}
    order = [f for f in t.parameter_order if f in fields_] or list(fields_)
    order += [f for f in fields_ if f not in order]
    inner: dict[str, Any] = {
        "type": "object",
        "properties": {f: fields_[f] for f in order},
        "required": [t.name_field, t.args_field],
    }
    if t.function_field:
        return {"type": "object", "properties": {t.function_field: inner}, "required": [t.function_field]}
    return inner


def _raw_value_format(schema: Any, value_suffix: str) -> dict[str, Any]:
    """A tagged argument value as templates write it: strings raw, other types as JSON (or as the Python
    literal ``True``/``False``/``None`` that templates produce with ``|string``)."""
    types = schema.get("type") if isinstance(schema, dict) else None
    if types == "string" or types is None:
        return {"type": "any_text"}
    alternatives = [_json_value(schema)]
    if types in ("object", "array"):
        # Templates that print nested values with `|string` write Python literals on one line.
        alternatives.append({"type": "regex", "pattern": r"[\[{][^\n]*[\]}]"})
    if types == "boolean":
        alternatives.append({"type": "regex", "pattern": "True|False"})
    if types == "null":
        alternatives.append(_const("None"))
    return {"type": "sequence", "elements": [_WS, {"type": "or", "elements": alternatives}, _WS]}


def _tagged_arguments(spec: FormatSpec, tool: Tool) -> list[dict[str, Any]]:
    t = spec.tools
    required = set(tool.parameters.get("required", ())) if isinstance(tool.parameters, dict) else set()
    items: list[dict[str, Any]] = []
    for key, schema in _properties(tool).items():
        head = (t.arg_name_prefix + key + t.arg_name_suffix).strip()
        value_end = (t.arg_value_suffix or t.arg_separator).strip()
        if _lit(t.arg_value_prefix):
            value = {
                "type": "tag",
                "begin": t.arg_value_prefix.strip(),
                "content": _raw_value_format(schema, value_end),
                "end": value_end,
            }
            one = _spaced(head, value)
        else:
            one = {
                "type": "tag",
                "begin": head,
                "content": _raw_value_format(schema, value_end),
                "end": value_end,
            }
        if t.arg_separator.strip() and items:
            one = _spaced(t.arg_separator, one)
        items.append(one if key in required else {"type": "optional", "content": one})
    return items


_ID_TEXT = {"type": "regex", "pattern": r"[^\s\[\]<>{}]+"}


def _call_body(spec: FormatSpec, tool: Tool, *, after_trigger: str = "") -> dict[str, Any]:
    """One call after its trigger: the header with the name (and id), the arguments, closing markers.

    ``after_trigger`` is the marker that triggered the tag when it is the name prefix itself (the tag's
    begin already holds it).
    """
    t = spec.tools
    prefix = "" if after_trigger else t.name_prefix
    namespace = (
        t.function_namespace if t.function_namespace and not prefix.endswith(t.function_namespace) else ""
    )
    if after_trigger.endswith(t.function_namespace):
        namespace = ""
    head: list[dict[str, Any] | str] = [_const((prefix + namespace + tool.name).strip())]
    if t.function_namespace:
        head.append({"type": "optional", "content": {"type": "regex", "pattern": r":\d+"}})
    if t.name_suffix.strip():
        head.append(t.name_suffix)
    ident: list[dict[str, Any] | str] = [t.id_prefix, _ID_TEXT, t.id_suffix]
    if t.id_position == "pre_func_name":
        head = [*ident, *head]
    elif t.id_position == "between_func_and_args":
        head = [*head, *ident]
    if t.format == "tag_with_tagged":
        return _spaced(*head, *_tagged_arguments(spec, tool), t.func_close)
    return _spaced(*head, t.args_start, _json_value(tool.parameters), t.args_end, t.func_close)


def _calls_format(spec: FormatSpec, tools: Sequence[Tool]) -> dict[str, Any]:
    """The tool-call part: free text until a trigger, then calls of the given tools only."""
    t = spec.tools
    if not tools:
        raise ExportError("the structural tag needs at least one tool (--tools)")
    if t.format in ("pythonic", "recipient"):
        raise Unsupported(f"{t.format} calls are not expressed as a structural tag by this exporter")
    if t.format == "none":
        raise Unsupported("the spec has no tool calls")
    if t.format == "json_native":
        one = {"anyOf": [_call_object_schema(spec, tool) for tool in tools]}
        if t.array_wrapped:
            items = {"type": "array", "items": one, "minItems": 1, **({} if t.parallel else {"maxItems": 1})}
            return _wrapped(spec, _json_value(items), section_only=True)
        if not (t.section_start.strip() or t.call_start.strip()):
            return _bare_json_calls(spec, tools)
        return _wrapped(spec, _json_value(one), section_only=False)
    trigger = ""
    if not (t.section_start.strip() or t.call_start.strip()):
        trigger = t.name_prefix.strip()
    calls = [_call_body(spec, tool, after_trigger=trigger) for tool in tools]
    body = calls[0] if len(calls) == 1 else {"type": "or", "elements": calls}
    return _wrapped(spec, body, section_only=False, trigger=trigger)


def _bare_json_calls(spec: FormatSpec, tools: Sequence[Tool]) -> dict[str, Any]:
    """Calls written as bare JSON objects (Llama 3.x): the object's head up to the arguments is the tag's
    begin, so the trigger is the opening of the name field.  Written as ``json.dumps`` writes it, which is
    what ``tojson`` renders; the proof checks it against the template."""
    t = spec.tools
    order = [f for f in t.parameter_order if f in (t.name_field, t.args_field)]
    if t.fun_name_is_key or t.function_field or (order and order[0] != t.name_field):
        raise Unsupported("bare JSON calls are expressed only as {name, arguments} objects, name first")
    key = "{" + json.dumps(t.name_field) + ": "
    tags = [
        {
            "type": "tag",
            "begin": key + json.dumps(tool.name) + ", " + json.dumps(t.args_field) + ": ",
            "content": _json_value(tool.parameters),
            "end": "}",
        }
        for tool in tools
    ]
    return _triggered([key + '"'], tags, spec.tools.parallel)


def _triggered(triggers: list[str], tags: list[dict[str, Any]], parallel: bool) -> dict[str, Any]:
    """Free text with the tags behind their triggers; one call (then only whitespace) unless parallel."""
    fmt = {"type": "triggered_tags", "triggers": triggers, "tags": tags, "at_least_one": False}
    if parallel:
        return {**fmt, "stop_after_first": False}
    return {"type": "sequence", "elements": [{**fmt, "stop_after_first": True}, _WS]}


def _wrapped(
    spec: FormatSpec, call: dict[str, Any], *, section_only: bool, trigger: str = ""
) -> dict[str, Any]:
    """Put calls behind their trigger: a section holding one or more calls, or one tag per call."""
    t = spec.tools
    section_start, section_end = t.section_start.strip(), t.section_end.strip()
    call_start, call_end = t.call_start.strip(), t.call_end.strip()
    if section_only:
        section_start = section_start or call_start or t.code_block_marker.strip()
        section_end = section_end or call_end
        call_start = call_end = ""
    if section_start:
        one = _spaced(call_start, call, call_end) if call_start or call_end else call
        sep = t.call_separator.strip()
        rest = _spaced(sep, one) if sep else one
        many = _spaced(one, {"type": "star", "content": rest}) if t.parallel and not section_only else one
        tag = {"type": "tag", "begin": section_start, "content": _spaced(_WS, many, _WS), "end": section_end}
        return _triggered([section_start], [tag], parallel=False)
    begin = call_start or trigger
    if not begin:
        raise Unsupported("calls have no marker that could trigger the structural tag")
    tag = {"type": "tag", "begin": begin, "content": _spaced(_WS, call, _WS), "end": call_end}
    return _triggered([begin], [tag], t.parallel)


def build_structural_tag(spec: FormatSpec, tools: Sequence[Tool]) -> dict[str, Any]:
    """An xgrammar StructuralTag (JSON form) for the whole assistant output with ``tools`` (pure).

    Reasoning, when the format has it, is free text up to its end marker (no constraint while the model
    thinks); after it, text is free until a tool-call trigger, and from the trigger on only well-formed
    calls of the given tools are possible.

    Raises:
        Unsupported: the format is not expressed by this exporter (named in the message).
    """
    elements: list[dict[str, Any]] = []
    r = spec.reasoning
    if r.mode != "none" and r.end.strip():
        begin = "" if (spec.prompt.thinking_opened or not r.start.strip()) else r.start.strip()
        elements.append(
            {
                "type": "optional",
                "content": {
                    "type": "tag",
                    "begin": begin,
                    "content": {"type": "any_text"},
                    "end": r.end.strip(),
                },
            }
        )
    elements.append(_calls_format(spec, tools))
    fmt = elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}
    return {"type": "structural_tag", "format": fmt}


@dataclass
class GrammarTokenizer:
    """A tokenizer and its xgrammar view, loaded once (building the xgrammar view of a 150k vocabulary
    takes seconds)."""

    name: str
    tokenizer: Any
    info: Any
    compiler: Any

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))


_TOKENIZERS: dict[str, GrammarTokenizer] = {}


def shared_qwen3() -> Path:
    """Where the real Qwen3 tokenizer is kept (``../shared``, or ``$WORKBENCH_SHARED``)."""
    import os

    shared = Path(os.environ.get("WORKBENCH_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    return shared / "tokenizers" / "qwen3"


def load_grammar_tokenizer(path: str | Path | None = None, *, use_shared: bool = True) -> GrammarTokenizer:
    """The tokenizer structural tags are checked with: ``path`` (a folder or ``tokenizer.json``), else the
    real Qwen3 tokenizer from ``../shared`` when present (and ``use_shared``), else a byte-level BPE built
    here (no download).  Cached: building xgrammar's view of a 150k vocabulary takes seconds.
    """
    import xgrammar as xgr
    from transformers import PreTrainedTokenizerFast

    if path is None and use_shared and (shared_qwen3() / "tokenizer.json").is_file():
        path = shared_qwen3()
    key = str(path) if path is not None else "<built>"
    if key in _TOKENIZERS:
        return _TOKENIZERS[key]
    if path is not None:
        folder = Path(path) if Path(path).is_dir() else Path(path).parent
        file = Path(path) / "tokenizer.json" if Path(path).is_dir() else Path(path)
        if not file.is_file():
            raise ExportError(f"tokenizer not found: {file}")
        if (folder / "tokenizer_config.json").is_file() and file.name == "tokenizer.json":
            tokenizer = PreTrainedTokenizerFast.from_pretrained(str(folder))
        else:
            tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(file))
        name = folder.name
    else:
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=_build_bpe())
        name = "built-byte-level-bpe"
    vocab_size = max(len(tokenizer), max(tokenizer.get_vocab().values()) + 1)
    stop = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=[stop])
    out = GrammarTokenizer(name, tokenizer, info, xgr.GrammarCompiler(info))
    _TOKENIZERS[key] = out
    return out


def _build_bpe() -> Any:
    """A small byte-level BPE trained on chat-like text: every string is encodable (byte fallback), and
    merges make multi-byte tokens that cross marker boundaries, like a real tokenizer's."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    corpus = [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "<think>\nThe user asks.\n</think>\n\nThe answer is 42.",
        '[TOOL_CALLS][{"name": "f", "arguments": {}, "id": "abc"}]',
        "<function=get_time>\n<parameter=timezone>\nUTC\n</parameter>\n</function>",
        'Line one\nLine two — ünïcödé 🙂 ∑ "quoted" \\ back\ttab',
    ] * 20
    tok.train_from_iterator(corpus, trainer=trainer)
    return tok


def check_accepted(compiled: Any, tok: GrammarTokenizer, text: str, end_markers: Sequence[str]) -> str:
    """Feed ``text`` token by token to a fresh matcher; "" when every token is accepted and the grammar can
    end there (or right after one of ``end_markers``, which the model emits to stop), else why not."""
    import xgrammar as xgr

    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    ids = tok.encode(text)
    for i, token in enumerate(ids):
        if not matcher.accept_token(token):
            before = tok.tokenizer.decode(ids[:i])
            return f"token {i} {tok.tokenizer.decode([token])!r} rejected after {before[-60:]!r}"
    if matcher.is_completed():
        return ""
    for marker in end_markers:
        trial = matcher.fork()
        if marker and trial.accept_string(marker) and trial.is_completed():
            return ""
    return f"all {len(ids)} tokens accepted, but the grammar cannot end there"


def prove_structural_tag(
    spec: FormatSpec,
    report: ValidationReport,
    tok: GrammarTokenizer,
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS,
) -> Proof:
    """Compile the structural tag for the round-trip tools and feed it every applicable round-trip output."""
    tag = build_structural_tag(spec, tools)
    try:
        compiled = tok.compiler.compile_structural_tag(json.dumps(tag, ensure_ascii=False))
    except Exception as exc:
        raise ExportError(f"xgrammar cannot compile the structural tag: {_first(exc)}") from None
    ends = [m for m in spec.end_markers if m]
    out: list[CaseProof] = []
    for case in report.cases:
        if case.status == UNSUPPORTED:
            out.append(CaseProof(case.id, UNSUPPORTED, case.reason))
            continue
        why = check_accepted(compiled, tok, case.output, ends)
        out.append(CaseProof(case.id, FAIL if why else PASS, why))
    return Proof("structural-tag", tuple(out), notes=(f"tokenizer: {tok.name}",))


# ============================================================================================= tests target
# The generated module's code; build_tests_file fills in the name, the version and the data literals.
TESTS_TEMPLATE = Path(__file__).resolve().parent / "data" / "roundtrip_tests.py.txt"


def build_tests_file(
    spec: FormatSpec,
    report: ValidationReport,
    sessions: Sequence[tuple[str, Session]] = (),
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS,
) -> str:
    """A self-contained pytest module: the spec, tools and every passing round-trip case embedded as data.

    It imports only ``workbench`` (and pytest): the spec travels inside the file, so it can be dropped into
    any repository that installs this package.  Only passing cases are embedded: a test file must be green
    on the day it is exported.
    """
    import pprint

    cases = [
        {
            "id": c.id,
            "output": c.output,
            "thinking_opened": c.thinking_opened,
            "compare_ids": c.compare_ids,
            "expected": c.expected,
        }
        for c in report.cases
        if c.status == PASS
    ]
    recorded = []
    for name, session in sessions:
        from workbench.session import parse_options_for

        opts = parse_options_for(session)
        recorded.append(
            {
                "id": name,
                "tokens": [session.fed_text(i) for i in range(len(session.steps))],
                "options": {
                    "enable_thinking": opts.enable_thinking,
                    "thinking_opened": opts.thinking_opened,
                    "parallel_tool_calls": opts.parallel_tool_calls,
                },
                "expected": session.parsed,
            }
        )
    spec_data = replace(spec, provenance=replace(spec.provenance, validation=None)).to_dict()

    def literal(name: str, value: Any) -> str:
        return f"{name} = {pprint.pformat(value, width=108, sort_dicts=False)}\n"

    name = report.template_name or spec.provenance.template_name
    data = (
        literal("SPEC_DATA", spec_data)
        + literal("TOOLS_DATA", [t.to_openai() for t in tools])
        + literal("CASES", cases)
        + literal("SESSIONS", recorded)
    )
    text = TESTS_TEMPLATE.read_text(encoding="utf-8")
    return text.replace("@NAME@", repr(name)).replace("@VERSION@", __version__).replace("# @DATA@\n", data)


# ============================================================================================ orchestration
@dataclass(frozen=True)
class ExportResult:
    """An export ready to be written: the text, the spec and report it came from, and the consumer's proof."""

    target: str
    text: str
    spec: FormatSpec
    report: ValidationReport
    proof: Proof | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "validated": self.report.validated,
            "validation": self.report.summary(),
            "proof": self.proof.to_dict() if self.proof is not None else None,
            "warnings": list(self.warnings),
        }


def resolve_inputs(
    template: TemplateSource | None, spec: FormatSpec | None, *, time_limit: float = 2.0
) -> tuple[FormatSpec, ValidationReport]:
    """The spec to export and its validation report, from a template, a spec, or both.

    * template only: analyse it, then validate the result against the template's renders;
    * template and spec: validate the given spec against the template's renders;
    * spec only: re-parse the round-trip outputs recorded in the spec's own report (nothing to render).
    """
    if template is not None:
        if spec is None:
            from workbench.analysis import analyze

            spec = analyze(template, time_limit=time_limit).spec
        return spec, validate(template, spec, time_limit=time_limit)
    if spec is None:
        raise ExportError("pass a template or --spec FILE")
    recorded = report_from_spec(spec)
    if recorded is None:
        note = "no template given and the spec carries no round-trip cases: nothing could be checked"
        return spec, ValidationReport(
            spec.provenance.template_name,
            spec.provenance.template_sha256,
            (),
            notes=(note,),
            source="recorded",
        )
    return spec, validate_recorded(spec, recorded)


def _validation_for_export(spec: FormatSpec, report: ValidationReport, from_template: bool) -> dict[str, Any]:
    """The report stored in the exported spec.  Re-exporting an exported spec keeps its original report when
    the recorded cases still give the same results, so export -> import -> export is byte-identical."""
    recorded = spec.provenance.validation
    if not from_template and recorded is not None:
        old = report_from_spec(spec)
        if old is not None and [(c.id, c.status, c.parsed) for c in old.cases] == [
            (c.id, c.status, c.parsed) for c in report.cases
        ]:
            return recorded
    return report.to_dict()


def export(
    target: str,
    *,
    template: TemplateSource | None = None,
    spec: FormatSpec | None = None,
    tools: Sequence[Tool] | None = None,
    sessions: Sequence[tuple[str, Session]] = (),
    force: bool = False,
    tokenizer: str | Path | None = None,
    time_limit: float = 2.0,
) -> ExportResult:
    """Build the export for ``target`` and prove it with its consumer; nothing is written here.

    Raises:
        ExportError: unknown target, a spec that is not validated (unless ``force``), a target that cannot
            express the spec, or a consumer that disagrees with our parser (unless ``force``).
    """
    if target not in TARGETS:
        raise ExportError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    spec, report = resolve_inputs(template, spec, time_limit=time_limit)
    warnings: list[str] = []
    if not report.validated:
        if not force:
            raise ExportError(f"{report.summary()}; run `workbench validate` for details, or pass --force")
        warnings.append(f"exported with --force: {report.summary()}")
    exported = spec_with_provenance(
        spec,
        None,
        template_sha256=template.sha256 if template else "",
        template_name=template.name if template else "",
    )
    exported = replace(
        exported,
        provenance=replace(
            exported.provenance, validation=_validation_for_export(spec, report, template is not None)
        ),
    )
    proof: Proof | None = None
    if target == "spec":
        text = render_spec_export(exported)
    elif target == "response-template":
        built = build_response_template(spec)
        proof = prove_response_template(built, spec, report)
        text = json.dumps(built, indent=2, ensure_ascii=False) + "\n"
    elif target == "structural-tag":
        if not tools:
            raise ExportError("the structural-tag target needs the tool list: pass --tools TOOLS.json")
        built = build_structural_tag(spec, tools)
        tok = load_grammar_tokenizer(tokenizer)
        _compile_or_fail(built, tok)
        proof = prove_structural_tag(spec, report, tok)
        text = json.dumps(built, indent=2, ensure_ascii=False) + "\n"
    else:
        for name, session in sessions:
            mismatch = _session_mismatch(spec, session)
            if mismatch and not force:
                raise ExportError(
                    f"session {name} does not replay with this spec: {mismatch}; or pass --force"
                )
            if mismatch:
                warnings.append(f"session {name} does not replay with this spec: {mismatch}")
        text = build_tests_file(exported, report, sessions)
    if proof is not None and not proof.passed:
        failing = next((c for c in proof.cases if c.status == FAIL), None)
        detail = f" (first: {failing.id}: {failing.detail})" if failing else ""
        if not force:
            raise ExportError(f"{proof.summary()}{detail}; pass --force to export anyway")
        warnings.append(f"exported with --force: {proof.summary()}{detail}")
    return ExportResult(target, text, exported, report, proof, tuple(warnings))


def _compile_or_fail(tag: dict[str, Any], tok: GrammarTokenizer) -> None:
    try:
        tok.compiler.compile_structural_tag(json.dumps(tag, ensure_ascii=False))
    except Exception as exc:
        raise ExportError(f"xgrammar cannot compile the structural tag: {_first(exc)}") from None


def _session_mismatch(spec: FormatSpec, session: Session) -> str:
    from workbench.session import replay_session

    result = replay_session(replace(session, spec=spec))
    return result.mismatches[0] if result.mismatches else ""


def write_export(result: ExportResult, path: str | Path) -> Path:
    """Write an export atomically; ``-`` writes to stdout."""
    if str(path) == "-":
        import sys

        sys.stdout.write(result.text)
        return Path("-")
    target = Path(path)
    write_atomic(target, result.text)
    return target
