"""Parse options that reproduce one engine's policies (docs/conformance.md): ``--engine`` / ``--profile``.

Where serving engines disagree about what an output means, :class:`~workbench.runtime.parsing.ParseOptions`
names the choice as a policy; each engine's object says which policies it follows
(:attr:`~workbench.engines.base.Engine.policies`), so a conformance run can hold each engine's vectors to
that engine's rules.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.engines import WORKBENCH, engine, parse_profiles
from workbench.runtime.parsing.options import ParseOptions


def parse_options(profile: str, *, streaming: bool = False, **overrides: Any) -> ParseOptions:
    """Options that reproduce one engine's parsing policies; ``overrides`` set the request switches.

    ``profile`` is ``workbench`` (the defaults) or an engine with a parse profile (``llama.cpp``, ``sglang``,
    ``vllm``); ``streaming`` selects the engine's streaming code path where it differs from its one-shot path
    (both vLLM and SGLang only apply their one-shot clean-ups to a complete output).

    Raises:
        ValueError: an unknown profile.
        TypeError: an override that is not a :class:`ParseOptions` field.
    """
    key = profile.strip().lower()
    if key not in parse_profiles():
        raise ValueError(f"unknown engine {profile!r}; expected one of {', '.join(parse_profiles())}")
    policies = {} if key == WORKBENCH else engine(key).policies_for(streaming=streaming)
    known = {f.name for f in dataclasses.fields(ParseOptions)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise TypeError(f"ParseOptions has no option(s) {', '.join(unknown)}")
    return ParseOptions(**(policies | overrides))
