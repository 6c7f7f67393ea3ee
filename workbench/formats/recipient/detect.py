"""Dedicated detector: recipient-addressed messages (functionary v3.2, ``>>>name\\n...``).

Every assistant message starts with ``>>>`` and a recipient: ``all`` for text meant for the user, a function
name for a call (followed by its JSON arguments).  The generation prompt already ends with ``>>>``, so in the
T1 diff the ``>>>`` is common and the difference starts at the recipient name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from workbench.analysis.jsonfind import find_json_containing
from workbench.analysis.probes import CONTENT_TEXT, FUNC_A, FUNC_B, VALUE_A
from workbench.analysis.state import Findings

if TYPE_CHECKING:
    from workbench.analysis.renders import ProbeResult
    from workbench.analysis.tools import CallRegion

_ADDRESS = re.compile(r"([^\w\s<\[\]|]{2,})\Z")
_TEXT_RECIPIENT = re.compile(r"\A(\w+)(\s+)")


def detect(f: Findings, region: CallRegion, t1: ProbeResult) -> bool:
    """Fill the spec for recipient-addressed output and return True, or return False."""
    d = t1.diff
    if d is None:
        return False
    addr = _ADDRESS.search(d.prefix)
    text_to = _TEXT_RECIPIENT.match(d.left)
    b = region.text
    if addr is None or text_to is None or not d.left[text_to.end() :].startswith(CONTENT_TEXT):
        return False
    if not b.startswith(FUNC_A, region.start):
        return False
    ne = region.start + len(FUNC_A)
    v = b.find(VALUE_A, ne)
    args = find_json_containing(b, v, ne, region.end) if v >= 0 else None
    if args is None:
        return False
    marker = addr.group(1)
    t = f.tools
    t.update(format="recipient", name_prefix=marker, name_suffix=b[ne : args.start], call_separator=marker)
    two = f.probe("T2").render_b
    t["parallel"] = bool(two and (marker + FUNC_B) in two)
    f.content.update(mode="always_wrapped", start=marker + text_to.group(1) + text_to.group(2), end="")
    f.note(
        "T1",
        f"recipient format: {marker!r} + function name for calls, {marker + text_to.group(1)!r} for text",
    )
    return True
