"""FormatSpec owns its meaning: closed sets from Literal types, marker metadata, derived facts, one loader."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import get_args

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.runtime import spec as spec_module
from workbench.runtime.spec import (
    FormatSpec,
    PromptSpec,
    ReasoningSpec,
    SpecError,
    ToolsSpec,
)
from workbench.spec_io import load_spec
from workbench.testing.reference_specs import QWEN3_LIKE

OUTPUT = "<think>plan</think>\n\nOK."


def test_runtime_tuples_are_the_literal_types_arguments() -> None:
    assert get_args(spec_module.ReasoningMode) == spec_module.REASONING_MODES
    assert get_args(spec_module.ContentMode) == spec_module.CONTENT_MODES
    assert get_args(spec_module.IdPosition) == spec_module.ID_POSITIONS


def test_the_tool_formats_are_none_and_the_format_registry() -> None:
    from workbench.runtime import formats

    assert ("none", *formats.builtin_names()) == spec_module.TOOL_FORMATS
    assert all(formats.family(name) is not None for name in spec_module.TOOL_FORMATS[1:])
    assert ToolsSpec._enums == {"format": spec_module.TOOL_FORMATS, "id_position": spec_module.ID_POSITIONS}


def test_marker_fields_list_every_marker_with_a_description_empty_ones_included() -> None:
    spec = FormatSpec(tools=ToolsSpec(format="tag_with_json", call_start="<tool_call>"))
    found = {m.path: m for m in spec.marker_fields()}
    assert found["tools.call_start"].value == "<tool_call>"
    assert found["tools.call_end"].value == ""
    assert all(m.description for m in found.values())
    assert {"reasoning.start", "reasoning.end", "content.start", "content.end"} <= set(found)
    # Names, enums and flags are not markers.
    assert not {"tools.format", "tools.name_field", "tools.function_namespace"} & set(found)
    assert FormatSpec.marker_field_names() == tuple(found)
    # Every marker path is one with_edit accepts.
    for path in found:
        assert spec.with_edit(**{path: "X"}).marker_fields()[list(found).index(path)].value == "X"


def test_every_string_field_of_a_part_is_a_marker_a_described_field_or_an_enum() -> None:
    for cls in (ReasoningSpec, spec_module.ContentSpec, ToolsSpec):
        for f in fields(cls):
            assert "description" in f.metadata, f"{cls.__name__}.{f.name}"


@pytest.mark.parametrize(
    ("spec", "kwargs", "expected"),
    [
        (FormatSpec(), {}, False),
        (QWEN3_LIKE, {}, QWEN3_LIKE.prompt.thinking_opened),
        (FormatSpec(reasoning=ReasoningSpec("forced_open", "<think>", "</think>")), {}, True),
        (
            FormatSpec(reasoning=ReasoningSpec("forced_open", "<think>", "</think>")),
            {"enable_thinking": False},
            False,
        ),
        (FormatSpec(reasoning=ReasoningSpec("delimiter", "", "</think>")), {}, True),
        (FormatSpec(reasoning=ReasoningSpec("delimiter", "", "")), {}, False),
        (
            FormatSpec(reasoning=ReasoningSpec("tag_based", "<think>", "</think>")),
            {"generation_prompt": "<|im_start|>assistant\n<think>\n"},
            True,
        ),
        (
            FormatSpec(reasoning=ReasoningSpec("tag_based", "<think>", "</think>")),
            {"generation_prompt": "<|im_start|>assistant\n<think>\n\n</think>\n\n"},
            False,
        ),
        (
            FormatSpec(
                reasoning=ReasoningSpec("tag_based", "<think>", "</think>"),
                prompt=PromptSpec(thinking_opened=True, supports_thinking_toggle=True),
            ),
            {"enable_thinking": False},
            False,
        ),
    ],
    ids=[
        "no-reasoning",
        "qwen3",
        "forced-open",
        "forced-open-thinking-off",
        "delimiter",
        "no-end-marker",
        "prompt-opens",
        "prompt-closes",
        "toggle-off",
    ],
)
def test_output_starts_in_reasoning(spec: FormatSpec, kwargs: dict, expected: bool) -> None:
    assert spec.output_starts_in_reasoning(**kwargs) is expected


@pytest.fixture
def analyze_output(tmp_path: Path) -> Path:
    path = tmp_path / "analyze.json"
    path.write_text(json.dumps({"spec": QWEN3_LIKE.to_dict(), "probes": [], "warnings": []}))
    return path


def test_load_spec_accepts_a_spec_analyze_output_and_a_one_element_list(
    tmp_path: Path, analyze_output: Path
) -> None:
    plain = tmp_path / "spec.json"
    plain.write_text(QWEN3_LIKE.to_json())
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([json.loads(analyze_output.read_text())]))
    assert load_spec(plain) == load_spec(analyze_output) == load_spec(listed) == QWEN3_LIKE


def test_load_spec_refuses_several_analyses_in_one_line(tmp_path: Path) -> None:
    many = tmp_path / "many.json"
    many.write_text(json.dumps([{"spec": {}}, {"spec": {}}]))
    with pytest.raises(SpecError, match="a list of 2 analyses"):
        load_spec(many)


def test_parse_and_validate_accept_the_same_analyze_output(tmp_path: Path, analyze_output: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text(OUTPUT)
    parsed = CliRunner().invoke(app, ["parse", "--spec", str(analyze_output), str(out), "--json"])
    assert parsed.exit_code == 0, parsed.output
    assert json.loads(parsed.stdout)["content"].strip() == "OK."
    validated = CliRunner().invoke(app, ["validate", "--spec", str(analyze_output), "--json"])
    assert json.loads(validated.stdout)["source"] == "recorded", validated.output


def test_an_unhandled_workbench_error_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.commands import render as render_cmd
    from workbench.runtime.errors import WorkbenchError

    def boom(*args: object, **kwargs: object) -> None:
        raise WorkbenchError("something the command did not expect\nsecond line")

    monkeypatch.setattr(render_cmd, "parse_kw", boom)  # called outside the command's own input_errors()
    result = CliRunner().invoke(app, ["render", "chatml-think-tools", "--messages", "-"], input="[]")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == ["error: something the command did not expect"]
