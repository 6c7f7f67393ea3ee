"""Named, documented patches for templates whose renders the diffs cannot read as they are.

Two kinds, both deliberately few and each keyed on a feature of the template *text* (never on its name):

* **Render patches** make a template renderable in Python's immutable Jinja sandbox when it relies on a
  construct that the C++ engine llama.cpp uses (minja) accepts and transformers refuses.  They are applied
  only after a render has failed with the matching error, and they rewrite only the offending expression to
  an equivalent one.
* **Post-analysis patches** fill in facts that no render shows, because the template never writes them
  (LFM2 never renders its tool calls; Granite 3.3 only describes its ``<think>``/``<response>`` tags in
  prose).
  Each says which template feature it keys on and what it sets; the analysis lists every patch it applied.

Every patch is tested against the real template that needs it (tests/test_analysis_workarounds.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.template.render import TemplateError

if TYPE_CHECKING:
    from workbench.analysis.state import Findings


# ----------------------------------------------------------------------------------------- render patches
@dataclass(frozen=True)
class RenderPatch:
    """Rewrite one construct that Python's sandbox refuses into an equivalent one it accepts."""

    name: str
    summary: str
    error_hint: str
    pattern: re.Pattern[str]
    replacement: str

    def matches(self, exc: TemplateError, text: str) -> bool:
        return self.error_hint in exc.detail and self.pattern.search(text) is not None

    def apply(self, text: str) -> str:
        return self.pattern.sub(self.replacement, text)


RENDER_PATCHES: tuple[RenderPatch, ...] = (
    # llama-cpp-deepseek-r1: ``tools | map(attribute='function') | tojson`` -- in Python ``map`` yields a
    # generator that json cannot serialise; minja materialises it.  Adding ``| list`` is equivalent.
    RenderPatch(
        name="tojson_of_map",
        summary="'| map(...) | tojson' rendered as '| map(...) | list | tojson'",
        error_hint="generator is not JSON serializable",
        pattern=re.compile(r"(\|\s*map\([^()]*\))(\s*\|\s*tojson)"),
        replacement=r"\1 | list\2",
    ),
    # Kimi-K2-Instruct: ``{% set _ = ns.ids.append(x) %}`` mutates a list, which the immutable sandbox (the
    # one transformers uses) forbids.  Rebinding the namespace attribute to a new list is equivalent.
    RenderPatch(
        name="immutable_list_append",
        summary="'{% set _ = ns.xs.append(v) %}' rendered as '{% set ns.xs = ns.xs + [v] %}'",
        error_hint="'append'",
        pattern=re.compile(
            r"\{%(-?)\s*set\s+\w+\s*=\s*([A-Za-z_]\w*\.[A-Za-z_]\w*)\.append\(([^()]*)\)\s*(-?)%\}"
        ),
        replacement=r"{%\1 set \2 = \2 + [\3] \4%}",
    ),
    # The same template pops from that list when it renders a tool result.
    RenderPatch(
        name="immutable_list_pop",
        summary="'{% set v = ns.xs.pop(0) %}' rendered as "
        "'{% set v = ns.xs[0] %}{% set ns.xs = ns.xs[1:] %}'",
        error_hint="'pop'",
        pattern=re.compile(r"\{%(-?)\s*set\s+(\w+)\s*=\s*([A-Za-z_]\w*\.[A-Za-z_]\w*)\.pop\(0\)\s*(-?)%\}"),
        replacement=r"{%\1 set \2 = \3[0] %}{% set \3 = \3[1:] \4%}",
    ),
)


# ----------------------------------------------------------------------------------------- post-analysis
@dataclass(frozen=True)
class Workaround:
    """A fact the renders cannot show, keyed on a literal feature of the template text."""

    name: str
    keyed_on: str
    summary: str
    matches: Callable[[str, Findings], bool]
    apply: Callable[[Findings], None]


def _lfm2_matches(text: str, f: Findings) -> bool:
    return (
        "<|tool_list_start|>" in text
        and "<|tool_list_end|>" in text
        and f.tools.get("format", "none") == "none"
    )


def _lfm2_apply(f: Findings) -> None:
    f.tools.update(
        format="pythonic",
        section_start="<|tool_call_start|>",
        section_end="<|tool_call_end|>",
        array_wrapped=True,
        call_separator=", ",
        parallel=True,
    )
    if f.reasoning.get("mode", "none") == "none":
        f.reasoning.update(mode="tag_based", start="<think>", end="</think>")


def _granite_matches(text: str, f: Findings) -> bool:
    return (
        "<think></think>" in text
        and "<response></response>" in text
        and f.reasoning.get("mode", "none") == "none"
    )


def _granite_apply(f: Findings) -> None:
    f.reasoning.update(mode="tag_based", start="<think>", end="</think>")
    f.content.update(mode="wrapped_with_reasoning", start="<response>", end="</response>")


def _granite_tools_matches(text: str, f: Findings) -> bool:
    return (
        "respond only with <|tool_call|> followed by a JSON list" in text
        and f.tools.get("format", "none") == "none"
    )


def _granite_tools_apply(f: Findings) -> None:
    f.tools.update(
        format="json_native",
        section_start="<|tool_call|>",
        array_wrapped=True,
        name_field="name",
        args_field="arguments",
        parameter_order=("name", "arguments"),
        call_separator=", ",
        parallel=True,
    )


def _apertus_matches(text: str, f: Findings) -> bool:
    return (
        "<|inner_prefix|>" in text
        and "<|inner_suffix|>" in text
        and "'thoughts'" in text
        and f.reasoning.get("mode", "none") == "none"
    )


def _apertus_apply(f: Findings) -> None:
    f.reasoning.update(mode="tag_based", start="<|inner_prefix|>", end="<|inner_suffix|>")


def _cohere_plus_matches(text: str, f: Findings) -> bool:
    return (
        "<|CHATBOT_TOKEN|>" in text
        and str(f.tools.get("section_start", "")).startswith("Action:")
        and f.content.get("mode", "plain") == "plain"
        and "<|END_OF_TURN_TOKEN|>" in f.end_markers
    )


def _cohere_plus_apply(f: Findings) -> None:
    f.content.update(mode="always_wrapped", start="<|CHATBOT_TOKEN|>", end="<|END_OF_TURN_TOKEN|>")


WORKAROUNDS: tuple[Workaround, ...] = (
    Workaround(
        name="lfm2_unrendered_tool_calls",
        keyed_on="tools listed between <|tool_list_start|> and <|tool_list_end|>, calls never rendered",
        summary=(
            "LFM2 templates drop assistant tool calls, so no diff can show them; LFM2 models write "
            "<|tool_call_start|>[name(arg=value), ...]<|tool_call_end|> (pythonic calls) and may think in "
            "<think>...</think>"
        ),
        matches=_lfm2_matches,
        apply=_lfm2_apply,
    ),
    Workaround(
        name="granite_prose_reasoning_tags",
        keyed_on="system prompt text 'Write your thoughts between <think></think> and write your response "
        "between <response></response>'",
        summary=(
            "Granite 3.3 never renders reasoning or response tags, it only asks for them in prose: reasoning "
            "<think>...</think>, then the answer wrapped in <response>...</response>"
        ),
        matches=_granite_matches,
        apply=_granite_apply,
    ),
    Workaround(
        name="granite_prose_tool_calls",
        keyed_on="system prompt text 'respond only with <|tool_call|> followed by a JSON list'",
        summary=(
            "Granite 3.3 drops assistant tool calls from the history; its prompt asks for <|tool_call|> "
            "followed by a JSON list of {name, arguments} objects"
        ),
        matches=_granite_tools_matches,
        apply=_granite_tools_apply,
    ),
    Workaround(
        name="apertus_inner_thoughts",
        keyed_on="<|inner_prefix|> / <|inner_suffix|> written around content blocks of type 'thoughts'",
        summary=(
            "Apertus renders reasoning only from its own content-block shape ({'blocks': [{'type': "
            "'thoughts', ...}]}), never from reasoning_content; its thoughts sit between <|inner_prefix|> "
            "and <|inner_suffix|>"
        ),
        matches=_apertus_matches,
        apply=_apertus_apply,
    ),
    Workaround(
        name="cohere_chatbot_token_content",
        keyed_on="<|CHATBOT_TOKEN|> role token and a markdown 'Action:' tool block",
        summary=(
            "Command-R+ models may repeat their role token <|CHATBOT_TOKEN|> before the answer; the answer "
            "is read as wrapped in <|CHATBOT_TOKEN|> ... <|END_OF_TURN_TOKEN|> (as llama.cpp does)"
        ),
        matches=_cohere_plus_matches,
        apply=_cohere_plus_apply,
    ),
)


def apply_workarounds(text: str, findings: Findings) -> list[str]:
    """Apply every matching post-analysis workaround to ``findings`` (mutates it); returns their names."""
    applied = []
    for w in WORKAROUNDS:
        if w.matches(text, findings):
            w.apply(findings)
            applied.append(w.name)
    return applied
