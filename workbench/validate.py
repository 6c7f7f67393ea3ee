"""Round-trip validation: render known assistant messages through the template, parse them back, compare.

A spec is only as good as its agreement with the template it came from.  For each synthesized case (content
only, reasoning + content, one call, two parallel calls, awkward argument strings, scalars, nested values,
call ids, ...) validation

1. renders ``[user, assistant]`` through the template, and ``[user]`` with the generation prompt;
2. cuts the assistant output out by diffing the two renders (what the model would have written after the
   prompt), and drops the end-of-turn marker the model stops on;
3. parses that output with the spec's parser, one-shot and at several random chunkings;
4. compares the parsed message with the input message.

A feature the template cannot express is *unsupported*, not failed, and that is decided from the render
alone: if the reasoning text, a call's name or a call id leaves no trace in the rendered output, or the
template refuses to render the message, the case is unsupported and the reason is recorded.  No per-template
list exists anywhere.  A spec is *validated* only when every case its template supports passes.

The report (:class:`ValidationReport`) keeps, per case, the exact output text, the expected message and the
parse options.  It travels inside exported specs (``provenance.validation``), so a spec can be re-checked
later without its template (:func:`validate_recorded`), and the export targets re-use the very same cases.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.analysis.diff import common_prefix_len, diff_split
from workbench.chat import Tool
from workbench.spec import FormatSpec
from workbench.template.render import TemplateError, render
from workbench.template.source import TemplateSource

# ------------------------------------------------------------------------------------------------ the cases
FEATURES: dict[str, str] = {
    "content": "a plain answer",
    "reasoning": "reasoning before the answer",
    "tool_call": "one tool call",
    "content_with_call": "answer text before a tool call",
    "reasoning_with_call": "reasoning before a tool call",
    "parallel_calls": "two calls in one message",
    "string_escapes": "argument strings with newlines, quotes, backslashes, tabs and unicode",
    "marker_text": "argument strings that look like markup or like the format's own markers",
    "scalars": "integer, negative and fractional numbers, booleans and null as arguments",
    "nested": "nested objects and arrays as arguments",
    "call_ids": "call ids, where the format carries them",
}


def _tool(name: str, description: str, properties: dict[str, Any]) -> Tool:
    """A tool whose parameters all carry a description (some templates print it unconditionally)."""
    props = {
        key: {**schema, "description": f"The {key.replace('_', ' ')}."} for key, schema in properties.items()
    }
    return Tool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": props, "required": list(props)},
    )


ROUND_TRIP_TOOLS: tuple[Tool, ...] = (
    _tool(
        "get_weather",
        "Current weather for a city.",
        {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    ),
    _tool("get_time", "Current time in a time zone.", {"timezone": {"type": "string"}}),
    _tool(
        "save_note",
        "Save a note.",
        {"title": {"type": "string"}, "body": {"type": "string"}, "lang": {"type": "string"}},
    ),
    _tool(
        "set_values",
        "Set typed values.",
        {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "zero": {"type": "integer"},
            "enabled": {"type": "boolean"},
            "disabled": {"type": "boolean"},
            # `anyOf`, not `"type": "null"`: a template macro that walks `type` as a list of types recurses
            # forever on the string "null" (Hermes 2 Pro).
            "nothing": {"anyOf": [{"type": "null"}]},
        },
    ),
    _tool(
        "configure",
        "Apply a nested configuration.",
        # Explicit `additionalProperties`/`items`: Command R+'s template reads them unconditionally.
        {"options": {"type": "object", "additionalProperties": {}}, "items": {"type": "array", "items": {}}},
    ),
)

USER_TURN: dict[str, Any] = {"role": "user", "content": "Please help me with this task."}

# Call ids: nine alphanumerics, the strictest shape a shared template demands (Mistral's).
_IDS = ("Ab3dE5gH7", "Zy9xW8vU7")


@dataclass(frozen=True)
class CallInput:
    """A tool call as the case writes it into the conversation (arguments as a JSON object)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""

    def to_contract(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class Case:
    """One synthesized assistant message and the features it exercises."""

    id: str
    features: tuple[str, ...]
    description: str
    content: str | None = None
    reasoning: str | None = None
    calls: tuple[CallInput, ...] = ()

    def message(self, *, string_arguments: bool, empty_content: bool = False) -> dict[str, Any]:
        """The OpenAI-shaped assistant message; arguments as a mapping (what most templates iterate) or as
        JSON text (what templates that concatenate strings need); missing content as null (the API form)
        or as ``""`` (for templates that apply string operations to it)."""
        content = "" if self.content is None and empty_content else self.content
        out: dict[str, Any] = {"role": "assistant", "content": content}
        if self.reasoning is not None:
            out["reasoning_content"] = self.reasoning
        if self.calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": json.dumps(c.arguments, ensure_ascii=False)
                        if string_arguments
                        else json.loads(json.dumps(c.arguments)),
                    },
                }
                for c in self.calls
            ]
        return out

    def expected(self) -> dict[str, Any]:
        """The parse contract the parser must give back."""
        return {
            "content": self.content or "",
            "reasoning_content": self.reasoning or "",
            "tool_calls": [c.to_contract() for c in self.calls],
        }


def _own_marker_text(spec: FormatSpec) -> str:
    """A string made of the spec's own multi-character markers: a parser that scans for markers without
    knowing it is inside a JSON string (or a value) gets this wrong."""
    # Markers holding an end-of-turn marker are left out: a model emitting one stops, so no argument can
    # hold it.
    stops = {m.strip() for m in (*spec.end_markers, spec.eos_token, spec.bos_token) if m}
    markers = [
        m
        for m in spec.all_markers()
        if len(m.strip()) >= 3 and not m.strip().isalnum() and not any(stop in m for stop in stops)
    ]
    return (
        "keep " + " | ".join(sorted({m.strip() for m in markers})[:8]) if markers else "keep </end> <start>"
    )


def build_cases(spec: FormatSpec) -> tuple[Case, ...]:
    """The round-trip cases for ``spec`` (the marker case quotes the spec's own markers)."""
    weather = CallInput("get_weather", {"city": "Paris", "unit": "celsius"}, _IDS[0])
    return (
        Case("content_only", ("content",), "a plain answer", content="The capital of France is Paris."),
        Case(
            "reasoning_content",
            ("reasoning",),
            "reasoning, then the answer",
            content="It is 42.",
            reasoning="The user asks a question.\nI should answer with the number.",
        ),
        Case("one_call", ("tool_call",), "a single call, no text", calls=(weather,)),
        Case(
            "content_and_call",
            ("content_with_call",),
            "text, then a call",
            content="Let me check the weather.",
            calls=(weather,),
        ),
        Case(
            "reasoning_and_call",
            ("reasoning_with_call",),
            "reasoning, then a call",
            reasoning="The user wants the weather, so I call the tool.",
            calls=(weather,),
        ),
        Case(
            "parallel_calls",
            ("parallel_calls",),
            "two different calls in one message",
            calls=(weather, CallInput("get_time", {"timezone": "Europe/Paris"}, _IDS[1])),
        ),
        Case(
            "string_arguments",
            ("string_escapes",),
            "strings with newlines, quotes, backslashes, tabs and unicode",
            calls=(
                CallInput(
                    "save_note",
                    {
                        "title": "Line one\nLine two\n\nLine four",
                        "body": "He said \"hi\" \\ then left\ttab 'single'",
                        "lang": "日本語 — ünïcödé 🙂 ∑",
                    },
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "markup_arguments",
            ("marker_text",),
            "strings that look like markup and markers",
            calls=(
                CallInput(
                    "save_note",
                    {
                        "title": '<b>bold</b> [x] {"k": 1} <|fake|> </tag>',
                        "body": "a > b < c & d",
                        "lang": "[/INST]",
                    },
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "own_marker_arguments",
            ("marker_text",),
            "a string holding the format's own markers",
            calls=(
                CallInput("save_note", {"title": "t", "body": _own_marker_text(spec), "lang": "en"}, _IDS[0]),
            ),
        ),
        Case(
            "scalar_arguments",
            ("scalars",),
            "numbers, booleans and null",
            calls=(
                CallInput(
                    "set_values",
                    {
                        "count": 42,
                        "ratio": -3.25,
                        "zero": 0,
                        "enabled": True,
                        "disabled": False,
                        "nothing": None,
                    },
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "nested_arguments",
            ("nested",),
            "nested objects and arrays",
            calls=(
                CallInput(
                    "configure",
                    {
                        "options": {
                            "depth": 2,
                            "flags": [True, None],
                            "inner": {"name": "x", "list": [1, 2.5, "s"]},
                        },
                        "items": [{"a": 1}, [], {}, "text"],
                    },
                    _IDS[0],
                ),
            ),
        ),
        Case(
            "call_ids",
            ("call_ids",),
            "a call whose id must come back",
            calls=(CallInput("get_time", {"timezone": "UTC"}, _IDS[1]),),
        ),
    )


# ------------------------------------------------------------------------------------------------ results
PASS, FAIL, UNSUPPORTED, ERROR = "pass", "fail", "unsupported", "error"


@dataclass(frozen=True)
class RenderedCase:
    """A case rendered through a template and cut down to what the model would have generated.

    ``generation_prefix`` is the text between the end of the user turn and the start of ``output`` (the
    generation prompt, e.g. ``<|im_start|>assistant\\n``): enough context for parsers that need the prompt
    (transformers' ``parse_response``) without storing the whole prompt.  ``thinking_opened`` says whether
    the output starts inside an open reasoning block.
    """

    output: str
    generation_prefix: str
    thinking_opened: bool
    compare_ids: bool
    prompt: str = ""
    unsupported: str = ""
    note: str = ""


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case.  ``status`` is pass, fail, unsupported (with the reason) or error."""

    id: str
    features: tuple[str, ...]
    description: str
    status: str
    reason: str = ""
    output: str = ""
    generation_prefix: str = ""
    thinking_opened: bool = False
    compare_ids: bool = False
    expected: dict[str, Any] = field(default_factory=dict)
    parsed: dict[str, Any] | None = None
    mismatches: tuple[str, ...] = ()
    prompt: str = ""  # the full prompt; kept in memory for exporters, not written to reports

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "features": list(self.features),
            "description": self.description,
            "status": self.status,
            "reason": self.reason,
            "output": self.output,
            "generation_prefix": self.generation_prefix,
            "thinking_opened": self.thinking_opened,
            "compare_ids": self.compare_ids,
            "expected": self.expected,
            "parsed": self.parsed,
            "mismatches": list(self.mismatches),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        return cls(
            id=str(data["id"]),
            features=tuple(data.get("features", ())),
            description=str(data.get("description", "")),
            status=str(data["status"]),
            reason=str(data.get("reason", "")),
            output=str(data.get("output", "")),
            generation_prefix=str(data.get("generation_prefix", "")),
            thinking_opened=bool(data.get("thinking_opened", False)),
            compare_ids=bool(data.get("compare_ids", False)),
            expected=dict(data.get("expected") or {}),
            parsed=data.get("parsed"),
            mismatches=tuple(data.get("mismatches", ())),
        )


@dataclass(frozen=True)
class ValidationReport:
    """Per-case and per-feature results.  ``validated`` is True only when every supported case passes."""

    template_name: str
    template_sha256: str
    cases: tuple[CaseResult, ...]
    notes: tuple[str, ...] = ()
    source: str = "template"  # "template" (rendered now) or "recorded" (cases re-run from a report)

    @property
    def applicable(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if c.status != UNSUPPORTED)

    @property
    def validated(self) -> bool:
        applicable = self.applicable
        return bool(applicable) and all(c.status == PASS for c in applicable)

    def features(self) -> dict[str, dict[str, Any]]:
        """Each feature's status: pass, fail (any case failed) or unsupported (no case applied), with why."""
        out: dict[str, dict[str, Any]] = {}
        for name in FEATURES:
            cases = [c for c in self.cases if name in c.features]
            if not cases:
                continue
            failed = [c for c in cases if c.status in (FAIL, ERROR)]
            applicable = [c for c in cases if c.status != UNSUPPORTED]
            if failed:
                status, reason = FAIL, "; ".join(f"{c.id}: {c.reason}" for c in failed)
            elif not applicable:
                status, reason = UNSUPPORTED, "; ".join(dict.fromkeys(c.reason for c in cases))
            else:
                status, reason = PASS, ""
            out[name] = {"status": status, "reason": reason, "cases": [c.id for c in cases]}
        return out

    def summary(self) -> str:
        applicable = self.applicable
        passed = sum(c.status == PASS for c in applicable)
        unsupported = [n for n, f in self.features().items() if f["status"] == UNSUPPORTED]
        text = f"{passed}/{len(applicable)} applicable cases pass"
        if unsupported:
            text += f"; unsupported by the template: {', '.join(unsupported)}"
        return ("validated: " if self.validated else "NOT validated: ") + text

    def to_dict(self) -> dict[str, Any]:
        """Deterministic JSON form (no timings, no prompts), as stored in ``provenance.validation``."""
        return {
            "validated": self.validated,
            "summary": self.summary(),
            "source": self.source,
            "template_name": self.template_name,
            "template_sha256": self.template_sha256,
            "notes": list(self.notes),
            "features": self.features(),
            "cases": [c.to_dict() for c in self.cases],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ValidationReport:
        return cls(
            template_name=str(data.get("template_name", "")),
            template_sha256=str(data.get("template_sha256", "")),
            cases=tuple(CaseResult.from_dict(c) for c in data.get("cases", ())),
            notes=tuple(data.get("notes", ())),
            source=str(data.get("source", "template")),
        )


# ------------------------------------------------------------------------------------------------ rendering
_UNDEFINED_NAME = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)' is undefined")


@dataclass
class CaseRenderer:
    """Renders conversations through one template with the analyzer's documented fallbacks.

    Some templates read variables only one serving stack passes (``functions``, ``datetime``) or use
    constructs the immutable sandbox refuses (``list.append``); the analyzer renders those with named
    fallbacks (``workbench.analysis.workarounds``), and validation must render the same text the spec was
    read from.  Every fallback taken is noted in the report.
    """

    source: TemplateSource
    time_limit: float = 2.0
    extra_kwargs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _texts: dict[bool, str] = field(default_factory=dict)

    def render(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, generation: bool
    ) -> str:
        with_tools = tools is not None
        if with_tools not in self._texts:
            self._texts[with_tools] = self.source.for_tools(with_tools).text
        kwargs = {**self.source.render_kwargs(), "enable_thinking": True, **self.extra_kwargs}
        for _ in range(6):
            try:
                return render(
                    self._texts[with_tools],
                    messages,
                    tools=tools,
                    add_generation_prompt=generation,
                    time_limit=self.time_limit,
                    **kwargs,
                )
            except TemplateError as exc:
                if not self._adjust(exc, with_tools):
                    raise
                kwargs = {**self.source.render_kwargs(), "enable_thinking": True, **self.extra_kwargs}
        return render(
            self._texts[with_tools], messages, tools=tools, add_generation_prompt=generation, **kwargs
        )

    def _adjust(self, exc: TemplateError, with_tools: bool) -> bool:
        """Apply one fallback for ``exc``; True when something changed and the render is worth retrying."""
        text = self._texts[with_tools]
        m = _UNDEFINED_NAME.search(exc.detail)
        if (
            exc.kind == "undefined"
            and m
            and m.group(1) not in self.extra_kwargs
            and m.group(1) in _undeclared(text)
        ):
            self.extra_kwargs[m.group(1)] = ""
            self.notes.append(
                f"render fallback: the template reads {m.group(1)!r}, which callers must pass; used ''"
            )
            return True
        try:
            from workbench.analysis.workarounds import RENDER_PATCHES
        except ImportError:  # pragma: no cover - the analysis package is part of this project
            return False
        for patch in RENDER_PATCHES:
            if patch.matches(exc, text):
                self._texts = {k: patch.apply(v) for k, v in self._texts.items()}
                self.notes.append(f"render fallback {patch.name!r}: {patch.summary}")
                return True
        return False


def _undeclared(text: str) -> frozenset[str]:
    import jinja2.meta

    from workbench.template.render import compile_template

    try:
        compiled = compile_template(text)
        return frozenset(jinja2.meta.find_undeclared_variables(compiled.env.parse(text)))
    except Exception:
        return frozenset()


def render_case(
    source: TemplateSource | CaseRenderer,
    spec: FormatSpec,
    case: Case,
    *,
    time_limit: float = 2.0,
    turn_end: str = "",
) -> RenderedCase:
    """Render ``case`` after a user turn and cut out what the model would have generated.

    Arguments are passed as a mapping first (what most templates iterate); when the template fails on that,
    or prints the mapping's Python repr, they are passed as JSON text instead.  Cases without calls are
    rendered without tools unless the template needs them.  ``turn_end`` is an extra end-of-turn text (read
    off a render by :func:`find_turn_end` when the spec names none).  Returns a :class:`RenderedCase` whose
    ``unsupported`` is set when the case cannot be expressed by this template.
    """
    renderer = source if isinstance(source, CaseRenderer) else CaseRenderer(source, time_limit)
    src = renderer.source
    tool_choices = [True] if case.calls else [False, True]
    prompt = base = ""
    tools: list[dict[str, Any]] | None = None
    error = ""
    for with_tools in tool_choices:
        tools = [t.to_openai() for t in ROUND_TRIP_TOOLS] if with_tools else None
        try:
            prompt = renderer.render([USER_TURN], tools, True)
            base = renderer.render([USER_TURN], tools, False)
            error = ""
            break
        except TemplateError as exc:
            error = str(exc)
    if error:
        return RenderedCase(
            "", "", False, False, unsupported=f"the template cannot render the prompt: {error}"
        )

    full, variant = None, (False, False)
    variants = [(as_string, empty) for empty in (False, True) for as_string in (False, True)]
    for as_string, empty in variants:
        if (as_string and not case.calls) or (empty and case.content is not None):
            continue
        try:
            message = case.message(string_arguments=as_string, empty_content=empty)
            candidate = renderer.render([USER_TURN, message], tools, False)
        except TemplateError as exc:
            error = str(exc)
            continue
        if full is None or not _prints_python_repr(candidate, case):
            full, variant = candidate, (as_string, empty)
        if not _prints_python_repr(candidate, case):
            break
    if full is None:
        return RenderedCase("", "", False, False, unsupported=f"the template refuses this message: {error}")
    indistinct = _renders_like_its_twin(
        case, full, variant, lambda m: renderer.render([USER_TURN, m], tools, False)
    )

    cut = len(diff_split(prompt, full).prefix)
    whole = full[cut:]
    note = ""
    if prompt[cut:]:
        note = (
            f"the generation prompt adds {prompt[cut:]!r}, which the history render does not contain; "
            "the output is cut at the common prefix"
        )
    history_header = full[len(base) : cut] if full.startswith(base) and len(base) <= cut else ""
    # What the generation prompt adds to the conversation (the templates that end a user turn differently
    # when a generation prompt follows are why this is a diff, not a slice).
    generation_prompt = prompt[common_prefix_len(base, prompt) :]
    output = cut_at_turn_end(
        whole,
        turn_ends(spec, src.eos_token, turn_end),
        _inner_markers(spec),
        next_turn_marker(history_header or generation_prompt),
    )
    if note:
        thinking_opened = _opened_by_output(spec, output)
    else:
        thinking_opened = _prompt_opens_reasoning(spec, generation_prompt)
    # Context for parsers that read the prompt: the real generation prompt when the output continues it,
    # else the history's own text in front of the output.
    if thinking_opened and note:
        generation_prefix = history_header + prompt[cut:]
    elif thinking_opened:
        generation_prefix = generation_prompt
    else:
        generation_prefix = history_header
    unsupported = (
        _missing_trace(case, output, whole)
        or indistinct
        or _answer_left_inside_reasoning(spec, case, output, thinking_opened)
    )
    compare_ids = bool(case.calls) and all(c.id in output for c in case.calls)
    return RenderedCase(
        output=output,
        generation_prefix=generation_prefix,
        thinking_opened=thinking_opened,
        compare_ids=compare_ids,
        prompt=full[:cut],
        unsupported=unsupported,
        note=note,
    )


def find_turn_end(source: TemplateSource | CaseRenderer, spec: FormatSpec, *, time_limit: float = 2.0) -> str:
    """The text a template writes after an assistant answer, when the spec names no end marker.

    Serving stacks stop on the end-of-turn token and never pass it to the parser, so validation must cut it
    off too; a spec that forgot it (e.g. MiniMax's ``[e~[``) would otherwise fail on text no parser sees.
    Read off the content-only render: what follows the answer text, stripped.
    """
    if spec.end_markers:
        return ""
    case = build_cases(spec)[0]
    rendered = render_case(source, spec, case, time_limit=time_limit)
    if rendered.unsupported or not case.content:
        return ""
    at = rendered.output.rfind(case.content)
    tail = rendered.output[at + len(case.content) :].strip() if at >= 0 else ""
    return tail if 0 < len(tail) <= 40 else ""


def _renders_like_its_twin(
    case: Case, full: str, variant: tuple[bool, bool], render_one: Callable[[dict[str, Any]], str]
) -> str:
    """A message with only content (or only reasoning) must render differently from its twin with the same
    text moved to the other field; when both render identically the template cannot tell them apart
    (gpt-oss writes the text of a message with tool calls to its analysis channel), so neither can a parser.
    """
    if (case.content is None) == (case.reasoning is None):
        return ""
    twin = replace(case, content=case.reasoning, reasoning=case.content)
    try:
        twin_render = render_one(twin.message(string_arguments=variant[0], empty_content=variant[1]))
    except TemplateError:
        return ""
    if twin_render != full:
        return ""
    if case.content is not None:
        return "the template writes this message's content exactly as it writes reasoning"
    return "the template writes reasoning exactly as it writes content"


def _answer_left_inside_reasoning(spec: FormatSpec, case: Case, output: str, thinking_opened: bool) -> str:
    """The history render leaves the answer inside a reasoning block it never closes (Nemotron writes
    ``<think>\n`` and then the answer): no model output looks like that, so the case cannot be checked."""
    end = spec.reasoning.end.strip()
    if thinking_opened and case.content and not case.reasoning and end and end not in output:
        return "the template writes the answer inside a reasoning block it never closes"
    return ""


def _prints_python_repr(rendered: str, case: Case) -> bool:
    """True when the template printed an arguments mapping with Python's repr (``{'city': 'Paris'}``)."""
    return any(c.arguments and repr(c.arguments) in rendered for c in case.calls)


def turn_ends(spec: FormatSpec, eos_token: str = "", turn_end: str = "") -> list[str]:
    """The texts a model stops on: the spec's end markers, the eos token and a render-derived turn end."""
    ends = [m.strip() for m in (*spec.end_markers, eos_token, turn_end) if m.strip()]
    return list(dict.fromkeys(ends))


def _inner_markers(spec: FormatSpec) -> set[str]:
    """Markers that are followed by more of the same message: the end of reasoning (Harmony closes its
    analysis channel with ``<|end|>`` and carries on) and every tool-call marker (GigaChat opens a call
    with ``<|message_sep|>...function call``).  The end of content is not one: the message ends there."""
    out = {spec.reasoning.start.strip(), spec.reasoning.end.strip(), spec.content.start.strip()}
    for name in spec.tools.__dataclass_fields__:
        value = getattr(spec.tools, name)
        if isinstance(value, str) and name not in _NON_MARKER_TOOL_FIELDS:
            out.add(value.strip())
    out.discard("")
    return out


_NON_MARKER_TOOL_FIELDS = frozenset(
    {
        "format",
        "id_position",
        "name_field",
        "args_field",
        "id_field",
        "gen_id_field",
        "function_field",
        "code_block_language",
        "function_namespace",
    }
)


def next_turn_marker(generation_prefix: str) -> tuple[str, str]:
    """The marker every turn starts with, read off the generation prompt (``<|START_OF_TURN_TOKEN|>`` of
    ``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>``), with the assistant header itself.  A template that
    writes no end-of-turn marker after a message (Command R+ after tool calls) still starts the next turn
    with it; a model never writes another role's header, so the output ends there."""
    from workbench.analysis.diff import segmentize

    header = generation_prefix.strip()
    segments = segmentize(header)
    if not segments or not segments[0].is_marker:
        return "", ""
    return segments[0].text, header


def cut_at_turn_end(
    whole: str,
    ends: Sequence[str],
    inner: set[str] | frozenset[str] = frozenset(),
    next_turn: tuple[str, str] = ("", ""),
) -> str:
    """Cut the history render where the model stops: at the first end-of-turn marker that does not start
    one of the format's in-message markers (``inner``), or at the start of another role's turn.  Serving
    stacks do not pass the stop token to the parser, and whatever the template writes after it (the next
    turn, or a part of the message it moved behind the end of turn) is not something one generation
    produces."""
    best = len(whole)
    found = False
    for marker in ends:
        at = whole.find(marker)
        while 0 <= at < best:
            rest = whole[at:]
            if not any(m != marker and rest.startswith(m) for m in inner) and marker not in inner:
                best, found = at, True
                break
            at = whole.find(marker, at + 1)
    turn, header = next_turn
    if turn and turn not in inner:
        at = whole.find(turn)
        while 0 <= at < best:
            if not whole.startswith(header, at):
                best, found = at, True
                break
            at = whole.find(turn, at + 1)
    return whole[:best] if found else whole.rstrip()


def _prompt_opens_reasoning(spec: FormatSpec, generation_prompt: str) -> bool:
    """Whether the generation prompt leaves the model inside an open reasoning block (``...<think>\n``).

    Read off the prompt with the spec's markers; a format whose reasoning has no start marker (a delimiter
    format) gives nothing to read, so the spec's own prompt fact decides.
    """
    start, end = spec.reasoning.start, spec.reasoning.end
    if not start:
        return spec.prompt.thinking_opened and spec.reasoning.mode != "none"
    at = generation_prompt.rfind(start)
    return at >= 0 and not (end and end in generation_prompt[at + len(start) :])


def _opened_by_output(spec: FormatSpec, output: str) -> bool:
    """When the prompt is not a prefix of the history render, the output starts at the common prefix; it is
    inside reasoning only if it closes a block it never opened (``reasoning</think>answer``)."""
    start, end = spec.reasoning.start, spec.reasoning.end
    if not end or end not in output:
        return False
    head = output[: output.find(end)]
    trigger = spec.tools.trigger.strip()
    if trigger and trigger in head:
        return False  # the end marker sits after a tool call began (inside its arguments)
    return not (start and start in head)


def _missing_trace(case: Case, output: str, whole: str) -> str:
    """Why the case is unsupported, judged from the render alone ("" when every part left a trace)."""

    def why(text: str, missing: str) -> str:
        return f"{missing} (it comes after the end-of-turn marker)" if text in whole else missing

    if case.content and case.content.strip() not in output:
        return why(case.content.strip(), "the template drops this message's content")
    if case.reasoning and _first_line(case.reasoning) not in output:
        return why(_first_line(case.reasoning), "the template drops reasoning from the assistant turn")
    names = [c.name for c in case.calls]
    if names and names[0] not in output:
        return why(names[0], "the template does not render tool calls")
    if len(names) > 1 and names[1] not in output:
        return why(names[1], "the template renders only one call per message")
    if "call_ids" in case.features and not all(c.id in output for c in case.calls):
        return "the template does not write call ids"
    return ""


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0]


# ------------------------------------------------------------------------------------------------ comparing
def compare_messages(expected: dict[str, Any], parsed: dict[str, Any], *, compare_ids: bool) -> list[str]:
    """Differences between an expected and a parsed message (parse-contract dicts), one line each.

    Text is compared without leading/trailing whitespace (templates trim and pad content); arguments are
    compared as JSON values where ``true`` is not ``1``; ids only when the format carries them.
    """
    out: list[str] = []
    for key in ("content", "reasoning_content"):
        want, got = (expected.get(key) or "").strip(), (parsed.get(key) or "").strip()
        if want != got:
            out.append(f"{key}: expected {want!r}, got {got!r}")
    want_calls, got_calls = expected.get("tool_calls") or [], parsed.get("tool_calls") or []
    if len(want_calls) != len(got_calls):
        out.append(f"tool_calls: expected {len(want_calls)}, got {len(got_calls)}")
    for i, (w, g) in enumerate(zip(want_calls, got_calls, strict=False)):
        if w.get("name") != g.get("name"):
            out.append(f"tool_calls[{i}].name: expected {w.get('name')!r}, got {g.get('name')!r}")
        if not json_equal(w.get("arguments"), g.get("arguments")):
            out.append(
                f"tool_calls[{i}].arguments: expected {_short(w.get('arguments'))}, "
                f"got {_short(g.get('arguments'))}"
            )
        if compare_ids and (w.get("id") or "") != (g.get("id") or ""):
            out.append(f"tool_calls[{i}].id: expected {w.get('id')!r}, got {g.get('id')!r}")
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


def parse_output(
    spec: FormatSpec, text: str, tools: Sequence[Tool], thinking_opened: bool, cuts: Sequence[int] | None
) -> dict[str, Any]:
    """Parse ``text`` with the spec's stream parser, fed in one piece (``cuts=None``) or cut at ``cuts``."""
    from workbench.parsing import ParseOptions, StreamParser

    parser = StreamParser(
        spec, list(tools), options=ParseOptions(enable_thinking=True, thinking_opened=thinking_opened)
    )
    last = 0
    for cut in [*(cuts or ()), len(text)]:
        parser.feed(text[last:cut])
        last = cut
    return parser.finish().message.to_contract()


def chunkings(text: str, seed: str, count: int = 3) -> list[list[int]]:
    """Deterministic random cut points (seeded by the case id), plus one cut between every character."""
    rng = random.Random(seed)
    out = [list(range(1, len(text)))]
    for _ in range(count):
        k = rng.randint(1, max(1, len(text) // 3))
        out.append(sorted(rng.sample(range(1, len(text)), min(k, max(0, len(text) - 1)))))
    return out


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
) -> tuple[str, str, dict[str, Any] | None, tuple[str, ...]]:
    """Parse ``output`` one-shot and at random chunkings; return (status, reason, parsed, mismatches)."""
    try:
        parsed = parse(spec, output, tools, thinking_opened, None)
    except Exception as exc:  # a parser crash is a finding, not a reason to stop validating
        return ERROR, f"the parser raised {type(exc).__name__}: {exc}", None, ()
    mismatches = compare_messages(expected, parsed, compare_ids=compare_ids)
    if mismatches:
        return FAIL, "one-shot parse differs from the input: " + mismatches[0], parsed, tuple(mismatches)
    for i, cuts in enumerate(chunkings(output, case_id)):
        label = "one character at a time" if i == 0 else f"random chunking #{i} ({len(cuts) + 1} chunks)"
        try:
            streamed = parse(spec, output, tools, thinking_opened, cuts)
        except Exception as exc:
            return ERROR, f"the parser raised {type(exc).__name__} when fed {label}: {exc}", parsed, ()
        diff = compare_messages(expected, streamed, compare_ids=compare_ids)
        if diff:
            return FAIL, f"streamed {label}, the parse differs: {diff[0]}", parsed, tuple(diff)
    return PASS, "", parsed, ()


# --------------------------------------------------------------------------------------------- entry points
def validate(
    source: TemplateSource,
    spec: FormatSpec | None = None,
    *,
    time_limit: float = 2.0,
    parse: ParseFn = parse_output,
) -> ValidationReport:
    """Validate ``spec`` (analysed from ``source`` when not given) against the template's own renders."""
    if spec is None:
        from workbench.analysis import analyze

        spec = analyze(source, time_limit=time_limit).spec
    results: list[CaseResult] = []
    notes: list[str] = []
    renderer = CaseRenderer(source, time_limit)
    turn_end = find_turn_end(renderer, spec)
    if turn_end:
        notes.append(
            f"the spec names no end marker; the template ends a turn with {turn_end!r}, cut like one"
        )
    for case in build_cases(spec):
        rendered = render_case(renderer, spec, case, turn_end=turn_end)
        base = CaseResult(
            id=case.id,
            features=case.features,
            description=case.description,
            status=UNSUPPORTED,
            reason=rendered.unsupported,
            output=rendered.output,
            generation_prefix=rendered.generation_prefix,
            thinking_opened=rendered.thinking_opened,
            compare_ids=rendered.compare_ids,
            expected=case.expected(),
            prompt=rendered.prompt,
        )
        if rendered.note and rendered.note not in notes:
            notes.append(rendered.note)
        if rendered.unsupported:
            results.append(base)
            continue
        ambiguity = _raw_marker_ambiguity(spec, case, rendered.output)
        if ambiguity:
            results.append(replace(base, reason=ambiguity))
            continue
        status, reason, parsed, mismatches = check_output(
            spec,
            case.id,
            rendered.output,
            base.expected,
            thinking_opened=rendered.thinking_opened,
            compare_ids=rendered.compare_ids,
            parse=parse,
        )
        results.append(replace(base, status=status, reason=reason, parsed=parsed, mismatches=mismatches))
    notes = [*renderer.notes, *notes]
    return ValidationReport(
        template_name=source.name, template_sha256=source.sha256, cases=tuple(results), notes=tuple(notes)
    )


def _raw_marker_ambiguity(spec: FormatSpec, case: Case, output: str) -> str:
    """A value holding the format's own marker is ambiguous when the template writes values raw (unescaped):
    the text alone cannot tell the value's marker from the real one.  Judged from the render: the value
    appears verbatim but not as a JSON string (quoted), and contains a marker of the spec."""
    if "marker_text" not in case.features:
        return ""
    framing = {m.strip() for m in spec.all_markers() if len(m.strip()) >= 2}
    for call in case.calls:
        for value in call.arguments.values():
            if not isinstance(value, str) or value not in output:
                continue
            quoted = json.dumps(value, ensure_ascii=False) in output or json.dumps(value) in output
            if not quoted and any(m in value for m in framing):
                return (
                    "the template writes argument values raw, so a value holding the format's own markers "
                    "cannot be told apart from them"
                )
    return ""


def validate_recorded(
    spec: FormatSpec, report: ValidationReport, *, parse: ParseFn = parse_output
) -> ValidationReport:
    """Re-run the cases recorded in ``report`` (e.g. from an exported spec's provenance) without a template.

    The outputs were cut from the template's renders when the report was made; only the parsing side is
    checked again, so an edited spec or a changed parser is caught even where the template is not at hand.
    """
    results: list[CaseResult] = []
    for case in report.cases:
        if case.status == UNSUPPORTED:
            results.append(case)
            continue
        status, reason, parsed, mismatches = check_output(
            spec,
            case.id,
            case.output,
            case.expected,
            thinking_opened=case.thinking_opened,
            compare_ids=case.compare_ids,
            parse=parse,
        )
        results.append(replace(case, status=status, reason=reason, parsed=parsed, mismatches=mismatches))
    notes = (
        *report.notes,
        "no template given: the recorded round-trip outputs were parsed again; nothing was re-rendered",
    )
    return ValidationReport(
        template_name=report.template_name,
        template_sha256=report.template_sha256,
        cases=tuple(results),
        notes=tuple(dict.fromkeys(notes)),
        source="recorded",
    )


def report_from_spec(spec: FormatSpec) -> ValidationReport | None:
    """The validation report an exported spec carries, if any."""
    data = spec.provenance.validation
    if not data or not isinstance(data.get("cases"), list):
        return None
    return ValidationReport.from_dict(data)
