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
}
