"""Dedicated detector: pythonic calls, ``[name(arg="value"), other()]`` (Llama 3.2 / LFM2 style).

The calls are Python call expressions, usually in a list; the argument values are Python literals, or JSON
where the template writes each value with ``tojson`` (``enabled=true``): the spec says which
(``tools.json_literals``), so that the grammar and the samples write what the template writes.  The diffs
find the list like any other section, so this detector only has to recognise the call syntax, read the text
around the list and how a boolean is spelled.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from workbench.analysis.markers import strip_leading_ws
from workbench.analysis.pattern import typed_value_request
from workbench.analysis.probes import ARG_A, ARG_B, FUNC_A, FUNC_B, VALUE_A
from workbench.analysis.state import Findings

if TYPE_CHECKING:
    from workbench.analysis.renders import ProbeResult
    from workbench.analysis.tools import CallRegion

_CALL = re.compile(re.escape(FUNC_A) + r"\(\s*" + re.escape(ARG_A) + r"\s*=")
_TWO_ARGS = re.compile(
    re.escape(FUNC_A)
    + r"\(\s*"
    + re.escape(ARG_A)
    + r"\s*=\s*(['\"]?)"
    + re.escape(VALUE_A)
    + r"\1(\s*,\s*)"
    + re.escape(ARG_B)
    + r"\s*="
)
_BOOLEAN = re.compile(re.escape(FUNC_A) + r"\(\s*" + re.escape(ARG_A) + r"\s*=\s*(true|True)\b")


def detect(f: Findings, region: CallRegion, t1: ProbeResult) -> bool:
    """Fill the spec for pythonic calls and return True, or return False."""
    body = region.body
    m = _CALL.search(body)
    if m is None:
        return False
    t = f.tools
    t["format"] = "pythonic"
    open_at = body.rfind("[", 0, m.start())
    wrapped = open_at >= 0 and not body[open_at + 1 : m.start()].strip()
    if wrapped:
        close_at = body.rfind("]")
        t.update(
            array_wrapped=True,
            section_start=strip_leading_ws(body[:open_at]),
            section_end=strip_leading_ws(body[close_at + 1 :]),
        )
    else:
        close = body.find(")", m.end())
        t.update(
            section_start=strip_leading_ws(body[: m.start()]), section_end=strip_leading_ws(body[close + 1 :])
        )
    t2 = f.probe("T2")
    if t2.diff is not None and FUNC_B + "(" in t2.diff.right:
        right = t2.diff.right
        t.update(parallel=True, call_separator=right[: right.find(FUNC_B)])
        f.note("T2", f"a second call joins the same list after {t['call_separator']!r}")
    f.note("T1", "pythonic call syntax name(arg=value)" + (" in a list" if wrapped else ""))
    two = f.renderer.get("call_two_args")
    found = _TWO_ARGS.search(two) if two is not None else None
    if found is not None and found.group(2) != ", ":
        # the grammar and the samples join arguments with ", " unless the template writes otherwise
        t["arg_separator"] = found.group(2)
        f.note("T5", f"arguments separated by {found.group(2)!r}")
    if _spells_json_literals(f):
        t["json_literals"] = True
        f.note("T1", "keyword values are written as JSON: true, false, null (not True, False, None)")
    return True


def _spells_json_literals(f: Findings) -> bool:
    """Does the template write a boolean keyword value as JSON (``first=true``) rather than as Python
    (``first=True``)?  Read off the render the call-pattern read-back makes of a call whose argument is
    ``True`` (JSON or Python: the one kind of literal the analysis recognises by its spelling)."""
    messages, tools, prompt = typed_value_request(True)
    text = f.renderer.render_conversation(messages, tools, add_generation_prompt=prompt)
    found = _BOOLEAN.search(text) if text is not None else None
    return found is not None and found.group(1) == "true"
