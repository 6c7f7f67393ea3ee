"""Hand-written FormatSpecs that several parsing tests use, defined once.

Each spec is written from its model family's published output format, never from the analyzer, so a change
in the analyzer cannot change what the parsing tests prove.  Where a spec is a reference spec of
``workbench.testing.reference_specs`` with a deliberate difference, it is built from that spec and the
difference is spelled out; the parsing tests care only about the tool-call markers, so most specs here set
nothing else.
"""

from __future__ import annotations

from dataclasses import replace

from workbench.runtime.spec import FormatSpec, ToolsSpec
from workbench.testing.reference_specs import DEEPSEEK_V31_LIKE, XML_TAGGED

# Hermes / Qwen 2.5: one JSON object per <tool_call> section (the newline before the closing tag is the
# parser's to skip, so it is not part of the marker).
HERMES = FormatSpec(
    tools=ToolsSpec(format="json_native", section_start="<tool_call>\n", section_end="</tool_call>")
)

# Qwen3-Coder's tagged calls as the reference spec writes them (the newline before </parameter> is part of
# the value end marker), tools only and without parallel calls.
CODER_NEWLINE_IN_VALUE_END = FormatSpec(tools=replace(XML_TAGGED.tools, parallel=False))

# The same calls with the value end marker written without its leading newline: the value then keeps one
# newline of padding on each side, which the parser trims.
CODER = FormatSpec(tools=replace(CODER_NEWLINE_IN_VALUE_END.tools, arg_value_suffix="</parameter>\n"))

# DeepSeek V3.1's call markers as the reference spec writes them, tools only and without parallel calls.
DEEPSEEK_V31 = FormatSpec(tools=replace(DEEPSEEK_V31_LIKE.tools, parallel=False))

# GLM 4.5: the name right after the call marker, then <arg_key>/<arg_value> pairs.
GLM = FormatSpec(
    tools=ToolsSpec(
        format="tag_with_tagged",
        call_start="<tool_call>",
        call_end="</tool_call>",
        name_suffix="\n",
        arg_name_prefix="<arg_key>",
        arg_name_suffix="</arg_key>\n",
        arg_value_prefix="<arg_value>",
        arg_value_suffix="</arg_value>\n",
    )
)

# Mistral (v11 tokenizer): [TOOL_CALLS]name[ARGS]{...}, the [ARGS] marker optional in older outputs.
MISTRAL_V11 = FormatSpec(
    tools=ToolsSpec(format="tag_with_json", call_start="[TOOL_CALLS]", args_start="[ARGS]")
)

# Mistral Nemo: a JSON array after [TOOL_CALLS], each call carrying its own string id.
MISTRAL_NEMO = FormatSpec(
    tools=ToolsSpec(format="json_native", section_start="[TOOL_CALLS]", id_field="id", array_wrapped=True)
)

# Kimi-K2: the call id is `functions.NAME:N`, the name read through the function namespace.
KIMI = FormatSpec(
    tools=ToolsSpec(
        format="tag_with_json",
        section_start="<|tool_calls_section_begin|>",
        section_end="<|tool_calls_section_end|>",
        call_start="<|tool_call_begin|>",
        call_end="<|tool_call_end|>",
        name_suffix="<|tool_call_argument_begin|>",
        function_namespace="functions.",
    )
)
