"""What the workbench knows about one serving engine, as one object (stdlib only: the harness imports it in
the engines venv)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Engine:
    """One serving engine.

    Attributes:
        name: the engine's name on the command line (``vllm``, ``sglang``, ``llama.cpp``, ``transformers``).
        display: how people write it (``vLLM``).
        distribution: the package its version is read from in the engines venv.
        parse_profile: whether ``--engine NAME`` selects a parse-policy profile for it.
        policies: the :class:`~workbench.runtime.parsing.options.ParseOptions` policies that reproduce its
            parsing, one-shot and streamed alike.
        one_shot_policies: the policies of its one-shot path only (the clean-ups it applies to a complete
            output and not to a stream).
        response_profile: the response-template profile its no-code route reads ("" when it has none).
        compares_ids: its parse results carry the template's call ids (servers assign their own).
        vector_cases: conformance cases name it in their ``parser`` field (``vllm: ...``) and run under its
            profile.
    """

    name: str
    display: str
    distribution: str = ""
    parse_profile: bool = False
    policies: Mapping[str, Any] = field(default_factory=dict)
    one_shot_policies: Mapping[str, Any] = field(default_factory=dict)
    response_profile: str = ""
    compares_ids: bool = False
    vector_cases: bool = False

    def policies_for(self, *, streaming: bool) -> dict[str, Any]:
        """The parse policies of its streaming or one-shot path (pure)."""
        return {**self.policies, **({} if streaming else self.one_shot_policies)}
