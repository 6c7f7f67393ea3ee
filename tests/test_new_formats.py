"""The 2026 format kinds of issue 10, one project template each (templates/new-formats/).

Each template is the project's own text exhibiting one kind: value-dependent argument attributes, a custom
string delimiter, element-style markup, ids before names, a prompt that already opened a block, and
switches other than ``enable_thinking``.  They render exactly as transformers renders them (checked here).
Where today's analysis cannot describe a kind, the validation test is a *strict* xfail: it documents the
gap and turns into a failure the day the kind works, so that the marker is removed with the fix.
"""

from __future__ import annotations

import pytest

from tests.conftest import PROJECT_TEMPLATES
from workbench.template.source import load_template
from workbench.validate import validate

NEW_FORMATS = PROJECT_TEMPLATES / "new-formats"

#: template stem -> why today's spec cannot describe it (None: it validates today).
KINDS: dict[str, str | None] = {
    "typed-attr-args": None,
    "delimited-strings": None,
    "element-markup": None,
    "id-first-calls": None,
    "opened-answer": None,
    "effort-switches": None,
    "mixture": None,
    "numbered-calls": None,
    "keyed-lines": None,
    "keyword-calls": None,
    # Issue 18's classes: markers spelled in any way, and the turn as headed messages.
    "headed-channels": None,
    "role-switch": None,
    "model-headers": None,
    "element-channels": None,
    "channel-thought": None,
    "odd-markers": None,
    "bare-words": None,
    "assistant-prefix": None,
    # Session 4's unseen templates: tools written before the last user turn only, an answer closed by the
    # end token, string values written raw between quotes in a code block.
    "tools-last-user": None,
    "answer-end-token": None,
    "raw-quoted-code": None,
    # Session 14: markers that share the head and tail of an HTML comment, raw values ended by a line break.
    "comment-lines": None,
}

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
CONVERSATION = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "reasoning_content": "Look it up.",
        "content": "Checking.",
        "tool_calls": [
            {"id": "c1", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}},
            {"id": "c2", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
]


def test_every_kind_has_a_template() -> None:
    assert sorted(p.stem for p in NEW_FORMATS.glob("*.jinja")) == sorted(KINDS)


@pytest.mark.parametrize("stem", sorted(KINDS))
def test_renders_exactly_as_transformers(stem: str) -> None:
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from workbench.template.render import render

    text = (NEW_FORMATS / f"{stem}.jinja").read_text(encoding="utf-8")
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=model, bos_token="<bos>", chat_template=text)
    for kwargs in ({}, {"enable_thinking": False}, {"reasoning_effort": "none", "clear_thinking": False}):
        expected = tok.apply_chat_template(
            CONVERSATION, tools=[WEATHER], tokenize=False, add_generation_prompt=True, **kwargs
        )
        ours = render(
            text, CONVERSATION, tools=[WEATHER], add_generation_prompt=True, bos_token="<bos>", **kwargs
        )
        assert ours == expected


@pytest.mark.parametrize(
    "stem",
    [
        pytest.param(stem, marks=pytest.mark.xfail(strict=True, reason=f"issue 10: {why}")) if why else stem
        for stem, why in sorted(KINDS.items())
    ],
)
def test_validates(stem: str) -> None:
    report = validate(load_template(NEW_FORMATS / f"{stem}.jinja"))
    assert report.validated, report.summary


@pytest.mark.parametrize("stem", sorted(KINDS))
def test_validation_never_blames_the_template_for_what_it_renders(stem: str) -> None:
    """Every one of these templates renders content, reasoning (where it has any) and calls inside the
    assistant turn; where the analysed spec cannot read them, validation says the *spec* fails, never
    "unsupported by the template" for content or tool calls."""
    report = validate(load_template(NEW_FORMATS / f"{stem}.jinja"))
    features = report.features()
    for name in ("content", "tool_call", "parallel_calls"):
        assert features[name]["status"] != "unsupported", (name, features[name]["reason"])
    if not report.validated:
        assert "the spec cannot express" in report.summary()
