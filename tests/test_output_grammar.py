"""One output grammar: the structural-tag export and a serving plug-in build the same document.

Both call the runtime's one assembler (``runtime/grammar/assembler.py``).  For every spec in ``specs/``, every
hand-written reference spec and every project template (analysed), and every tool choice, the tag the
``structural-tag`` export writes and the tag a plug-in builds for a request with the same tools are compared
as JSON documents; a spec the export cannot express is one the plug-in refuses too.  Before the assembler
they differed for every spec with a reasoning start marker: the export did not let whitespace precede the
reasoning block, so GLM-4.7's ``\\n<think>...`` output was rejected by the exported tag and accepted by the
plug-in's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import xgrammar as xgr

from tests.conftest import PROJECT_TEMPLATES
from workbench.export.structural_tag import build_structural_tag
from workbench.proofs import ExportError
from workbench.runtime.grammar import GrammarError
from workbench.runtime.serving.tags import request_tag
from workbench.runtime.spec import FormatSpec
from workbench.spec_io import load_spec
from workbench.testing import reference_specs
from workbench.validate import ROUND_TRIP_TOOLS

REPO = Path(__file__).resolve().parents[1]
SPEC_FILES = sorted((REPO / "specs").glob("*.json"))
REFERENCE = {name: value for name, value in vars(reference_specs).items() if isinstance(value, FormatSpec)}
TOOLS = list(ROUND_TRIP_TOOLS[:2])
OPENAI_TOOLS = [t.to_openai() for t in TOOLS]
# every way a request names its tool choice (``forced`` comes with the one tool it forces)
CHOICES: tuple[tuple[str, list[Any]], ...] = (
    ("auto", TOOLS),
    ("required", TOOLS),
    ("none", TOOLS),
    (TOOLS[0].name, TOOLS),
    ("forced", TOOLS[1:]),
)
GLM_OUTPUT = "\n<think>I might write <tool_call> later</think>Hi."


def exported(spec: FormatSpec, choice: str, tools: list[Any]) -> dict[str, Any] | None:
    try:
        return build_structural_tag(spec, tools, choice)
    except ExportError:  # Unsupported included: the spec has no tool calls or no grammar
        return None


def plugin(spec: FormatSpec, choice: str, tools: list[Any]) -> dict[str, Any] | None:
    try:
        return request_tag(spec, [t.to_openai() for t in tools], choice, reasoning=True)
    except GrammarError:
        return None


def assert_same_documents(spec: FormatSpec) -> int:
    """Compare the two tags for every choice; how many choices gave a tag."""
    built = 0
    for choice, tools in CHOICES:
        ours, theirs = exported(spec, choice, tools), plugin(spec, choice, tools)
        assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True), choice
        built += ours is not None
    return built


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_export_and_plugin_build_the_same_tag_for_every_spec_file(path: Path) -> None:
    spec = load_spec(path)
    built = assert_same_documents(spec)
    assert built == (len(CHOICES) if spec.tools.format != "none" else 0)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_export_and_plugin_build_the_same_tag_for_every_reference_spec(name: str) -> None:
    assert assert_same_documents(REFERENCE[name]) == len(CHOICES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    sorted([*PROJECT_TEMPLATES.glob("*.jinja"), *(PROJECT_TEMPLATES / "new-formats").glob("*.jinja")]),
    ids=lambda p: p.stem,
)
def test_export_and_plugin_build_the_same_tag_for_every_project_template(path: Path) -> None:
    from workbench.formats import analyze
    from workbench.template.source import load_template

    assert_same_documents(analyze(load_template(path)).spec)


def accepts(tag: dict[str, Any], text: str) -> bool:
    compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([])).compile_structural_tag(json.dumps(tag))
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return bool(matcher.accept_string(text)) and matcher.is_completed()


def test_both_tags_accept_glm47_whitespace_before_its_reasoning_block() -> None:
    spec = load_spec(REPO / "specs" / "glm47.json")
    ours, theirs = exported(spec, "auto", TOOLS), plugin(spec, "auto", TOOLS)
    assert ours is not None and theirs is not None
    assert accepts(ours, GLM_OUTPUT) and accepts(theirs, GLM_OUTPUT)
    # the block itself still holds: a tool-call marker inside reasoning is reasoning, outside it a call
    assert not accepts(ours, "\n<think>plan</think>Hi <tool_call> later.")


def test_a_forced_call_names_exactly_one_tool() -> None:
    spec = load_spec(REPO / "specs" / "glm47.json")
    with pytest.raises(GrammarError, match="forced call names one tool"):
        request_tag(spec, OPENAI_TOOLS, "forced")
    with pytest.raises(GrammarError, match="not one of the tools"):
        request_tag(spec, OPENAI_TOOLS, "no_such_tool")
