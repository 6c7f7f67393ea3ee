"""Round-trip validation: render known assistant messages through the template, parse them back, compare.

A spec is only as good as its agreement with the template it came from.  For each synthesized case (content
only, reasoning + content, one call, two parallel calls, awkward argument strings, scalars, nested values,
call ids, ...) validation

1. renders ``[user, assistant]`` through the template, and ``[user]`` with the generation prompt;
2. cuts the assistant output out by diffing the two renders (what the model would have written after the
   prompt), and drops the end-of-turn marker the model stops on;
3. parses that output with the spec's parser, one-shot, one character at a time and at seeded random
   chunkings (the conformance runner's), reading the message after every feed as a client would;
4. compares the parsed message with the input message;
5. renders every case twice: a template whose text changes between renders cannot validate.

The plain typed tools come first and decide the verdict; harder tool definitions (``anyOf``, no ``type``,
nested objects, ``enum``, null) each get a case, and a template that raises on one is named for it.
Features the template renders but no case tested (tool calls when every call case was skipped) are listed
as untested and the report is not validated (:class:`ValidationVerdict`).

A feature the template cannot express is *unsupported*, not failed, and that is decided from the render
alone: if the reasoning text, a call's name or a call id leaves no trace in the rendered output, or the
template refuses to render the message, the case is unsupported and the reason is recorded.  No per-template
list exists anywhere.  A spec is *validated* only when every case its template supports passes.

The report (:class:`ValidationReport`) keeps, per case, the exact output text, the expected message and the
parse options.  It travels inside exported specs (``provenance.validation``), so a spec can be re-checked
later without its template (:func:`validate_recorded`), and the export targets re-use the very same cases.
"""

from __future__ import annotations

# The package is split by concern (cases, render, compare, report, run); every name importers used when this
# was one module is re-exported here so no importer changes.
from workbench.validate.cases import (
    FEATURES,
    HARDER_TOOLS,
    PLAIN_TOOLS,
    ROUND_TRIP_TOOLS,
    TOOL_SETS,
    USER_TURN,
    CallInput,
    Case,
    ToolSet,
    build_cases,
)
from workbench.validate.compare import (
    ParseFn,
    StreamFn,
    check_output,
    compare_messages,
    feeding_runs,
    json_equal,
    parse_output,
    stream_contract,
)
from workbench.validate.render import (
    CaseRenderer,
    _inner_markers,
    cut_at_turn_end,
    find_turn_end,
    next_turn_marker,
    render_case,
    turn_ends,
)
from workbench.validate.report import (
    ERROR,
    FAIL,
    NOT_RENDERED,
    PASS,
    RAISED,
    UNSUPPORTED,
    UNTESTABLE,
    CaseResult,
    RenderedCase,
    ValidationReport,
)
from workbench.validate.run import report_from_spec, validate, validate_recorded
from workbench.validate.verdict import UntestedFeature, ValidationVerdict, VerdictStatus

__all__ = [
    "ERROR",
    "FAIL",
    "FEATURES",
    "HARDER_TOOLS",
    "NOT_RENDERED",
    "PASS",
    "PLAIN_TOOLS",
    "RAISED",
    "ROUND_TRIP_TOOLS",
    "TOOL_SETS",
    "UNSUPPORTED",
    "UNTESTABLE",
    "USER_TURN",
    "CallInput",
    "Case",
    "CaseRenderer",
    "CaseResult",
    "ParseFn",
    "RenderedCase",
    "StreamFn",
    "ToolSet",
    "UntestedFeature",
    "ValidationReport",
    "ValidationVerdict",
    "VerdictStatus",
    "_inner_markers",
    "build_cases",
    "check_output",
    "compare_messages",
    "cut_at_turn_end",
    "feeding_runs",
    "find_turn_end",
    "json_equal",
    "next_turn_marker",
    "parse_output",
    "render_case",
    "report_from_spec",
    "stream_contract",
    "turn_ends",
    "validate",
    "validate_recorded",
]
