"""The ``tests`` target: a pytest file holding the round-trip cases (and recorded sessions).

A user can drop it into their own repository; it needs only this package (the spec is embedded).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.proofs import inline_text
from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.session import Session
from workbench.validate import PASS, ROUND_TRIP_TOOLS, ValidationReport

# The generated module's code; build_tests_file fills in the name, the version and the data literals.
TESTS_TEMPLATE = Path(__file__).resolve().parents[1] / "data" / "roundtrip_tests.py.txt"


def build_tests_file(
    spec: FormatSpec,
    report: ValidationReport,
    sessions: Sequence[tuple[str, Session]] = (),
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS,
) -> str:
    """A self-contained pytest module: the spec, tools and every passing round-trip case embedded as data.

    It imports only ``workbench`` (and pytest): the spec travels inside the file, so it can be dropped into
    any repository that installs this package.  Only passing cases are embedded: a test file must be green
    on the day it is exported.
    """
    import pprint

    cases = [
        {
            "id": c.id,
            "output": c.output,
            "thinking_opened": c.thinking_opened,
            "compare_ids": c.compare_ids,
            "expected": c.expected,
        }
        for c in report.cases
        if c.status == PASS
    ]
    recorded = []
    for name, session in sessions:
        from workbench.session import parse_options_for

        opts = parse_options_for(session)
        recorded.append(
            {
                "id": name,
                "tokens": [session.fed_text(i) for i in range(len(session.steps))],
                "options": {
                    "enable_thinking": opts.enable_thinking,
                    "thinking_opened": opts.thinking_opened,
                    "parallel_tool_calls": opts.parallel_tool_calls,
                },
                "expected": session.parsed,
            }
        )
    spec_data = replace(spec, provenance=replace(spec.provenance, validation=None)).to_dict()

    def literal(name: str, value: Any) -> str:
        return f"{name} = {pprint.pformat(value, width=108, sort_dicts=False)}\n"

    name = report.template_name or spec.provenance.template_name
    data = (
        # the spec's verdict when exported (with --force: what was untested or failing)
        literal("VALIDATION", report.verdict.to_dict())
        + literal("SPEC_DATA", spec_data)
        + literal("TOOLS_DATA", [t.to_openai() for t in tools])
        + literal("CASES", cases)
        + literal("SESSIONS", recorded)
    )
    text = TESTS_TEMPLATE.read_text(encoding="utf-8")
    # The name goes into the module docstring escaped (a name holding three double quotes and a newline
    # must not end the docstring); the data goes in as Python literals (pprint writes repr).
    shown = f"'{inline_text(name)}'"
    return text.replace("@NAME@", shown).replace("@VERSION@", __version__).replace("# @DATA@\n", data)
