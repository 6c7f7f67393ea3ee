"""The analyzer on the 35 shared templates, checked against llama.cpp's data (skips without ../shared).

Expected values come from llama.cpp: the markers its auto-parser printed (summary.json) where they are not
among its known mistakes, and the real model outputs of its parse cases (conformance/llamacpp/*.json).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pytest

from tests.conftest import SHARED
from tests.test_analysis_helpers import shared, shared_names
from workbench.analysis.llamacpp import CORRECTIONS
from workbench.runtime.spec import FormatSpec

pytestmark = pytest.mark.shared
SUMMARY = SHARED / "conformance" / "llamacpp-analysis" / "summary.json"
CASES = SHARED / "conformance" / "llamacpp"
NAMES = shared_names() or ["(no ../shared)"]
CORRECTED = {(c.template, c.field) for c in CORRECTIONS}


@lru_cache(maxsize=1)
def summary() -> dict[str, Any]:
    if not SUMMARY.is_file():
        pytest.skip("../shared not present")
    return json.loads(SUMMARY.read_text(encoding="utf-8"))["templates"]


def llama(name: str) -> dict[str, Any]:
    entry = summary()[name]
    return {**entry["markers"], **entry["markers_not_printed_by_tools"]}


@pytest.mark.parametrize("name", NAMES)
def test_every_shared_template_yields_a_spec_without_phase_failures(name: str) -> None:
    analysis = shared(name)
    assert FormatSpec.from_json(analysis.spec.to_json()) == analysis.spec
    assert not [w for w in analysis.warnings if "phase failed" in w]
    for probe in analysis.probes:
        assert probe.diff is not None or probe.error or probe.outcome, probe.id


def _strip(s: str) -> str:
    return s.strip()


def _joined(*parts: str) -> str:
    """Marker text joined, whitespace left out (the parsers match it loosely)."""
    return "".join("".join(parts).split())


@pytest.mark.parametrize("name", NAMES)
def test_reasoning_markers_match_llamacpp_where_it_is_right(name: str) -> None:
    spec = shared(name).spec
    theirs = llama(name)
    if (name, "reasoning") in CORRECTED or summary()[name]["reasoning_mode"] == "NONE":
        pytest.skip("llama.cpp's reasoning result is corrected or empty for this template")
    assert _strip(spec.reasoning.start) == _strip(theirs["reasoning_start"])
    assert _strip(spec.reasoning.end) == _strip(theirs["reasoning_end"])


@pytest.mark.parametrize("name", NAMES)
def test_the_tool_trigger_matches_llamacpp_where_it_is_right(name: str) -> None:
    """The first marker of a call (where a lazy grammar engages) is the same as llama.cpp's."""
    spec = shared(name).spec
    theirs = llama(name)
    if (name, "tools") in CORRECTED or summary()[name]["tool_format"] == "NONE":
        pytest.skip("llama.cpp's tool result is corrected or empty for this template")
    expected = theirs["tool_section_start"] or theirs["per_call_start"] or theirs["func_name_prefix"]
    assert _strip(spec.tools.trigger) == _strip(expected)


JSON_FIELDS = ("name_field", "args_field", "id_field", "gen_id_field")


@pytest.mark.parametrize("name", NAMES)
def test_json_call_fields_match_llamacpp(name: str) -> None:
    spec = shared(name).spec
    if summary()[name]["tool_format"] != "JSON_NATIVE" or spec.tools.format != "json_native":
        pytest.skip("not a JSON-native template")
    theirs = llama(name)
    t = spec.tools
    for field in JSON_FIELDS:
        assert getattr(t, field) == theirs[field], field
    assert t.fun_name_is_key == theirs["fun_name_is_key"]
    assert t.array_wrapped == theirs["tools_array_wrapped"]


TAGGED = ("Qwen3-Coder", "StepFun3.5-Flash", "ByteDance-Seed-OSS", "GLM-4.6", "MiniMax-M2")


@pytest.mark.parametrize("name", TAGGED)
def test_tagged_argument_markers_match_llamacpp(name: str) -> None:
    t = shared(name).spec.tools
    theirs = llama(name)
    assert t.format == "tag_with_tagged"
    # The text a call writes before its name, and after its arguments.  Which field holds which piece of
    # one literal (``<invoke name="`` opens the call, or prefixes the name) is no comparison's to say
    # (issue 18: no marker shapes); llama.cpp splits them by their brackets.
    assert _joined(t.call_start, t.name_prefix) == _joined(
        theirs["per_call_start"], theirs["func_name_prefix"]
    )
    assert _joined(t.func_close, t.call_end) == _joined(theirs["func_close"], theirs["per_call_end"])
    assert _strip(t.arg_name_prefix) == _strip(theirs["arg_name_prefix"])
    # llama.cpp splits '">' / "</arg_key>\n<arg_value>" between name suffix and value prefix its own way.
    assert _strip(t.arg_name_suffix + t.arg_value_prefix) == _strip(
        theirs["arg_name_suffix"] + theirs["arg_value_prefix"]
    )
    assert _strip(t.arg_value_suffix) == _strip(theirs["arg_value_suffix"])


# ----------------------------------------------------------------------------------------- real outputs
def _cases() -> list[Any]:
    if not CASES.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="../shared not present"))]
    out = []
    for path in sorted(CASES.glob("*.json")):
        if path.name.startswith("_"):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        name = data["template"].removesuffix(".jinja")
        for case in data["cases"]:
            out.append(pytest.param(name, case, id=case["name"]))
    return out


@pytest.mark.parametrize(("name", "case"), _cases())
def test_model_outputs_contain_the_markers_the_spec_names(name: str, case: dict[str, Any]) -> None:
    """A real tool call contains the spec's trigger; real reasoning ends with the spec's end marker."""
    spec = shared(name).spec
    text, expect = case["input"], case["expect"]
    if spec.layout.headed:
        # Headed messages: headers are read as attribute sets (the recipient may come before or after the
        # channel), so the literal call header need not appear; the opener or the channel literal does.
        lay = spec.layout
        assert any(_strip(x) in text for x in (lay.opener, lay.channel, spec.prompt.output_prefix) if x)
        return
    if expect["tool_calls"] and spec.tools.trigger:
        assert _strip(spec.tools.trigger) in text
    if expect["reasoning_content"] and spec.reasoning.mode != "none":
        assert _strip(spec.reasoning.end) in text


def test_deepseek_v31_calls_have_no_argument_wrappers() -> None:
    """Parse case: '<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"city": "XYZCITY"}<｜tool▁call▁end｜>'."""
    t = shared("deepseek-ai-DeepSeek-V3.1").spec.tools
    assert (t.call_start, t.name_prefix, t.name_suffix, t.args_start, t.call_end) == (
        "<｜tool▁call▁begin｜>",
        "",
        "<｜tool▁sep｜>",
        "",
        "<｜tool▁call▁end｜>",
    )


def test_kimi_calls_use_the_namespace_label_as_id() -> None:
    """Parse case: 'functions.special_function:0' is the call's id; the name sits inside it."""
    t = shared("moonshotai-Kimi-K2").spec.tools
    assert t.function_namespace == "functions."
    assert (t.call_start, t.name_suffix, t.call_end) == (
        "<|tool_call_begin|>",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
    )


def test_mistral_nemo_calls_are_an_array_with_ids() -> None:
    """Parse case: '[TOOL_CALLS][{"name": ..., "arguments": ..., "id": "123456789"}]'."""
    t = shared("mistralai-Mistral-Nemo-Instruct-2407").spec.tools
    assert (t.section_start, t.array_wrapped, t.id_field) == ("[TOOL_CALLS]", True, "id")
    assert t.parameter_order == ("name", "arguments", "id")


def test_command_r7b_numbers_its_calls_and_wraps_answers() -> None:
    """Parse cases: <|START_RESPONSE|>...<|END_RESPONSE|> answers; "tool_call_id": "0" is generated."""
    spec = shared("CohereForAI-c4ai-command-r7b-12-2024-tool_use").spec
    assert (spec.content.mode, spec.content.start, spec.content.end) == (
        "always_wrapped",
        "<|START_RESPONSE|>",
        "<|END_RESPONSE|>",
    )
    assert spec.tools.gen_id_field == "tool_call_id"
    assert spec.tools.parameter_order == ("tool_call_id", "tool_name", "parameters")
    assert "<|END_RESPONSE|>" not in spec.end_markers


def test_functionary_v31_call_turns_end_with_eom() -> None:
    spec = shared("meetkai-functionary-medium-v3.1").spec
    t = spec.tools
    # "<function=NAME>{json}</function>" (llama.cpp: per_call_start "<function=", per_call_end "</function>")
    assert (t.call_start + t.name_prefix, t.name_suffix, t.func_close + t.call_end) == (
        "<function=",
        ">",
        "</function>",
    )
    assert {"<|eot_id|>", "<|eom_id|>"} <= set(spec.end_markers)


def test_llama_31_refuses_parallel_calls() -> None:
    analysis = shared("meta-llama-Llama-3.1-8B-Instruct")
    assert not analysis.spec.tools.parallel
    t2 = next(p for p in analysis.probes if p.id == "T2")
    assert t2.error and "single tool-calls" in t2.error
