"""Unit tests for the TUI's pure helpers: the step log, event folding, replay, highlighting, geometry."""

from __future__ import annotations

import pytest

from workbench.generation.step import Step
from workbench.runtime.events import Event
from workbench.runtime.parsing import StreamParser
from workbench.runtime.spec import FormatSpec, ReasoningSpec, ToolsSpec
from workbench.tui.steps import ControlRefused, ReplayDriver, StepLog
from workbench.tui.widgets.decode import resample
from workbench.tui.widgets.jinja_editor import jinja_highlights
from workbench.tui.widgets.spans import highlight_markers
from workbench.tui.workspace import RenderKwargs


def _step(i: int, text: str = "x", kind: str = "content", tool_index: int | None = None) -> Step:
    return Step(
        index=i,
        token_id=i,
        token_text=text,
        allowed_count=1,
        vocab_size=10,
        events=(Event(kind, text, tool_index),),
    )


def test_step_log_view_returns_only_unseen_steps_until_a_rewind_forces_a_rebuild() -> None:
    log = StepLog()
    for i in range(5):
        log.append(_step(i))
    first = log.view_since(0, log.epoch)
    assert [s.index for s in first.new] == [0, 1, 2, 3, 4] and not first.rebuilt
    log.append(_step(5))
    second = log.view_since(first.total, first.epoch)
    assert [s.index for s in second.new] == [5] and not second.rebuilt
    log.truncate(3)
    third = log.view_since(second.total, second.epoch)
    assert third.rebuilt and [s.index for s in third.new] == [0, 1, 2]


def test_truncate_beyond_the_end_keeps_the_epoch() -> None:
    log = StepLog()
    log.append(_step(0))
    epoch = log.epoch
    assert log.truncate(5) == 1
    assert log.epoch == epoch


def test_replay_driver_steps_rewinds_and_refuses_live_only_controls() -> None:
    steps = [_step(0, "He"), _step(1, "llo")]
    drv = ReplayDriver(steps, lambda: StreamParser(FormatSpec()))
    assert drv.step() is steps[0]
    assert drv.message().content == "He"
    assert drv.step() is steps[1] and drv.finished
    assert drv.step() is None
    assert drv.rewind(1) == 1 and not drv.finished
    assert drv.message().content == "He"
    with pytest.raises(ControlRefused, match="cannot be forced"):
        drv.force(3)
    with pytest.raises(ControlRefused):
        drv.set_constrained(False)


def test_replay_shows_the_parsed_arguments_of_a_tagged_call_not_the_raw_tag_text() -> None:
    # Qwen3-Coder style: the argument value is raw text between tags; the message must carry it as JSON.
    from workbench.testing.reference_specs import XML_TAGGED

    pieces = [
        "<tool_call>\n<function=get_weather>\n<parameter=city>\n",
        "Paris",
        "\n</parameter>\n",
        "</function>\n</tool_call>",
    ]
    steps = [_step(i, text, "tool_args", 0) for i, text in enumerate(pieces)]
    drv = ReplayDriver(steps, lambda: StreamParser(XML_TAGGED))
    while drv.step() is not None:
        pass
    (call,) = drv.message().tool_calls
    assert call.name == "get_weather"
    assert call.arguments_value() == {"city": "Paris"}


def test_jinja_highlights_use_byte_offsets_per_line() -> None:
    marks = jinja_highlights("é{{ x }}\n{% if y %}")
    # "é" is two bytes in UTF-8, so the "{{" tag starts at byte 2 on line 0
    assert (2, 4, "tag") in marks[0]
    assert (3, 5, "keyword") in marks[1]


def test_highlight_markers_prefers_the_longer_of_overlapping_markers() -> None:
    text = "<|im_start|>user<|im_end|>"
    out = highlight_markers(text, ["<|im_start|>", "<|im_", "<|im_end|>"])
    styled = {(span.start, span.end) for span in out.spans}
    assert (0, 12) in styled and (16, 26) in styled
    assert (16, 21) not in styled  # the short marker never splits the long one


def test_resample_averages_cells_and_stretches_short_input() -> None:
    assert resample([0.0, 1.0, 1.0, 0.0], 2) == [0.5, 0.5]
    assert resample([1.0], 3) == [1.0, 1.0, 1.0]
    assert resample([], 4) == []


def test_render_kwargs_parse_extra_pairs_as_json_and_reject_malformed_ones() -> None:
    kw = RenderKwargs(
        add_generation_prompt=True, reasoning_effort="high", extra="tools_in_user=true n=3 tag=x"
    )
    out = kw.to_kwargs()
    assert out["tools_in_user"] is True and out["n"] == 3 and out["tag"] == "x"
    assert out["reasoning_effort"] == "high" and out["add_generation_prompt"] is True
    with pytest.raises(ValueError, match="key=value"):
        RenderKwargs(extra="novalue").to_kwargs()


def test_spec_rows_flag_only_fields_changed_by_hand() -> None:
    from workbench.tui.screens.analysis import spec_rows

    original = FormatSpec(
        reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"),
        tools=ToolsSpec(format="tag_with_json", call_start="<tool_call>"),
    )
    edited = original.with_edit(**{"tools.call_start": "<call>\n"})
    rows = {r.path: (r.shown, r.edited) for r in spec_rows(edited, original)}
    assert rows["tools.call_start"] == ("<call>\\n", True)
    assert rows["reasoning.start"] == ("<think>", False)
    assert rows["tools.call_end"] == ("", False)  # empty markers are listed too


def test_tui_command_rejects_a_missing_template_or_session_with_one_line() -> None:
    from typer.testing import CliRunner

    from workbench.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["tui", "no-such-template.jinja"])
    assert result.exit_code == 1
    assert "template not found" in result.output
    result = runner.invoke(app, ["tui", "--session", "no-such-session.json"])
    assert result.exit_code == 1
    assert "session file not found" in result.output


def test_an_edited_template_is_what_renders_even_when_the_config_names_a_tool_use_template() -> None:
    from workbench.template.source import TemplateSource
    from workbench.tui.workspace import Workspace

    source = TemplateSource(
        text="default {{ messages[0].content }}",
        name="cfg",
        origin="tests",
        named={"default": "default {{ messages[0].content }}", "tool_use": "tool_use"},
        selected="default",
        special_tokens={"bos_token": "<s>"},
    )
    ws = Workspace(source=source)
    assert ws.edited_source() is source  # unedited: transformers' switch to tool_use still applies
    assert ws.edited_source().for_tools(True).text == "tool_use"
    ws.template_text = "edited {{ messages[0].content }}"
    edited = ws.edited_source()
    assert edited.for_tools(True).text == "edited {{ messages[0].content }}"
    assert edited.render_kwargs() == {"bos_token": "<s>"}  # the config's tokens are kept
