"""Harmony as a learned layout, cross-checked against the dedicated Harmony parser (issue 18).

The analysis learns ../shared/templates/openai-gpt-oss-120b.jinja as headed messages (no detector knows
Harmony's tokens any more).  The learned spec must read every Harmony and OpenChatML conformance case that
the dedicated parser (``formats/harmony``, through the hand-written ``specs/openchatml.json``) reads: the
OpenChatML fixtures of ``workbench/data/conformance``, the peers' gpt-oss vectors and llama.cpp's gpt-oss
cases, one-shot and streamed (per character and random chunkings), judged by the conformance runner.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import pytest

from tests.conftest import SHARED
from workbench.conformance.cases import load_case_paths
from workbench.conformance.runner import Runner
from workbench.conformance.targets import SpecProvider, Target
from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec
from workbench.spec_io import load_spec
from workbench.template.source import load_template

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = SHARED / "templates" / "openai-gpt-oss-120b.jinja"
CASE_FILES = (
    REPO / "workbench" / "data" / "conformance" / "openchatml.json",
    SHARED / "conformance" / "peers" / "gpt_oss.json",
    SHARED / "conformance" / "llamacpp" / "openai-gpt-oss-120b.json",
)

pytestmark = pytest.mark.skipif(not TEMPLATE.is_file(), reason="../shared not present")


class _Fixed(SpecProvider):
    """Every case runs against one spec."""

    def __init__(self, spec: FormatSpec) -> None:
        super().__init__()
        self.fixed = spec

    def spec(self, target: Target) -> FormatSpec:
        return self.fixed


@lru_cache(maxsize=1)
def learned() -> FormatSpec:
    return analyze(load_template(TEMPLATE)).spec


def _passed(spec: FormatSpec) -> dict[str, bool]:
    cases = load_case_paths([p for p in CASE_FILES if p.is_file()])
    return {r.case.case_id: r.passed for r in Runner(_Fixed(spec)).run_all(cases)}


@lru_cache(maxsize=1)
def dedicated_results() -> dict[str, bool]:
    return _passed(load_spec(REPO / "specs" / "openchatml.json"))


def test_gpt_oss_is_learned_as_headed_messages() -> None:
    spec = learned()
    lay = spec.layout
    assert spec.tools.format != "harmony"  # no dedicated detector: the layout is learned
    assert (lay.opener, lay.closer, lay.channel, lay.roles) == (
        "<|start|>assistant",
        "<|message|>",
        "<|channel|>",
        "<|start|>",
    )
    kinds = {m.kind: (m.header, m.ends) for m in lay.messages}
    assert kinds["reasoning"] == ("<|channel|>analysis<|message|>", ("<|end|>",))
    assert kinds["content"][0] == "<|channel|>final<|message|>"
    assert set(kinds["content"][1]) == {"<|return|>", "<|end|>"}
    assert spec.prompt.output_prefix == "<|start|>assistant"
    assert spec.tools.call_start == "<|start|>assistant to=functions."
    assert spec.tools.call_end == "<|call|>"


def test_the_learned_layout_reads_every_case_the_dedicated_parser_reads() -> None:
    dedicated = dedicated_results()
    ours = _passed(learned())
    assert len(dedicated) >= 40
    lost = sorted(case for case, ok in dedicated.items() if ok and not ours[case])
    assert lost == []


def test_only_the_protocol_rules_no_template_renders_come_from_the_harmony_family() -> None:
    """Without the Harmony family's supplement (escapes, literal blocks, the ``call_id=`` attribute: rules
    the template never renders), exactly the cases that use them are lost; everything else is learned."""
    spec = learned()
    bare = replace(spec, layout=replace(spec.layout, escape="", verbatim=(), ids=""))
    dedicated = dedicated_results()
    ours = _passed(bare)
    lost = sorted(case for case, ok in dedicated.items() if ok and not ours[case])
    protocol = {
        "peers/openchatml/ocm17_3_two_concurrent_calls_with_call_ids",  # call_id=
        "peers/openchatml/ocm17_4_tool_error_reply",  # call_id=
        "peers/openchatml/ocm17_5_literal_block_with_start",  # <|literal|>
        "peers/openchatml/ocm17_7_preamble_on_commentary",  # call_id=
        "peers/openchatml/ocm17_8_legacy_functions_role_reply",  # call_id=
        "peers/openchatml/ocm3_escaped_start_outside_a_literal_block",  # <<|start|>
        "peers/openchatml/ocm3_escapes_of_every_kind_in_reasoning_and_content",
        "peers/openchatml/ocm3_no_escape_inside_a_literal_block",
    }
    assert set(lost) == protocol
