"""One home per serving engine: vLLM, SGLang, transformers, llama.cpp.

Each engine's folder holds what the workbench knows about it: its parse policies (where it reads an output
differently from the others), its response-template rules, its plug-in adapter, its side of the harness that
runs in the engines venv, its known issues and the tokenizers its proofs stream with.  Shared code asks the
engine object (:class:`~workbench.engines.base.Engine`) instead of testing the engine's name.

This package and each engine's ``__init__`` import only the standard library: the harness
(:mod:`workbench.engines.harness`) runs them inside the engines venv, where the rest of the workbench is not
loaded.  The table below is resolved lazily, relative to this package.
"""

from __future__ import annotations

import importlib
from functools import cache

from workbench.engines.base import Engine

#: Every engine's module, relative to this package, by the engine's name.
MODULES: dict[str, str] = {
    "llama.cpp": ".llamacpp",
    "sglang": ".sglang",
    "vllm": ".vllm",
    "transformers": ".transformers",
}

#: The engines whose built-in parsers ``workbench recommend`` tries, in the order it runs them.
RECOMMEND: tuple[str, ...] = ("vllm", "sglang")

#: The parse-policy profiles ``--engine`` / ``--profile`` take: the workbench's own defaults, then every
#: engine whose documented parsing the workbench can reproduce.
WORKBENCH = "workbench"


def names() -> tuple[str, ...]:
    """Every engine's name (pure; imports none of them)."""
    return tuple(MODULES)


@cache
def engine(name: str) -> Engine:
    """The engine called ``name`` (case-insensitive).

    Raises:
        ValueError: no engine of that name.
    """
    key = name.strip().lower()
    if key not in MODULES:
        raise ValueError(f"unknown engine {name!r}; expected one of {', '.join(MODULES)}")
    found: Engine = importlib.import_module(MODULES[key], __name__).ENGINE
    return found


def parse_profiles() -> tuple[str, ...]:
    """``workbench`` and the engines with a parse-policy profile, in the order the CLI lists them."""
    return (WORKBENCH, *(n for n in names() if engine(n).parse_profile))


__all__ = ["MODULES", "RECOMMEND", "WORKBENCH", "Engine", "engine", "names", "parse_profiles"]
