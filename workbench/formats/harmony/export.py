"""Harmony export hooks: a transformers ``response_template`` reading every region of a Harmony turn."""

from __future__ import annotations

from typing import Any

from workbench.runtime.formats.harmony.markers import (
    ANALYSIS,
    CALL,
    CHANNEL,
    COMMENTARY,
    CONSTRAIN,
    END,
    FINAL,
    FUNCTIONS,
    MESSAGE,
    RETURN,
    rx,
)
from workbench.runtime.spec import FormatSpec


def response_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    """Channel headers open regions, ``<|end|>``/``<|call|>``/``<|return|>`` close them.  The channel names
    are the Harmony format's own vocabulary, not a template's."""
    ends = "|".join(rx(m) for m in (END, CALL, RETURN))
    channel, message = rx(CHANNEL), rx(MESSAGE)
    return {
        "reasoning_content": {
            "open_pattern": f"{channel}{ANALYSIS}{message}",
            "close_pattern": ends,
            "repeats": True,
            "join": "\n",
        },
        "content": {
            # A commentary message without a recipient is a preamble shown to the user.
            "open_pattern": f"{channel}(?:{FINAL}|{COMMENTARY}){message}",
            "close_pattern": ends,
            "repeats": True,
            "join": "\n",
        },
        "tool_calls": {
            "open_pattern": rf"(?:{channel}{COMMENTARY}\s*)?to={rx(FUNCTIONS)}(?P<name>[^\s<]+)\s*"
            rf"(?:{channel}{COMMENTARY})?\s*(?:{rx(CONSTRAIN)})?\s*(?:json)?\s*{message}",
            "close_pattern": ends,
            "content": "json",
            "repeats": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
    }
