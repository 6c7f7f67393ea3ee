"""The probe table: every question the analyzer asks a template, as data.

A probe renders the template twice, with inputs that differ in exactly one respect, and diffs the two
renders.  The inputs are *named variants* (a conversation, whether tools are passed, whether the generation
prompt is added, extra template kwargs), so a render that several probes share is made once (the analyzer
caches by variant name).  The TUI lists probes from this table, the CLI prints them from it, and tests
iterate it; the phase modules (``reasoning.py``, ``content.py``, ``tools.py``, ``arguments.py``) interpret
the diffs.

The needles are chosen so that they cannot collide with template text: function names ``foofoo`` /
``barbar``, values ``XXXX`` / ``YYYY``, call ids ``call00001`` / ``call99999`` (nine alphanumeric
characters, because Mistral templates reject any other id length).  The argument names ``first`` /
``second`` are ordinary words, so they are only ever looked for inside an isolated call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# ----------------------------------------------------------------------------------------- needles
USER_TEXT = "Hello, please help me."
USER_TEXT_2 = "Thank you, one more question."
CONTENT_TEXT = "Let me help you."
REASONING_TEXT = "I should think about this first."
FUNC_A = "foofoo"
FUNC_B = "barbar"
ARG_A = "first"
ARG_B = "second"
VALUE_A = "XXXX"
VALUE_B = "YYYY"
ID_A = "call00001"
ID_B = "call99999"


def _tool(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    ARG_A: {"type": "string", "description": "The first value."},
                    ARG_B: {"type": "string", "description": "The second value."},
                },
                "required": [ARG_A],
            },
        },
    }


TOOLS: tuple[dict[str, Any], ...] = (
    _tool(FUNC_A, "Look something up."),
    _tool(FUNC_B, "Look something else up."),
)


def _call(name: str = FUNC_A, args: Mapping[str, str] | None = None, call_id: str = ID_A) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": dict({ARG_A: VALUE_A} if args is None else args)},
    }


def assistant(
    content: str | list[dict[str, str]] | None = CONTENT_TEXT,
    reasoning: str | None = None,
    calls: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """An assistant message with the given parts (``content`` None: no answer text); the probes' and the
    turn learner's messages are all made by it."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


USER = {"role": "user", "content": USER_TEXT}


# ----------------------------------------------------------------------------------------- variants
@dataclass(frozen=True)
class Variant:
    """One set of render inputs.

    ``messages`` hold tool-call arguments as JSON *objects*, as most templates expect (``| tojson``); the
    analyzer re-renders with arguments as JSON *text* for templates that concatenate them as strings.
    """

    name: str
    description: str
    messages: tuple[Mapping[str, Any], ...]
    tools: bool = False
    add_generation_prompt: bool = False
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    same_as: str = ""  # the variant without ``kwargs``: its render is reused when the template ignores them

    @property
    def has_calls(self) -> bool:
        return any(m.get("tool_calls") for m in self.messages)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "messages": [dict(m) for m in self.messages],
            "tools": self.tools,
            "add_generation_prompt": self.add_generation_prompt,
            "kwargs": dict(self.kwargs),
        }


def _v(name: str, description: str, *messages: Mapping[str, Any], **options: Any) -> Variant:
    return Variant(name, description, tuple(messages), **options)


_CALLS_ONE = (_call(),)
VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        # Generation prompt.
        _v("prompt_none", "user turn only, no generation prompt", USER),
        _v("prompt", "user turn + generation prompt", USER, add_generation_prompt=True),
        _v(
            "prompt_none_think_off",
            "user turn only, enable_thinking=false",
            USER,
            kwargs={"enable_thinking": False},
            same_as="prompt_none",
        ),
        _v(
            "prompt_none_think_on",
            "user turn only, enable_thinking=true",
            USER,
            kwargs={"enable_thinking": True},
            same_as="prompt_none",
        ),
        _v(
            "prompt_think_off",
            "generation prompt, enable_thinking=false",
            USER,
            add_generation_prompt=True,
            kwargs={"enable_thinking": False},
            same_as="prompt",
        ),
        _v(
            "prompt_think_on",
            "generation prompt, enable_thinking=true",
            USER,
            add_generation_prompt=True,
            kwargs={"enable_thinking": True},
            same_as="prompt",
        ),
        # Plain assistant turns (no tools passed).
        _v("content", "assistant answers with content", USER, assistant()),
        _v(
            "content_then_user",
            "assistant answers, then the user speaks again",
            USER,
            assistant(),
            {"role": "user", "content": USER_TEXT_2},
        ),
        _v("reasoning", "assistant reasons, then answers", USER, assistant(reasoning=REASONING_TEXT)),
        _v(
            "reasoning_chunks",
            "assistant content as blocks: a thinking block, then a text block",
            USER,
            assistant(
                [{"type": "thinking", "thinking": REASONING_TEXT}, {"type": "text", "text": CONTENT_TEXT}]
            ),
        ),
        # With tools passed.
        _v("tools_content", "tools offered, assistant answers with content", USER, assistant(), tools=True),
        _v(
            "tools_reasoning",
            "tools offered, assistant reasons then answers",
            USER,
            assistant(reasoning=REASONING_TEXT),
            tools=True,
        ),
        _v(
            "call",
            "assistant makes one call foofoo(first=XXXX)",
            USER,
            assistant("", calls=_CALLS_ONE),
            tools=True,
        ),
        _v(
            "reasoning_call",
            "assistant reasons, then makes one call",
            USER,
            assistant("", reasoning=REASONING_TEXT, calls=_CALLS_ONE),
            tools=True,
        ),
        _v(
            "call_two",
            "assistant makes two calls: foofoo(first=XXXX), barbar(first=XXXX)",
            USER,
            assistant("", calls=(_call(), _call(FUNC_B, call_id=ID_B))),
            tools=True,
        ),
        _v(
            "call_func_b",
            "one call barbar(first=XXXX)",
            USER,
            assistant("", calls=(_call(FUNC_B),)),
            tools=True,
        ),
        _v(
            "call_two_args",
            "one call foofoo(first=XXXX, second=YYYY)",
            USER,
            assistant("", calls=(_call(args={ARG_A: VALUE_A, ARG_B: VALUE_B}),)),
            tools=True,
        ),
        _v("call_no_args", "one call foofoo()", USER, assistant("", calls=(_call(args={}),)), tools=True),
        _v(
            "call_id_b",
            "one call foofoo(first=XXXX) with id call99999",
            USER,
            assistant("", calls=(_call(call_id=ID_B),)),
            tools=True,
        ),
        _v(
            "call_arg_b",
            "one call foofoo(second=XXXX)",
            USER,
            assistant("", calls=(_call(args={ARG_B: VALUE_A}),)),
            tools=True,
        ),
        _v(
            "call_value_b",
            "one call foofoo(first=YYYY)",
            USER,
            assistant("", calls=(_call(args={ARG_A: VALUE_B}),)),
            tools=True,
        ),
    )
}


#: Conversations only switch probing renders (``workbench.analysis.switches``), each once per switch value:
#: not part of any probe pair, so they are kept out of :data:`VARIANTS`.
SWITCH_VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        _v(
            "switch_history",
            "assistant reasons and answers, then the user speaks again",
            USER,
            assistant(reasoning=REASONING_TEXT),
            {"role": "user", "content": USER_TEXT_2},
        ),
    )
}


# ----------------------------------------------------------------------------------------- probes
@dataclass(frozen=True)
class Probe:
    """One question: render variant ``a`` and variant ``b``, diff them, and read the answer off the diff."""

    id: str
    phase: str
    question: str
    a: str
    b: str
    optional: bool = False  # tries an input shape many templates reject: a failed render is no warning

    @property
    def variant_a(self) -> Variant:
        return VARIANTS[self.a]

    @property
    def variant_b(self) -> Variant:
        return VARIANTS[self.b]


PHASES = ("prompt", "reasoning", "content", "tools", "arguments")

PROBES: tuple[Probe, ...] = (
    Probe(
        "P1",
        "prompt",
        "What does the generation prompt append after the last user turn?",
        "prompt_none",
        "prompt",
    ),
    Probe(
        "P2",
        "prompt",
        "What ends an assistant turn (seen when the user speaks again)?",
        "content",
        "content_then_user",
    ),
    Probe("R1", "reasoning", "How is reasoning written into an assistant turn?", "content", "reasoning"),
    Probe(
        "R1c",
        "reasoning",
        "Is reasoning written from a 'thinking' content block instead?",
        "content",
        "reasoning_chunks",
        optional=True,
    ),
    Probe(
        "R2",
        "reasoning",
        "What does enable_thinking change in the generation prompt?",
        "prompt_think_off",
        "prompt_think_on",
    ),
    Probe(
        "R3",
        "reasoning",
        "Is reasoning kept next to tool calls (and only there)?",
        "tools_reasoning",
        "reasoning_call",
    ),
    Probe("C1", "content", "Is the answer text wrapped in markers of its own?", "tools_content", "call"),
    Probe(
        "T1",
        "tools",
        "What does a tool call look like, compared with a plain answer?",
        "tools_content",
        "call",
    ),
    Probe(
        "T2",
        "tools",
        "Does a second call repeat the section markers (per-call) or share them?",
        "call",
        "call_two",
    ),
    Probe("T3", "tools", "What separates two calls, and does anything count calls?", "call", "call_two"),
    Probe("T4", "tools", "Where is the function name, and what surrounds it?", "call", "call_func_b"),
    Probe("T5", "tools", "What separates two arguments?", "call", "call_two_args"),
    Probe("T6", "tools", "What wraps the arguments (seen when there are none)?", "call_no_args", "call"),
    Probe("T7", "tools", "Does the call id appear in the output, and where?", "call", "call_id_b"),
    Probe("A1", "arguments", "What surrounds an argument name?", "call", "call_arg_b"),
    Probe("A2", "arguments", "What surrounds an argument value?", "call", "call_value_b"),
)

PROBES_BY_ID: dict[str, Probe] = {p.id: p for p in PROBES}


def without_call_ids(messages: Sequence[Any]) -> list[Any]:
    """The same messages with no ``id`` on any tool call: what a template that writes a call's own id where
    it would write its label (Kimi-K2-Thinking: ``functions.NAME:IDX`` only for a call without an id)
    renders with the call's name."""
    out: list[Any] = []
    for m in messages:
        if isinstance(m, Mapping) and m.get("tool_calls"):
            calls = [_without_id(c) for c in m["tool_calls"]]
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out


def _without_id(call: Any) -> Any:
    return {k: v for k, v in call.items() if k != "id"} if isinstance(call, Mapping) else call


def stringify_arguments(messages: tuple[Mapping[str, Any], ...]) -> list[dict[str, Any]]:
    """The same messages with every tool-call ``arguments`` object serialised to JSON text.

    Templates such as DeepSeek V3.1 or functionary concatenate ``arguments`` as a string; rendering them with
    the OpenAI wire form (arguments as text) is what their authors expect.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        d = dict(m)
        if d.get("tool_calls"):
            calls = []
            for c in d["tool_calls"]:
                fn = dict(c["function"])
                if not isinstance(fn.get("arguments"), str):
                    fn["arguments"] = json.dumps(fn.get("arguments", {}), ensure_ascii=False)
                calls.append({**c, "function": fn})
            d["tool_calls"] = calls
        out.append(d)
    return out
