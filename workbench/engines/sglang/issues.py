"""SGLang's known issues with the families' outputs (:mod:`workbench.engines.issues`)."""

from __future__ import annotations

from workbench.engines.issues import CALL_CASES, EngineIssue
from workbench.runtime.formats.harmony import FAMILY as HARMONY

ISSUES: dict[str, EngineIssue] = {
    "gpt-oss": EngineIssue(
        "sglang/srt/function_call/gpt_oss_detector.py:GptOssDetector.has_tool_call and "
        "_extract_tool_call_from_event",
        "a call is found only after the text `<|start|>assistant<|channel|>commentary` with the recipient "
        "after the channel and `<|constrain|>json`; the template writes `<|start|>assistant to=functions.NAME"
        "<|channel|>commentary json<|message|>` (recipient in the header, valid Harmony that vLLM's "
        "openai_harmony path reads), and a first call's `<|start|>assistant` is in the prompt, not the "
        "output",
        (HARMONY.name,),
        CALL_CASES,
    ),
    # Found by the harder tool sets of issue 20 (a parameter typed integer or null, an anyOf with null).
    "qwen3_coder": EngineIssue(
        "sglang/srt/function_call/qwen3_coder_detector.py:Qwen3CoderDetector._convert_param_value",
        "a value is read as null only when spelled `null`; for a parameter typed integer or null the "
        "template writes Jinja's `None`, `int('None')` fails and the value comes back as the string 'None'",
        ("tag_with_tagged",),
        ("null_argument",),
    ),
    "minimax-m2": EngineIssue(
        "sglang/srt/function_call/minimax_m2.py:MinimaxM2Detector._convert_param_value_with_types",
        'returns null for every value of a parameter whose schema allows null (`if "null" in '
        "normalized_types ...: return None` before any other type is tried): `limit` of type anyOf "
        "[integer, null] written `5` comes back as null",
        ("tag_with_tagged",),
        ("any_of_arguments",),
    ),
}
