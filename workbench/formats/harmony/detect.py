"""Dedicated detector: OpenAI Harmony channels (gpt-oss).

Harmony does not wrap a call in markers of its own: the *message header* names the recipient
(``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{...}<|call|>``), reasoning is a
message on the ``analysis`` channel and the answer one on the ``final`` channel.  The generic diffs see
fragments of these headers; this detector recognises the recipient syntax and records the channel
structure so a dedicated parser can take over.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from workbench.analysis.jsonfind import find_json_containing
from workbench.analysis.markers import markers_in
from workbench.analysis.probes import FUNC_A, FUNC_B, VALUE_A
from workbench.analysis.state import Findings
from workbench.runtime.formats.harmony.markers import (
    CHANNEL,
    CONTENT_END,
    CONTENT_START,
    END,
    MESSAGE,
    REASONING_END,
    REASONING_START,
    RETURN,
)

if TYPE_CHECKING:
    from workbench.analysis.renders import ProbeResult
    from workbench.analysis.tools import CallRegion

_RECIPIENT = re.compile(r"to=((?:[\w-]+\.)*)" + FUNC_A + r"\b")


def _first_marker(text: str) -> str:
    found = markers_in(text)
    return found[0] if found and text.strip().startswith(found[0]) else ""


def detect(f: Findings, region: CallRegion, t1: ProbeResult) -> bool:
    """Fill the spec for Harmony output and return True, or return False when this is not Harmony."""
    b = region.text
    turn = b[region.start - 40 if region.start >= 40 else 0 : region.end]
    m = _RECIPIENT.search(turn)
    if m is None or CHANNEL not in turn or MESSAGE not in turn:
        return False
    ns = b.find(FUNC_A, region.start - 40 if region.start >= 40 else 0)
    v = b.find(VALUE_A, ns)
    args = find_json_containing(b, v, ns + len(FUNC_A), region.end) if v >= 0 else None
    t = f.tools
    t.update(
        format="harmony",
        function_namespace=m.group(1),
        name_prefix="to=" + m.group(1),
        name_suffix=b[ns + len(FUNC_A) : args.start] if args else "",
        call_end=_first_marker(b[args.end :]) if args else "",
    )
    two = f.probe("T2").render_b
    t["parallel"] = bool(two and FUNC_B in two[len(b) - len(b[region.start :]) :])
    f.reasoning.update(mode="tag_based", start=REASONING_START, end=REASONING_END)
    f.reasoning_shape = "wrapped"
    f.content.update(mode="always_wrapped", start=CONTENT_START, end=CONTENT_END)
    for marker in (RETURN, END, t["call_end"]):
        if marker and marker not in f.end_markers:
            f.end_markers.append(marker)
    f.note(
        "T1",
        f"Harmony: the recipient {m.group(0)!r} is in the message header; reasoning on the analysis "
        "channel, answers on the final channel",
    )
    return True
