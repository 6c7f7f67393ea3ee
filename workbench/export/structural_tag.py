"""The ``structural-tag`` target: an xgrammar StructuralTag for a given tool list.

It is proven by compiling it and feeding every round-trip tool-call output to a ``GrammarMatcher`` token by
token, with a real tokenizer (or a small byte-level BPE built here when none is at hand).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.chat import Tool
from workbench.export.common import CaseProof, ExportError, Proof, Unsupported, first_line
from workbench.spec import FormatSpec
from workbench.validate import FAIL, PASS, ROUND_TRIP_TOOLS, UNSUPPORTED, ValidationReport

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
        if t.arg_value_prefix.strip():
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

    shared = Path(os.environ.get("WORKBENCH_SHARED", Path(__file__).resolve().parents[3] / "shared"))
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
    compiled = compile_or_fail(build_structural_tag(spec, tools), tok)
    ends = [m for m in spec.end_markers if m]
    out: list[CaseProof] = []
    for case in report.cases:
        if case.status == UNSUPPORTED:
            out.append(CaseProof(case.id, UNSUPPORTED, case.reason))
            continue
        why = check_accepted(compiled, tok, case.output, ends)
        out.append(CaseProof(case.id, FAIL if why else PASS, why))
    return Proof("structural-tag", tuple(out), notes=(f"tokenizer: {tok.name}",))


def compile_or_fail(tag: dict[str, Any], tok: GrammarTokenizer) -> Any:
    """The compiled grammar of ``tag``; an :class:`ExportError` naming xgrammar's complaint when it cannot
    compile (xgrammar raises its own types, and their messages run to many lines)."""
    try:
        return tok.compiler.compile_structural_tag(json.dumps(tag, ensure_ascii=False))
    except Exception as exc:
        raise ExportError(f"xgrammar cannot compile the structural tag: {first_line(exc)}") from None
