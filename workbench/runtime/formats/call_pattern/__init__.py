"""CALL_PATTERN: a call described as literal text and typed slots (``ToolsSpec.pattern``, spec v2).

For formats the fixed marker fields cannot describe: per-type argument attributes, values in an encoding
of their own, element-style markup with counters, ids before names.  The analysis learns the pattern
(:mod:`workbench.analysis.pattern`) when the marker-field spec fails its own round trip.
"""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.call_pattern.grammar import CallPatternGrammar
from workbench.runtime.formats.call_pattern.parser import CallPatternParser
from workbench.runtime.formats.call_pattern.samples import write_calls

FAMILY = FormatFamily(
    name="call_pattern",
    grammar=CallPatternGrammar,
    write_calls=write_calls,
    parser=CallPatternParser,
)
