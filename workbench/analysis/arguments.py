"""Phase 4: argument markers of tagged calls (probes A1, A2, T5).

Runs only for ``tag_with_tagged``.  The tools phase located the argument list of a one-argument call (T6);
inside it, the argument name and value needles split the text into name prefix, the text between name and
value, and the value suffix.  A1 (another name) and A2 (another value) confirm that the needles are where
the split says; T5 (two arguments) gives the separator between arguments.

Argument markers keep whitespace on *both* sides exactly as rendered, because argument values are raw text:
Qwen3-Coder writes ``<parameter=NAME>\\nVALUE\\n</parameter>\\n``, and the newline after ``>`` and before
``</parameter>`` belong to the markers, not to the value.
"""

from __future__ import annotations

from workbench.analysis.diff import segmentize
from workbench.analysis.markers import strip_leading_ws
from workbench.analysis.probes import ARG_A, ARG_B, VALUE_A
from workbench.analysis.state import Findings


def split_between(between: str) -> tuple[str, str]:
    """Split the text between an argument's name and its value into (name suffix, value prefix), pure.

    ``</arg_key>\\n<arg_value>`` closes the name and opens the value; ``>\\n`` or ``">`` only closes the name.
    """
    segs = segmentize(between)
    if len(segs) >= 2 and segs[-1].is_marker and between[: len(between) - len(segs[-1].text)].strip():
        cut = len(between) - len(segs[-1].text)
        return between[:cut], between[cut:]
    return between, ""


def analyze_arguments(f: Findings) -> None:
    """Fill the argument markers of a tagged format (mutates ``f``)."""
    if f.tools.get("format") != "tag_with_tagged" or f.args_span[0] < 0:
        return
    a_start, a_end = f.args_span
    block = f.call_text[a_start:a_end]
    ai = block.find(ARG_A)
    vi = block.find(VALUE_A, ai + len(ARG_A)) if ai >= 0 else -1
    if ai < 0 or vi < 0:
        f.warn("A1: the argument name or value is not inside the argument list")
        return
    name_suffix, value_prefix = split_between(block[ai + len(ARG_A) : vi])
    t = f.tools
    t.update(
        arg_name_prefix=strip_leading_ws(block[:ai]),
        arg_name_suffix=name_suffix,
        arg_value_prefix=value_prefix,
        arg_value_suffix=block[vi + len(VALUE_A) :],
    )
    a1, a2 = f.probe("A1"), f.probe("A2")
    if a1.diff is not None and (a1.diff.left, a1.diff.right) != ("", ""):
        where = "in the name position" if a1.diff.prefix.endswith(t["arg_name_prefix"]) else "elsewhere"
        f.note("A1", f"argument name between {t['arg_name_prefix']!r} and {name_suffix!r} ({where})")
    if a2.diff is not None:
        quoted = a2.diff.prefix.endswith('"') and a2.diff.suffix.startswith('"')
        f.note(
            "A2",
            f"value between {value_prefix!r} and {t['arg_value_suffix']!r}"
            + (" (written as a JSON string)" if quoted else " (written raw)"),
        )
    two = f.renderer.get("call_two_args")
    if two is None or not two.startswith(f.call_text[:a_start]):
        return
    first_end = two.find(VALUE_A, a_start) + len(VALUE_A) + len(t["arg_value_suffix"])
    second = two.find(ARG_B, first_end)
    if second < 0:
        return
    sep = two[first_end : second - len(t["arg_name_prefix"])]
    t["arg_separator"] = (
        sep if two[second - len(t["arg_name_prefix"]) : second] == t["arg_name_prefix"] else ""
    )
    f.note("T5", f"arguments separated by {t['arg_separator']!r}")
