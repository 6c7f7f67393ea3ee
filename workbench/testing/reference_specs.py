"""Hand-written FormatSpecs for five format families: fixed points that do not depend on the analyzer.

Grammar and engine tests, the step-overhead benchmark and the docs use these, so a change in the analyzer
never silently changes what the grammar tests prove.  Each one is written from the model family's published
output format (the same markers the project templates render).
"""

from __future__ import annotations

from workbench.formats.harmony.reference import HARMONY
from workbench.runtime.spec import (
    ContentSpec,
    EnvelopeMember,
    FormatSpec,
    PromptSpec,
    ReasoningSpec,
    ReplyEnvelope,
    ToolsSpec,
)

QWEN3_LIKE = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"),
    tools=ToolsSpec(
        format="json_native",
        section_start="<tool_call>\n",
        section_end="\n</tool_call>",
        name_field="name",
        args_field="arguments",
        parameter_order=("name", "arguments"),
        parallel=True,
    ),
    prompt=PromptSpec(
        generation_prompt="<|im_start|>assistant\n",
        thinking_closed_when_disabled=True,
        supports_thinking_toggle=True,
    ),
    preserved_tokens=("<think>", "</think>", "<tool_call>", "</tool_call>"),
    eos_token="<|im_end|>",
    end_markers=("<|im_end|>",),
)

DEEPSEEK_V31_LIKE = FormatSpec(
    reasoning=ReasoningSpec(mode="forced_open", start="<think>", end="</think>"),
    tools=ToolsSpec(
        format="tag_with_json",
        section_start="<｜tool▁calls▁begin｜>",
        section_end="<｜tool▁calls▁end｜>",
        call_start="<｜tool▁call▁begin｜>",
        call_end="<｜tool▁call▁end｜>",
        name_suffix="<｜tool▁sep｜>",
        parallel=True,
    ),
    prompt=PromptSpec(generation_prompt="<｜Assistant｜><think>", thinking_opened=True),
    eos_token="<｜end▁of▁sentence｜>",
    end_markers=("<｜end▁of▁sentence｜>",),
)

MISTRAL_LIKE = FormatSpec(
    tools=ToolsSpec(
        format="json_native",
        section_start="[TOOL_CALLS]",
        array_wrapped=True,
        name_field="name",
        args_field="arguments",
        id_field="id",
        parameter_order=("name", "arguments", "id"),
        parallel=True,
    ),
    eos_token="</s>",
    end_markers=("</s>",),
)

XML_TAGGED = FormatSpec(
    tools=ToolsSpec(
        format="tag_with_tagged",
        call_start="<tool_call>\n",
        call_end="</tool_call>",
        name_prefix="<function=",
        name_suffix=">\n",
        func_close="</function>\n",
        arg_name_prefix="<parameter=",
        arg_name_suffix=">\n",
        arg_value_suffix="\n</parameter>\n",
        parallel=True,
    ),
    prompt=PromptSpec(generation_prompt="<|im_start|>assistant\n"),
    eos_token="<|im_end|>",
    end_markers=("<|im_end|>",),
)

# Functionary v3.2: ``>>>all\n`` text, ``>>>NAME\n{json}`` calls; the prompt writes the first ``>>>``.
# Kept out of REFERENCE_SPECS: those are exercised with a ChatML prompt, which does not write that ``>>>``.
FUNCTIONARY_V32_LIKE = FormatSpec(
    content=ContentSpec(mode="always_wrapped", start=">>>all\n"),
    tools=ToolsSpec(
        format="recipient", name_prefix=">>>", name_suffix="\n", call_separator=">>>", parallel=True
    ),
    prompt=PromptSpec(
        generation_prompt="<|start_header_id|>assistant<|end_header_id|>\n\n>>>", output_prefix=">>>"
    ),
    eos_token="<|eot_id|>",
    end_markers=("<|eot_id|>",),
)

REFERENCE_SPECS: dict[str, FormatSpec] = {
    "qwen3-like": QWEN3_LIKE,
    "deepseek-v31-like": DEEPSEEK_V31_LIKE,
    "mistral-like": MISTRAL_LIKE,
    "xml-tagged": XML_TAGGED,
    HARMONY.tools.format: HARMONY,
}

#: xLAM's reply, one JSON object (spec v6): ``{"thought": TEXT, "tool_calls": [CALL, ...]}`` then ``</s>``.
XLAM_LIKE = FormatSpec(
    tools=ToolsSpec(format="json_native", parallel=True),
    envelope=ReplyEnvelope(
        members=(
            EnvelopeMember("thought", "content", ('""',)),
            EnvelopeMember("tool_calls", "calls", ("[]",)),
        )
    ),
    end_markers=("</s>",),
)
