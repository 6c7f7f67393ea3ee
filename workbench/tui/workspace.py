"""Everything the user is working on, kept in one plain object the app owns.

Screens come and go (Textual modes create them lazily); the workspace does not.  Edits are written here as
they happen, so switching screens, a failed render or a failed analysis never loses them.  ``revision``
counts changes per topic: a screen that was hidden compares revisions when it comes back and redraws only
what changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from workbench.analysis import Analysis
from workbench.generation.loaded import LoadedModel
from workbench.runtime.chat import Message, Tool, load_messages, load_tools
from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource
from workbench.tui.steps import Driver, StepLog

if TYPE_CHECKING:  # types only: the analysis and validation packages load after the first screen
    from workbench.analysis import Analysis
    from workbench.generation.loaded import LoadedModel
    from workbench.validate import ValidationReport

TOPICS = ("template", "analysis", "spec", "model", "steps", "engine", "validation", "grammar")

DEFAULT_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {
        "role": "assistant",
        "reasoning_content": "The user wants the weather; I should call the tool.",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 18, "sky": "cloudy"}'},
    {"role": "assistant", "content": "It is 18 °C and cloudy in Paris."},
]

DEFAULT_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
                "required": ["city"],
            },
        },
    }
]

REASONING_EFFORTS = ("", "low", "medium", "high")

ModelState = Literal["none", "loading", "ready", "failed", "skipped"]


@dataclass
class RenderKwargs:
    """The template kwargs the Template screen edits (``extra`` is ``key=value`` pairs, JSON values)."""

    add_generation_prompt: bool = False
    enable_thinking: bool = True
    reasoning_effort: str = ""
    extra: str = ""

    def to_kwargs(self) -> dict[str, Any]:
        """The kwargs for ``render``; raises ValueError naming a malformed ``extra`` pair."""
        out: dict[str, Any] = {
            "add_generation_prompt": self.add_generation_prompt,
            "enable_thinking": self.enable_thinking,
        }
        if self.reasoning_effort:
            out["reasoning_effort"] = self.reasoning_effort
        for pair in self.extra.split():
            key, sep, raw = pair.partition("=")
            if not sep or not key.isidentifier():
                raise ValueError(f"extra kwargs: expected key=value, got {pair!r}")
            try:
                out[key] = json.loads(raw)
            except json.JSONDecodeError:
                out[key] = raw
        return out


@dataclass
class Workspace:
    """The template, conversation, analysis, spec, model and steps of one workbench run."""

    source: TemplateSource
    template_text: str = ""
    messages_json: str = field(
        default_factory=lambda: json.dumps(DEFAULT_MESSAGES, indent=2, ensure_ascii=False)
    )
    tools_json: str = field(default_factory=lambda: json.dumps(DEFAULT_TOOLS, indent=2))
    kwargs: RenderKwargs = field(default_factory=RenderKwargs)
    analysis: Analysis | None = None
    analysis_error: str = ""
    analysis_running: bool = False
    analysis_sha: str = ""  # sha256 of the template text the analysis was computed on
    spec: FormatSpec | None = None
    saved_spec: FormatSpec | None = None  # the spec last written by an export (or read from a file)
    # The spec hand edits are measured against (the analysis', a loaded file's or a session's), and where
    # the spec in use came from: "" for the analysis, else "spec file NAME" / "session NAME".
    base_spec: FormatSpec | None = None
    spec_origin: str = ""
    validation: ValidationReport | None = None
    validation_summary: str = ""
    model_name: str = ""
    model_notice: str = ""
    model_state: ModelState = "none"
    loaded_model: LoadedModel | None = None
    driver: Driver | None = None
    running: bool = False
    constrained: bool = True
    # The grammar's answers for the inspector (workbench.generation.why): where it is after ``grammar_at``
    # steps (a GrammarPosition), and the last "why masked" / trial-string answer.
    grammar_position: Any = None
    grammar_at: tuple[int, int] = (-1, -1)  # (steps, log epoch) the position was read at
    grammar_answer: str = ""
    grammar_answer_ok: bool = True
    steps: StepLog = field(default_factory=StepLog)
    session_path: str = ""
    revision: Counter[str] = field(default_factory=Counter)
    # The Generate screen's conversation (workbench/tui/controllers/generate.py): the system prompt, and the
    # turns so far in OpenAI form with tool-call arguments as dicts (as transformers passes them).
    # ``conversation_open``: the current generation's message is the conversation's next assistant turn and
    # has not been added to ``conversation`` yet (it is, when the next turn starts).
    system_prompt: str = ""
    conversation: list[dict[str, Any]] = field(default_factory=list)
    conversation_open: bool = False

    def __post_init__(self) -> None:
        if not self.template_text:
            self.template_text = self.source.text

    def bump(self, topic: str) -> None:
        self.revision[topic] += 1

    # ------------------------------------------------------------------ derived (no state change)
    @property
    def spec_edited(self) -> bool:
        return bool(self.spec is not None and self.spec.provenance.edited)

    @property
    def spec_unsaved(self) -> bool:
        """The spec carries hand edits that no export has written yet (a re-analysis would lose them)."""
        return self.spec_edited and self.spec != self.saved_spec

    @property
    def template_sha(self) -> str:
        """sha256 of the template text being edited (the same digest as ``TemplateSource.sha256``)."""
        return hashlib.sha256(self.template_text.encode("utf-8")).hexdigest()

    @property
    def template_dirty(self) -> bool:
        """The template text differs from what the current analysis was computed on."""
        return self.analysis is not None and self.analysis_sha != self.template_sha

    def edited_source(self) -> TemplateSource:
        """The loaded source with the (possibly edited) text in place of the original.

        Everything else (special tokens, named templates) is kept.  An edited text is pinned: a config
        that also names a ``tool_use`` template would otherwise switch to it as soon as tools are passed
        (``TemplateSource.for_tools``), and the person's edits would silently not be rendered.
        """
        if self.template_text == self.source.text:
            return self.source
        return dataclasses.replace(self.source, text=self.template_text, pinned=True)

    def parse_messages(self) -> list[Message]:
        """The conversation being edited; raises ValueError/ChatDataError with a readable message."""
        try:
            data = json.loads(self.messages_json)
        except json.JSONDecodeError as exc:
            raise ValueError(f"messages JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        return load_messages(data)

    def render_inputs(self) -> tuple[list[Any], list[Any] | None]:
        """The conversation and tools exactly as written, for the template preview.

        transformers passes the JSON it is given: tool-call ``arguments`` written as an object reach the
        template as a mapping (a template may iterate them), so the preview must not round-trip them through
        :class:`Message` (which keeps arguments as JSON text).  The data is checked with the same loaders
        first, so a malformed message is still one readable error.
        """
        self.parse_messages()
        tools = self.parse_tools()
        data = json.loads(self.messages_json)
        messages = data["messages"] if isinstance(data, dict) else data
        raw_tools: list[Any] | None = None
        if tools:
            tdata = json.loads(self.tools_json)
            raw_tools = tdata["tools"] if isinstance(tdata, dict) else tdata
        return list(messages), raw_tools

    def parse_tools(self) -> list[Tool]:
        text = self.tools_json.strip()
        if not text:
            return []
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"tools JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        return load_tools(data)
