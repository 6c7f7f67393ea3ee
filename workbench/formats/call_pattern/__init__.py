"""CALL_PATTERN: a call described as literal text and typed slots (``ToolsSpec.pattern``, spec v2).

For formats the fixed marker fields cannot describe: per-type argument attributes, values in an encoding
of their own, element-style markup with counters, ids before names.  The analysis learns the pattern
(:mod:`workbench.analysis.pattern`) when the marker-field spec fails its own round trip.
"""

from __future__ import annotations

from workbench.formats.base import FormatFamily
from workbench.formats.call_pattern.grammar import CallPatternGrammar
from workbench.formats.call_pattern.parser import CallPatternParser
from workbench.formats.call_pattern.samples import write_calls

FAMILY = FormatFamily(
    name="call_pattern",
    grammar=CallPatternGrammar,
    write_calls=write_calls,
    parser=CallPatternParser,
    response_template_gap=(
        "a call pattern's slots (per-type argument elements, values in an encoding of their own, counters) "
        "have no response-template spelling; export a spec, a structural tag or an engine plug-in instead"
    ),
)
