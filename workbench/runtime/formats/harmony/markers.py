"""Harmony's own vocabulary (gpt-oss): the one place its control tokens and channel names are written.

The Harmony format fixes these tokens itself (a template cannot vary them), so the detector, the parser, the
grammar, the sample writer and the response-template hook all read them from here.
"""

from __future__ import annotations

import re

START, CHANNEL, MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
END, CALL, RETURN = "<|end|>", "<|call|>", "<|return|>"
CONSTRAIN, LITERAL, ENDLITERAL = "<|constrain|>", "<|literal|>", "<|endliteral|>"
CONTROL = (START, CHANNEL, MESSAGE, END, CALL, RETURN, CONSTRAIN, LITERAL, ENDLITERAL)
TERMINATORS = (END, CALL, RETURN)
#: OpenChatML 2.2 §3: outside a literal block, ``<<|start|>`` is the text ``<|start|>`` (the leading ``<``
#: doubled), for every control token.
ESCAPES = tuple("<" + token for token in CONTROL)
HEADER_TOKENS = (START, CHANNEL, CONSTRAIN, MESSAGE)

#: Channel names: reasoning, the answer, and tool calls (plus preambles shown to the user).
ANALYSIS, FINAL, COMMENTARY = "analysis", "final", "commentary"
#: The role the generation prompt opens, and the namespace calls are addressed to.
START_ASSISTANT = START + "assistant"
FUNCTIONS = "functions."
RECIPIENT = f"{COMMENTARY} to={FUNCTIONS}"
CONSTRAIN_JSON = f" {CONSTRAIN}json"

#: The analysis channel: Harmony's reasoning region.
REASONING_START = f"{CHANNEL}{ANALYSIS}{MESSAGE}"
REASONING_END = END
#: The final channel: Harmony's answer region.
CONTENT_START = f"{CHANNEL}{FINAL}{MESSAGE}"
CONTENT_END = RETURN


def call_header(name: str) -> str:
    """The header of a call to ``name`` as gpt-oss writes it, after ``<|start|>assistant``."""
    return f"{CHANNEL}{RECIPIENT}{name}{CONSTRAIN_JSON}{MESSAGE}"


def rx(token: str) -> str:
    """``token`` as a regular expression (the response-template hook writes patterns)."""
    return re.escape(token)
