"""One ``workbench recommend`` run over every shared template, read by ``test_recommend.py`` (each family's
documented parser is recommended) and ``test_recommend_claims.py`` (recommend claims only what it ran).

Each run imports vLLM and then SGLang in a subprocess and loads a tokenizer per template (about 90 s an
engine here), so the two modules share one run: they are one xdist group (``XDIST_GROUP``), and the run is
cached for the process.  Every template runs a few parsers of several families (``ONLY``); a family's
template also runs its documented parsers and a control from another family.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from tests.conftest import shared_templates
from workbench.commands.recommend import recommend
from workbench.engines.venv import engines_python

#: The xdist group of the modules that read the run (tests/conftest.py puts them on one worker).
XDIST_GROUP = "recommend"

#: The parsers every template runs: tool parsers of several families and the families' reasoning parsers.
ONLY = ("hermes", "pythonic", "llama3_json", "deepseek_r1", "qwen3", "qwen25", "llama3", "qwen")

# template -> (vLLM --tool-call-parser, SGLang --tool-call-parser) documented for the family; None: the
# engine documents no parser for it
FAMILIES: dict[str, tuple[str, str | None]] = {
    "Qwen-Qwen3-0.6B": ("hermes", "qwen"),
    "deepseek-ai-DeepSeek-V3.1": ("deepseek_v31", "deepseekv31"),
    "openai-gpt-oss-120b": ("openai", "gpt-oss"),
    "Kimi-K2-Instruct": ("kimi_k2", "kimi_k2"),
    "meta-llama-Llama-3.1-8B-Instruct": ("llama3_json", "llama3"),
    "Qwen3-Coder": ("qwen3_coder", "qwen3_coder"),
    "GLM-4.6": ("glm45", "glm45"),
    "MiniMax-M2": ("minimax_m2", "minimax-m2"),
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use": ("hermes", "hermes"),
    "unsloth-mistral-Devstral-Small-2507": ("mistral", "mistral"),
    "ByteDance-Seed-OSS": ("seed_oss", None),
}
#: A parser of another family: it must not pass on a family's template (the cases tell formats apart).
CONTROL = "pythonic"


def parsers_for(name: str) -> list[str]:
    """The parsers a template runs: ``ONLY``, and for a family's template its documented ones and
    ``CONTROL``."""
    wanted = set(ONLY)
    if name in FAMILIES:
        wanted |= {n for n in FAMILIES[name] if n} | {CONTROL}
    return sorted(wanted)


@cache
def shared_answers() -> dict[str, dict[str, Any]]:
    """template name -> its ``recommend`` answer, for every shared template."""
    python = engines_python()
    assert python is not None
    only = {str(path): parsers_for(path.stem) for path in shared_templates()}
    return {a["template"]: a for a in recommend(list(only), python, only=only, time_limit=30)}
