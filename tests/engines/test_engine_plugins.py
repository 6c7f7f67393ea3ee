"""The vLLM plug-in and SGLang detector exports of every shared template, proven in the real engines.

For each shared template whose spec validates, the export is written to a folder and loaded the way the
engine loads it: vLLM 0.32 through its ``--tool-parser-plugin`` file loader and through its
``vllm.general_plugins`` entry-point loader (the package), SGLang 0.5.23 through the launcher's
registration.  Then the engine's own parser composition (vLLM's ``ParserManager.get_parser`` ->
``DelegatingParser.parse`` / ``parse_delta``, which call our ``extract_reasoning*`` and
``extract_tool_calls*``; SGLang's ``ReasoningParser`` + ``FunctionCallParser``, which call our
``detect_and_parse`` / ``parse_streaming_increment``) must give back every round-trip message -- reasoning,
content and calls -- one-shot and streamed as the real tokenizer's token deltas.

The engines run in their own venv (``make engines``); without it these tests skip and say why.  All
templates go to the harness in one subprocess per engine (importing vLLM takes 15-30 s); the harness runs
without ``PYTHONPATH``, so a plug-in that imported ``workbench`` would fail to load.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import shared_path, shared_templates
from workbench.engines.plugin_proof import (
    build_plugin,
    job_for,
    plugin_proof,
    run_plugin_harness,
    write_files,
)
from workbench.engines.plugins import PluginNames
from workbench.engines.tokenizers import tokenizer_for
from workbench.engines.venv import engines_missing_reason
from workbench.formats import analyze
from workbench.proofs import Proof
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template
from workbench.validate import UNSUPPORTED, ValidationReport, validate

pytestmark = [pytest.mark.slow, pytest.mark.shared]

RUNNERS = {"vllm": ("vllm-file", "vllm-package"), "sglang": ("sglang",)}


@dataclass(frozen=True)
class Item:
    name: str
    spec: FormatSpec
    report: ValidationReport
    sha256: str


@cache
def validated() -> tuple[Item, ...]:
    """Every shared template whose spec validates (with or without a tool format: the reasoning parser
    and the content wrappers matter too)."""
    shared_path("templates")
    out = []
    for path in shared_templates():
        source = load_template(path)
        spec = analyze(source).spec
        report = validate(source, spec)
        if report.validated:
            out.append(Item(source.name, _named(spec, source.name, source.sha256), report, source.sha256))
    return tuple(out)


def _named(spec: FormatSpec, name: str, sha256: str) -> FormatSpec:
    from workbench.export.spec_target import spec_with_provenance

    return spec_with_provenance(spec, None, template_sha256=sha256, template_name=name)


@dataclass
class EngineRun:
    engine: str
    versions: dict[str, str] = field(default_factory=dict)
    proofs: dict[str, dict[str, Proof]] = field(default_factory=dict)  # runner -> template -> proof
    provenance: dict[str, dict[str, str]] = field(default_factory=dict)  # template -> provenance.json


@cache
def engine_run(engine: str) -> EngineRun:
    """Export every validated template for ``engine``, write it, run the harness once on all of them."""
    run = EngineRun(engine)
    target = f"{engine}-plugin"
    root = Path(tempfile.mkdtemp(prefix=f"wb-{engine}-plugins-"))
    jobs = []
    for item in validated():
        names = PluginNames.for_template(item.name)
        folder = root / names.slug
        files = build_plugin(target, item.spec, names)
        write_files(folder, files)
        run.provenance[item.name] = json.loads(files["provenance.json"])
        jobs.append(
            job_for(target, item.name, names, folder, tokenizer_for(item.name), item.report, item.spec)
        )
    answer = run_plugin_harness(jobs, [engine])
    run.versions = answer["versions"]
    for job, got in zip(jobs, answer["jobs"], strict=True):
        for runner in RUNNERS[engine]:
            run.proofs.setdefault(runner, {})[job.key] = plugin_proof(job, got, runner, run.versions)
    return run


def table(run: EngineRun, runner: str) -> str:
    """A markdown table: template -> loaded, round trips passed one-shot and streamed."""
    lines = ["| template | loaded | one-shot | streamed |", "|---|---|---|---|"]
    for name, proof in sorted(run.proofs[runner].items()):
        if proof.cases and proof.cases[0].id == "load":
            lines.append(f"| {name} | no: {proof.cases[0].detail} | - | - |")
            continue
        checked = [c for c in proof.cases if c.status != UNSUPPORTED]
        one = sum("one_shot:" not in c.detail for c in checked)
        streamed = sum("streamed:" not in c.detail for c in checked)
        lines.append(f"| {name} | yes | {one}/{len(checked)} | {streamed}/{len(checked)} |")
    return "\n".join(lines)


def needs_engines() -> None:
    reason = engines_missing_reason()
    if reason:
        pytest.skip(reason)


@pytest.mark.parametrize(("engine", "runner"), [(e, r) for e, rs in RUNNERS.items() for r in rs])
def test_every_validated_template_round_trips_through_the_engine(engine: str, runner: str) -> None:
    needs_engines()
    run = engine_run(engine)
    print(f"\n{runner} ({engine} {run.versions.get(engine)}):\n{table(run, runner)}")
    proofs = run.proofs[runner]
    assert len(proofs) == len(validated()) >= 30
    not_loaded = {n: p.cases[0].detail for n, p in proofs.items() if p.cases and p.cases[0].id == "load"}
    assert not_loaded == {}
    failures = {
        name: [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]
        for name, proof in proofs.items()
        if not proof.passed
    }
    assert failures == {}
    checked = sum(c.status != UNSUPPORTED for p in proofs.values() for c in p.cases)
    assert checked >= 250  # the round-trip cases of ~35 templates, each one-shot and streamed


@pytest.mark.parametrize("engine", list(RUNNERS))
def test_every_export_carries_its_provenance(engine: str) -> None:
    needs_engines()
    run = engine_run(engine)
    for item in validated():
        prov = run.provenance[item.name]
        assert (prov["template_name"], prov["template_sha256"], prov["engine"]) == (
            item.name,
            item.sha256,
            engine,
        )
        assert prov["workbench_version"]


@pytest.mark.parametrize(
    ("engine", "written"), [("vllm", "qwen_qwen3_0_6b_vllm.py"), ("sglang", "launch_qwen_qwen3_0_6b.py")]
)
def test_the_cli_proves_the_export_and_records_the_engine_version(
    engine: str, written: str, tmp_path: Path
) -> None:
    """`workbench export T --target E-plugin -o DIR`: proven in the engine, the version in provenance.json."""
    needs_engines()
    from typer.testing import CliRunner

    from workbench.cli import app

    template = shared_path("templates", "Qwen-Qwen3-0.6B.jinja")
    out = tmp_path / "plugin"
    result = CliRunner().invoke(
        app, ["export", str(template), "--target", f"{engine}-plugin", "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["proof"]["passed"] is True
    # Every case each way of loading ran passes: the 11 round trips of the first plug-in tests, and since
    # issue 20 the harder tool sets' cases too (16 per way for Qwen3 0.6B).
    cases = summary["proof"]["cases"]
    assert not [c for c in cases if c["status"] == "fail"], cases
    assert sum(c["status"] == "pass" for c in cases) >= 11 * len(RUNNERS[engine])
    assert (out / written).is_file()
    prov = json.loads((out / "provenance.json").read_text())
    versions = engine_versions()
    assert prov["proven_with"] == versions[engine]
    assert prov["template_sha256"] == load_template(template).sha256


@cache
def engine_versions() -> dict[str, str]:
    import subprocess

    from workbench.engines.venv import engines_python

    done = subprocess.run(
        [
            str(engines_python()),
            "-c",
            "import json; from workbench.engines.harness.response import versions; "
            "print(json.dumps(versions()))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],  # the harness package is imported from the repository
    )
    versions: dict[str, str] = json.loads(done.stdout)
    return versions
