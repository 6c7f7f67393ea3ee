"""Render parity: ``workbench.template.render.render`` equals transformers' ``apply_chat_template(...,
tokenize=False)`` byte for byte, for every template (../shared and templates/) and a matrix of conversations.

The tokenizer is built locally (a one-token WordLevel model wrapped in ``PreTrainedTokenizerFast`` with the
template and the family's bos/eos), so nothing is downloaded.  The clock is frozen in both renderers
(templates that call ``strftime_now`` then compare exactly).  A pair that transformers itself refuses must be
listed in ``REFUSALS`` with its cause (mirrored in docs/render-parity.md); for those, both renderers must
raise with the same message.  Every other pair must render identically.
"""

from __future__ import annotations

import copy
import datetime as _dt
import fnmatch
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT_TEMPLATES, shared_templates

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

import transformers.utils.chat_template_utils as hf_chat  # noqa: E402

import workbench.template.render as wb_render  # noqa: E402
from workbench.template.render import TemplateError, render  # noqa: E402

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. Paris"},
                    "unit": {
                        "type": "string",
                        "description": "Temperature unit",
                        "enum": ["celsius", "fahrenheit"],
                        "default": "celsius",
                    },
                    "days": {"type": "integer", "description": "Forecast length"},
                    "tags": {"type": "array", "description": "Extra details", "items": {"type": "string"}},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Current time (UTC).",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]

_CALL_1 = {
    "id": "call00001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
}
_CALL_2 = {"id": "call00002", "type": "function", "function": {"name": "get_time", "arguments": {}}}
_CALL_1_WIRE = {  # the OpenAI wire form: arguments as a JSON string
    "id": "call00001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris", "days": 2}'},
}
_CALL_2_WIRE = {"id": "call00002", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
_USER = {"role": "user", "content": "What is the weather in Paris?"}
_SYSTEM = {"role": "system", "content": "You are a terse assistant."}

CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "plain": [_USER],
    "system": [_SYSTEM, _USER],
    "multi_turn": [
        _SYSTEM,
        _USER,
        {"role": "assistant", "content": "Sunny, 21 C."},
        {"role": "user", "content": "And tomorrow?"},
    ],
    "reasoning": [
        _USER,
        {"role": "assistant", "reasoning_content": "The user wants weather.", "content": "Sunny."},
    ],
    "reasoning_history": [
        _USER,
        {"role": "assistant", "reasoning_content": "The user wants weather.", "content": "Sunny."},
        {"role": "user", "content": "Thanks!"},
    ],
    "one_call": [_USER, {"role": "assistant", "content": "", "tool_calls": [_CALL_1]}],
    "one_call_null_content": [_USER, {"role": "assistant", "content": None, "tool_calls": [_CALL_1]}],
    "one_call_wire_args": [_USER, {"role": "assistant", "content": "", "tool_calls": [_CALL_1_WIRE]}],
    "two_calls": [
        _USER,
        {"role": "assistant", "content": "Checking both.", "tool_calls": [_CALL_1, _CALL_2]},
    ],
    "tool_results": [
        _SYSTEM,
        _USER,
        {"role": "assistant", "content": "", "tool_calls": [_CALL_1, _CALL_2]},
        {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": '{"temp": 21}'},
        {"role": "tool", "tool_call_id": "call00002", "name": "get_time", "content": "12:00"},
        {"role": "assistant", "content": "21 C at noon."},
    ],
    "tool_results_wire_args": [
        _USER,
        {"role": "assistant", "content": "", "tool_calls": [_CALL_1_WIRE, _CALL_2_WIRE]},
        {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": '{"temp": 21}'},
        {"role": "tool", "tool_call_id": "call00002", "name": "get_time", "content": "12:00"},
        {"role": "assistant", "content": "21 C at noon."},
    ],
    "content_parts": [
        {"role": "user", "content": [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]}
    ],
}

KWARG_VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "thinking_on": {"enable_thinking": True},
    "thinking_off": {"enable_thinking": False},
    "effort_high": {"reasoning_effort": "high"},
}

# bos/eos as the family's tokenizer sets them (None: the tokenizer has none, so templates do not see it).
_LLAMA = ("<|begin_of_text|>", "<|eot_id|>")
_DEEPSEEK = ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")
_CHATML = (None, "<|im_end|>")
SPECIAL_TOKENS: dict[str, tuple[str | None, str]] = {
    "meta-llama-*": _LLAMA,
    "fireworks-*": _LLAMA,
    "NousResearch-*": _LLAMA,
    "llama3-json": _LLAMA,
    "deepseek-*": _DEEPSEEK,
    "llama-cpp-deepseek-r1": _DEEPSEEK,
    "Qwen*": _CHATML,
    "chatml-think-tools": _CHATML,
    "xml-tagged-args": _CHATML,
    "google-gemma-*": ("<bos>", "<eos>"),
    "openai-gpt-oss-*": ("<|startoftext|>", "<|return|>"),
    "harmony-channels": ("<|startoftext|>", "<|return|>"),
    "pythonic-calls": ("<|startoftext|>", "<|im_end|>"),
    "LFM2-*": ("<|startoftext|>", "<|im_end|>"),
}

# Calling conventions a template documents for itself (llama.cpp passes the same).
TEMPLATE_KWARGS: dict[str, dict[str, Any]] = {
    "fireworks-ai-llama-3-firefunction-v2": {
        "functions": json.dumps([t["function"] for t in TOOLS], indent=2),
        "datetime": "2025-03-14 09:26",
    },
}


@dataclass(frozen=True)
class Refusal:
    """Pairs that transformers itself refuses to render: both renderers must raise with ``error`` in the
    message.  ``templates`` and ``conversations`` are fnmatch patterns; ``tools=None`` means with and without
    a tools list.
    """

    templates: tuple[str, ...]
    conversations: tuple[str, ...]
    error: str
    cause: str
    tools: bool | None = None

    def matches(self, template: str, conversation: str, with_tools: bool) -> bool:
        return (
            any(fnmatch.fnmatchcase(template, p) for p in self.templates)
            and any(fnmatch.fnmatchcase(conversation, p) for p in self.conversations)
            and (self.tools is None or self.tools == with_tools)
        )


_STRING_CONTENT_ONLY = (
    "ByteDance-Seed-OSS",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
    "Qwen-QwQ-32B",
    "Qwen-Qwen2.5-7B-Instruct",
    "Qwen3-Coder",
    "deepseek-ai-*",
    "ibm-granite-*",
    "llama-cpp-deepseek-r1",
    "meetkai-functionary-*",
    "microsoft-Phi-3.5-mini-instruct",
    "mistralai-Mistral-Nemo-Instruct-2407",
    "openai-gpt-oss-120b",
)
_STRING_ARGS_ONLY = (
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
    "deepseek-ai-DeepSeek-V3.1",
    "meetkai-functionary-medium-v3.1",
    "meetkai-functionary-medium-v3.2",
)
_MAPPING_ARGS_ONLY = ("ByteDance-Seed-OSS", "Qwen3-Coder", "StepFun3.5-Flash")

REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        _STRING_CONTENT_ONLY,
        ("content_parts",),
        'can only concatenate str (not "list") to str',
        "content given as a list of text parts; the template concatenates it as a string",
    ),
    Refusal(
        ("Qwen-Qwen3-0.6B",),
        ("content_parts",),
        "'list object' has no attribute 'startswith'",
        "content given as a list of text parts; the template calls str.startswith on it",
    ),
    Refusal(
        ("NVIDIA-Nemotron-Nano-v2",),
        ("content_parts",),
        "'list object' has no attribute 'replace'",
        "content given as a list of text parts; the template calls str.replace on it",
    ),
    Refusal(
        ("Apertus-8B-Instruct",),
        ("content_parts",),
        "Invalid user message",
        "content given as a list of text parts; the template raises on non-string user content",
    ),
    Refusal(
        _STRING_ARGS_ONLY,
        ("one_call", "two_calls", "tool_results"),
        'can only concatenate str (not "dict") to str',
        "tool-call arguments given as an object; the template concatenates them as a JSON string",
    ),
    Refusal(
        ("llama-cpp-deepseek-r1",),
        ("one_call", "tool_results"),
        'can only concatenate str (not "dict") to str',
        "tool-call arguments given as an object; the template concatenates them as a JSON string (it drops "
        "the calls of a message that also has text, so two_calls renders)",
    ),
    Refusal(
        _MAPPING_ARGS_ONLY,
        ("*wire_args",),
        "Can only get item pairs from a mapping",
        "tool-call arguments given as a JSON string; the template iterates them with |items",
    ),
    Refusal(
        ("MiniMax-M2",),
        ("*wire_args",),
        "'str object' has no attribute 'items'",
        "tool-call arguments given as a JSON string; the template calls .items() on them",
    ),
    Refusal(
        ("GLM-4.6",),
        ("*wire_args",),
        "Invalid tool call arguments passed",
        "tool-call arguments given as a JSON string; the template raises unless they are a mapping",
    ),
    Refusal(
        ("xml-tagged-args", "pythonic-calls"),
        ("*wire_args",),
        "must be an object",
        "tool-call arguments given as a JSON string; our template needs an object (each key becomes a "
        "parameter) and says so with raise_exception",
    ),
    Refusal(
        (
            "Qwen-Qwen3-0.6B",
            "ibm-granite-granite-3.3-2B-Instruct",
            "microsoft-Phi-3.5-mini-instruct",
            "unsloth-mistral-Devstral-Small-2507",
        ),
        ("one_call_null_content",),
        "has no attribute 'content'",
        "content None is dropped by transformers (keys whose value is None are removed); the template then "
        "reads message.content unconditionally",
    ),
    Refusal(
        ("LFM2-8B-A1B",),
        ("one_call_null_content",),
        "Object of type Undefined is not JSON serializable",
        "content None is dropped by transformers; the template then passes the missing content to tojson",
    ),
    Refusal(
        (
            "deepseek-ai-DeepSeek-V3.1",
            "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
            "llama-cpp-deepseek-r1",
            "meetkai-functionary-medium-v3.1",
            "meetkai-functionary-medium-v3.2",
        ),
        ("one_call_null_content",),
        'can only concatenate str (not "dict") to str',
        "tool-call arguments given as an object (this conversation also drops content)",
    ),
    Refusal(
        ("Kimi-K2-Instruct",),
        ("one_call*", "two_calls", "tool_results*"),
        "access to attribute 'append'",
        "the template calls list.append, which transformers' ImmutableSandboxedEnvironment forbids",
    ),
    Refusal(
        ("meta-llama-Llama-3.1-8B-Instruct", "meta-llama-Llama-3.2-3B-Instruct"),
        ("two_calls", "tool_results*"),
        "only supports single tool-calls",
        "the template raises on parallel tool calls",
    ),
    Refusal(
        ("google-gemma-2-2b-it",),
        ("system", "multi_turn", "tool_results"),
        "System role not supported",
        "the template raises on a system message",
    ),
    Refusal(
        ("google-gemma-2-2b-it",),
        ("tool_results_wire_args",),
        "Conversation roles must alternate",
        "the template knows no tool role: tool results break its user/assistant alternation check",
    ),
    Refusal(
        ("CohereForAI-c4ai-command-r-plus-tool_use", "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use"),
        ("*",),
        "'NoneType' object is not iterable",
        "a tool_use template rendered without tools: it iterates `tools`, which is None",
        tools=False,
    ),
    Refusal(
        ("llama-cpp-deepseek-r1",),
        ("*",),
        "Object of type generator is not JSON serializable",
        "the template writes `tools | map(...) | tojson`; map returns a generator json.dumps cannot encode",
        tools=True,
    ),
)


def _special_tokens(stem: str) -> dict[str, str]:
    bos, eos = next(
        (v for pat, v in SPECIAL_TOKENS.items() if fnmatch.fnmatchcase(stem, pat)), ("<s>", "</s>")
    )
    return {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}


def _needs_tools(stem: str) -> bool:
    """The ``tool_use`` variants of a model's templates iterate ``tools`` unconditionally."""
    return stem.endswith("tool_use")


def _tokenizer(template: str, tokens: dict[str, str]) -> Any:
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    return transformers.PreTrainedTokenizerFast(tokenizer_object=model, chat_template=template, **tokens)


class _FrozenClock(_dt.datetime):
    @classmethod
    def now(cls, tz: Any = None) -> _FrozenClock:
        return cls(2025, 3, 14, 9, 26, 53)


@pytest.fixture(autouse=True)
def _frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both renderers read the clock through their module's ``datetime`` name (``strftime_now``)."""
    monkeypatch.setattr(hf_chat, "datetime", _FrozenClock)
    monkeypatch.setattr(wb_render, "datetime", _FrozenClock)


@dataclass
class Outcome:
    text: str | None
    error: str | None


def _run(fn: Any, *args: Any, **kwargs: Any) -> Outcome:
    try:
        return Outcome(fn(*args, **kwargs), None)
    except Exception as exc:  # the point is to compare failures too
        return Outcome(None, f"{type(exc).__name__}: {exc}")


@dataclass
class Subject:
    """One template under test: its text, the tokenizer transformers renders with, and our kwargs."""

    stem: str
    source: str
    tokens: dict[str, str]
    extra: dict[str, Any]
    tokenizer: Any

    @classmethod
    def load(cls, path: Path) -> Subject:
        source = path.read_text(encoding="utf-8")
        tokens = _special_tokens(path.stem)
        extra = TEMPLATE_KWARGS.get(path.stem, {})
        return cls(path.stem, source, tokens, extra, _tokenizer(source, tokens))

    def theirs(self, conv: list[dict[str, Any]], **kwargs: Any) -> Outcome:
        conv = copy.deepcopy(conv)
        return _run(self.tokenizer.apply_chat_template, conv, tokenize=False, **self.extra, **kwargs)

    def ours(self, conv: list[dict[str, Any]], **kwargs: Any) -> Outcome:
        return _run(render, self.source, conv, **self.tokens, **self.extra, **kwargs)


def _pairs() -> Iterator[tuple[str, bool, bool, str]]:
    return itertools.product(CONVERSATIONS, (False, True), (False, True), KWARG_VARIANTS)  # type: ignore[return-value]


def _all_templates() -> list[Any]:
    paths = [*shared_templates(), *sorted(PROJECT_TEMPLATES.glob("*.jinja"))]
    return [pytest.param(p, id=p.stem) for p in paths]


def _verdict(rules: list[Refusal], theirs: Outcome, ours: Outcome) -> tuple[str, Refusal | None]:
    """``equal``, ``refused`` (with the rule that explains it) or a description of the problem."""
    if rules:
        for rule in rules:
            if theirs.error and ours.error and rule.error in theirs.error and rule.error in ours.error:
                return "refused", rule
        wanted = [r.error for r in rules]
        return (
            f"expected both to refuse with one of {wanted}; transformers: {theirs.error or 'rendered'}; "
            + (f"ours: {ours.error or 'rendered'}"),
            None,
        )
    if theirs.error is not None or ours.error is not None:
        return f"unexpected failure; transformers: {theirs.error}; ours: {ours.error}", None
    if theirs.text != ours.text:
        return f"MISMATCH\n  transformers: {theirs.text!r}\n  ours:         {ours.text!r}", None
    return "equal", None


@pytest.mark.parametrize("path", _all_templates())
def test_render_matches_transformers_byte_for_byte(path: Path) -> None:
    subject = Subject.load(path)
    assert subject.tokenizer.special_tokens_map == subject.tokens  # what transformers adds besides our kwargs
    problems: list[str] = []
    used: set[Refusal] = set()
    equal = 0
    for conv_name, with_tools, gen_prompt, variant in _pairs():
        conv = CONVERSATIONS[conv_name]
        kwargs = {"tools": TOOLS if with_tools else None, "add_generation_prompt": gen_prompt}
        kwargs.update(KWARG_VARIANTS[variant])
        rules = [r for r in REFUSALS if r.matches(subject.stem, conv_name, with_tools)]
        verdict, rule = _verdict(rules, subject.theirs(conv, **kwargs), subject.ours(conv, **kwargs))
        if verdict == "equal":
            equal += 1
        elif rule is not None:
            used.add(rule)
        else:
            problems.append(f"{conv_name} tools={with_tools} gen={gen_prompt} {variant}: {verdict}")
    mine = [r for r in REFUSALS if any(fnmatch.fnmatchcase(subject.stem, p) for p in r.templates)]
    stale = [r.cause for r in mine if r not in used]
    assert not stale, f"refusal rules that no longer apply to {subject.stem}: {stale}"
    assert not problems, f"{len(problems)} pair(s) differ:\n" + "\n".join(problems[:12])
    assert equal > 0


def test_refused_pairs_keep_our_error_one_line_with_template_line() -> None:
    """A refusal surfaces as a TemplateError naming the template line (what the CLI prints)."""
    source = "{%- for m in messages %}\n{{- m.content + 1 }}\n{%- endfor %}"
    with pytest.raises(TemplateError) as info:
        render(source, [_USER])
    assert info.value.line == 2
    assert "\n" not in str(info.value)
    with pytest.raises(TypeError):
        _tokenizer(source, {}).apply_chat_template([_USER], tokenize=False)


@pytest.mark.parametrize("path", _all_templates())
def test_continue_final_message_matches_transformers(path: Path) -> None:
    """``continue_final_message`` cuts the render right after the final message's text, as transformers."""
    subject = Subject.load(path)
    tools = TOOLS if _needs_tools(path.stem) else None
    conv = [_USER, {"role": "assistant", "content": "The weather in Paris is"}]
    theirs = subject.theirs(conv, tools=tools, continue_final_message=True)
    ours = subject.ours(conv, tools=tools, continue_final_message=True)
    assert theirs.error is None and ours.error is None, (theirs.error, ours.error)
    assert ours.text == theirs.text
    assert ours.text is not None and ours.text.endswith("The weather in Paris is")


@pytest.mark.parametrize("path", _all_templates())
def test_documents_are_passed_like_transformers(path: Path) -> None:
    """RAG templates (Command-R, Granite) read ``documents``; every template must see the same list."""
    subject = Subject.load(path)
    tools = TOOLS if _needs_tools(path.stem) else None
    docs = [{"title": "Paris", "text": "Paris is sunny today."}, {"title": "Lyon", "text": "Lyon is rainy."}]
    theirs = subject.theirs([_USER], tools=tools, documents=docs, add_generation_prompt=True)
    ours = subject.ours([_USER], tools=tools, documents=docs, add_generation_prompt=True)
    assert theirs.error is None and ours.error is None, (theirs.error, ours.error)
    assert ours.text == theirs.text


LOOP_CONSTRUCTS = {
    "long_range_with_loop_vars": "{% for i in range(1500) %}{% if loop.last %}{{ loop.length }}"
    "/{{ loop.index }}/{{ loop.revindex0 }}/{{ loop.previtem }}{% endif %}{% endfor %}",
    "generator_iterable": "{% for m in messages | selectattr('role', 'equalto', 'user') %}{{ loop.length }}"
    "{{ loop.last }}{{ m.content }}{% endfor %}",
    "items_and_else": "{% for k, v in {'a': 1, 'b': 2} | items %}{{ k }}={{ v }};{% endfor %}"
    "{% for x in [] %}x{% else %}empty{% endfor %}{% for x in nothing %}x{% else %}undefined{% endfor %}",
    "filtered_loop_with_controls": "{% for i in range(2000) if i % 7 == 0 %}"
    "{% if i > 30 %}{% break %}{% endif %}{% if i == 7 %}{% continue %}{% endif %}"
    "{{ i }}{{ loop.cycle('a', 'b') }}{% endfor %}",
    "recursive_loop": "{% for node in [{'n': 1, 'kids': [{'n': 2, 'kids': [{'n': 3, 'kids': []}]}]}] "
    "recursive %}{{ node.n }}({{ loop.depth }}){{ loop(node.kids) }}{% endfor %}",
    "macro_and_call_block": "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
    "{% call wrap('b') %}{% for m in messages %}{{ m.content }}{% endfor %}{% endcall %}",
    "string_repeat_and_power": "{{ '-' * 3 }}{{ 2 ** 10 }}{{ [1, 2] * 2 }}",
    "loop_changed": "{% for x in [1, 1, 2, 2, 3] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}",
}


@pytest.mark.parametrize("name", sorted(LOOP_CONSTRUCTS))
def test_deadline_guards_are_invisible_to_templates(name: str) -> None:
    """The loop and macro guards inserted for the time limit must not change any output."""
    source = LOOP_CONSTRUCTS[name]
    conv = [_USER, {"role": "assistant", "content": "A"}, {"role": "user", "content": "B"}]
    theirs = _tokenizer(source, {}).apply_chat_template(conv, tokenize=False)
    assert render(source, conv) == theirs
    assert theirs  # every construct renders something


@pytest.mark.parametrize("path", _all_templates())
def test_worker_and_in_process_renders_are_identical(path: Path) -> None:
    """Renders go to the render worker by default; the in-process path must give the same bytes."""
    subject = Subject.load(path)
    outcomes = []
    for in_worker in (True, False):
        previous = wb_render.use_worker(in_worker)
        try:
            outcomes.append(
                [
                    subject.ours(CONVERSATIONS[name], tools=TOOLS, add_generation_prompt=True)
                    for name in ("plain", "tool_results")
                ]
            )
        finally:
            wb_render.use_worker(previous)
    assert outcomes[0] == outcomes[1]
