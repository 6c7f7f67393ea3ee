"""JSON_NATIVE: each call is a JSON object (``{"name": ..., "arguments": {...}}``), behind markers or bare.

Hermes/Qwen 2.5 (``<tool_call>{...}</tool_call>``), Llama 3.x (a bare object), Mistral
(``[TOOL_CALLS][...]``), and every other template whose call is one JSON object: the generic analysis
describes them, so there is no dedicated detector.
"""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.json_native.grammar import JsonNativeGrammar
from workbench.runtime.formats.json_native.parser import JsonNativeParser
from workbench.runtime.formats.json_native.samples import write_calls

FAMILY = FormatFamily(
    name="json_native",
    grammar=JsonNativeGrammar,
    write_calls=write_calls,
    parser=JsonNativeParser,
)
