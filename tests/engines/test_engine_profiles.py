"""Every shared template's response-template profiles, proven by the engines that will load them.

For each template whose spec validates and each profile that can express its format, the consumer's own
start-up validator must accept the export, and its own parser must give back every round-trip output, one-shot
and streamed as the real tokenizer's token deltas: vLLM 0.32 (``--tool-call-parser hf``) for ``vllm``, SGLang
0.5.23 (``--tool-call-parser/--reasoning-parser response_template``) for ``sglang``, both for ``portable``.
transformers in this venv proves the ``transformers`` and ``portable`` profiles with no engines.

The engines run in their own venv (``make engines``); without it the engine tests skip and say why.  All
cases of a profile go to the harness in one subprocess call (importing vLLM takes 15-30 s).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engines.profile_corpus import engine_run, failures, table, transformers_run
from workbench.engines.response_rules import patterns, portability_problems
from workbench.engines.venv import engines_missing_reason
from workbench.export import build_response_template

pytestmark = [pytest.mark.slow, pytest.mark.shared]

ENGINE_CASES = [("vllm", "vllm"), ("sglang", "sglang"), ("portable", "vllm"), ("portable", "sglang")]


def needs_engines() -> None:
    reason = engines_missing_reason()
    if reason:
        pytest.skip(reason)


@pytest.mark.parametrize(("profile", "consumer"), ENGINE_CASES)
def test_each_engine_accepts_its_profile_and_parses_every_round_trip(profile: str, consumer: str) -> None:
    needs_engines()
    run = engine_run(profile)
    print(f"\n{profile} profile through {consumer} {run.versions.get(consumer)}:\n{table(run, consumer)}")
    proofs = run.proofs[consumer]
    refused = {n: p.cases[0].detail for n, p in proofs.items() if p.cases and p.cases[0].id == "validator"}
    assert refused == {}
    assert failures(run, consumer) == {}
    # The serving profiles express every format a response_template can; portable all but calls without a
    # closing marker (Mistral's `[TOOL_CALLS]`), which need a JSON-aware end.
    assert len(proofs) >= (20 if profile == "portable" else 28)


@pytest.mark.parametrize("profile", ["transformers", "portable"])
def test_transformers_parses_every_round_trip_one_shot_and_streamed(profile: str) -> None:
    run = transformers_run(profile)
    print(
        f"\n{profile} profile through transformers {run.versions.get('transformers')}:\n"
        f"{table(run, 'transformers')}"
    )
    assert failures(run, "transformers") == {}


def test_every_portable_export_compiles_with_pythons_re() -> None:
    run = transformers_run("portable")
    from tests.engines.profile_corpus import tool_capable

    for item in tool_capable():
        if item.name in run.unsupported:
            assert run.unsupported[item.name]  # named, with the reason
            continue
        for where, pattern in patterns(build_response_template(item.spec, "portable")):
            assert portability_problems(pattern) == [], (item.name, where)


def test_the_cli_proves_a_response_template_in_both_engines_and_records_versions(tmp_path: Path) -> None:
    """`workbench export T --target response-template --json`: the portable profile proven through the CLI
    (``prove_profile``) by vLLM and SGLang, each engine's version in the provenance.  The export tests in
    ``tests/`` run without the engines (the ``no_engines`` fixture): this one holds the CLI's engine proof."""
    needs_engines()
    from typer.testing import CliRunner

    from workbench.cli import app

    out = tmp_path / "rt.json"
    args = ["export", "chatml-think-tools", "--target", "response-template", "-o", str(out), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["proof"]["passed"] is True
    cases = summary["proof"]["cases"]
    assert not [c for c in cases if c["status"] == "fail"], cases
    for engine in ("vllm", "sglang"):  # every round trip through each engine's own parser
        assert sum(c["id"].startswith(f"{engine}:") and c["status"] == "pass" for c in cases) >= 10, engine
    provenance = json.loads(out.read_text(encoding="utf-8"))["response_template_provenance"]
    assert provenance["profile"] == "portable"
    assert set(provenance["proven_with"]) == {"transformers", "vllm", "sglang"}
    assert "?" not in provenance["proven_with"].values()
