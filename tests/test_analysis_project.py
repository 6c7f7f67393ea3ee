"""The analyzer on the project's own templates (templates/*.jinja): one family each.

Every expectation below is read off the template's text (its header comment documents the format and the
body writes it), not off the analyzer's output.
"""

from __future__ import annotations

from tests.test_analysis_helpers import project
from workbench.analysis import PROBES
from workbench.runtime.spec import FormatSpec


def test_chatml_think_tools_is_qwen3_like() -> None:
    spec = project("chatml-think-tools").spec
    # "<think>\nREASONING\n</think>\n\n" before the answer; enable_thinking=false pre-fills an empty block.
    assert (spec.reasoning.mode, spec.reasoning.start, spec.reasoning.end) == (
        "forced_closed",
        "<think>",
        "</think>\n\n",
    )
    assert spec.prompt.generation_prompt == "<|im_start|>assistant\n"
    assert spec.prompt.suffix_when_not_thinking == "<think>\n\n</think>\n\n"
    assert spec.prompt.thinking_closed_when_disabled and not spec.prompt.thinking_opened
    assert spec.prompt.supports_thinking_toggle
    # One "<tool_call>\n{...}\n</tool_call>" block per call, blocks separated by "\n".
    t = spec.tools
    assert (t.format, t.call_start, t.call_end, t.call_separator) == (
        "json_native",
        "<tool_call>\n",
        "</tool_call>",
        "\n",
    )
    assert (t.name_field, t.args_field, t.parallel) == ("name", "arguments", True)
    assert not t.section_start and not t.array_wrapped
    assert "<|im_end|>" in spec.end_markers


def test_deepseek_v31_like_opens_think_only_when_thinking() -> None:
    spec = project("deepseek-v31-like").spec
    assert (spec.reasoning.mode, spec.reasoning.start, spec.reasoning.end) == (
        "forced_open",
        "<think>",
        "</think>",
    )
    p = spec.prompt
    # "<｜Assistant｜><think>" when thinking is on, "<｜Assistant｜></think>" when off (the default).
    assert p.thinking_opened and p.thinking_closed_when_disabled and p.supports_thinking_toggle
    assert (p.suffix_when_thinking, p.suffix_when_not_thinking) == ("<think>", "</think>")
    assert p.generation_prompt == "<｜Assistant｜></think>"
    t = spec.tools
    assert t.format == "tag_with_json"
    assert (t.section_start, t.section_end) == ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
    assert (t.call_start, t.call_end, t.name_suffix) == (
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁sep｜>",
    )
    assert t.parallel
    assert "<｜end▁of▁sentence｜>" in spec.end_markers


def test_mistral_tool_calls_have_ids_between_name_and_arguments() -> None:
    spec = project("mistral-tool-calls").spec
    t = spec.tools
    # "[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}", once per call.
    assert (t.format, t.call_start) == ("tag_with_json", "[TOOL_CALLS]")
    assert (t.id_position, t.id_prefix, t.args_start) == ("between_func_and_args", "[CALL_ID]", "[ARGS]")
    assert t.parallel
    assert spec.reasoning.mode == "none"


def test_llama3_json_calls_are_bare_json_with_parameters() -> None:
    spec = project("llama3-json").spec
    t = spec.tools
    assert (t.format, t.name_field, t.args_field) == ("json_native", "name", "parameters")
    assert not (t.section_start or t.call_start or t.array_wrapped)
    assert t.call_separator == "\n"  # one object per line for parallel calls
    assert spec.prompt.generation_prompt == "<|start_header_id|>assistant<|end_header_id|>\n\n"
    assert "<|eot_id|>" in spec.end_markers


def test_xml_tagged_args_markers_keep_their_newlines() -> None:
    t = project("xml-tagged-args").spec.tools
    # "<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>"
    assert t.format == "tag_with_tagged"
    assert (t.call_start, t.call_end) == ("<tool_call>\n", "</tool_call>")
    assert (t.name_prefix, t.name_suffix, t.func_close) == ("<function=", ">\n", "</function>\n")
    assert (t.arg_name_prefix, t.arg_name_suffix) == ("<parameter=", ">\n")
    assert (t.arg_value_prefix, t.arg_value_suffix) == ("", "\n</parameter>\n")
    assert t.parallel


def test_harmony_channels_is_learned_as_headed_messages() -> None:
    """Issue 18: no detector knows Harmony; the analysis learns its messages from the renders."""
    spec = project("harmony-channels").spec
    lay = spec.layout
    assert (lay.opener, lay.closer, lay.channel) == ("<|start|>assistant", "<|message|>", "<|channel|>")
    # Learned: analysis and final; the Harmony protocol supplement adds the commentary preamble (content).
    assert [(m.kind, m.header) for m in lay.messages] == [
        ("reasoning", "<|channel|>analysis<|message|>"),
        ("content", "<|channel|>final<|message|>"),
        ("content", "<|channel|>commentary<|message|>"),
    ]
    # "<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{json}<|call|>"
    assert spec.tools.call_start == "<|start|>assistant<|channel|>commentary to=functions."
    assert spec.tools.call_end == "<|call|>"
    assert spec.reasoning.start == "<|channel|>analysis<|message|>"
    assert spec.content.start == "<|channel|>final<|message|>"
    assert spec.prompt.generation_prompt == spec.prompt.output_prefix == "<|start|>assistant"


def test_pythonic_calls_is_detected_as_pythonic() -> None:
    t = project("pythonic-calls").spec.tools
    # "<|tool_call_start|>[get_weather(city="Paris", days=2), get_time()]<|tool_call_end|>"
    assert t.format == "pythonic"
    assert (t.section_start, t.section_end, t.array_wrapped) == (
        "<|tool_call_start|>",
        "<|tool_call_end|>",
        True,
    )
    assert (t.call_separator, t.parallel) == (", ", True)


def test_every_probe_of_the_table_is_reported_with_its_question() -> None:
    analysis = project("chatml-think-tools")
    assert [p.id for p in analysis.probes] == [p.id for p in PROBES]
    t1 = next(p for p in analysis.probes if p.id == "T1")
    assert t1.diff is not None and "foofoo" in t1.diff.right and t1.render_b is not None
    assert t1.outcome  # the decision is written next to the probe


def test_analysis_json_is_the_cli_contract_and_the_spec_round_trips() -> None:
    analysis = project("xml-tagged-args")
    data = analysis.to_dict()
    assert {"spec", "probes", "warnings"} <= set(data)
    assert FormatSpec.from_dict(data["spec"]) == analysis.spec
    prov = analysis.spec.provenance
    assert prov.template_sha256 == analysis.source.sha256 and prov.template_name == "xml-tagged-args"
    assert "<tool_call>" in analysis.spec.preserved_tokens
