"""The shared templates' response-template profiles, run through their consumers in one harness call.

Importing the engines takes 15-30 s, so every template and profile goes into one batch (each job names its
own consumers: vLLM for ``vllm``, SGLang for ``sglang``, both for ``portable``);
the results are cached for the module's tests.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cache

from tests.conftest import shared_path, shared_templates
from workbench.engines.response_proof import Job, engine_proof, run_harness
from workbench.engines.tokenizers import tokenizer_for
from workbench.export import Unsupported, build_response_template
from workbench.formats import analyze
from workbench.proofs import Proof
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template
from workbench.validate import UNSUPPORTED, ValidationReport, validate


@dataclass(frozen=True)
class Item:
    name: str
    spec: FormatSpec
    report: ValidationReport


@cache
def tool_capable() -> tuple[Item, ...]:
    """Every shared template with a tool format whose spec validates (the ones an export is made for)."""
    shared_path("templates")
    out = []
    for path in shared_templates():
        source = load_template(path)
        spec = analyze(source).spec
        if spec.tools.format == "none":
            continue
        report = validate(source, spec)
        if report.validated:
            out.append(Item(source.name, spec, report))
    return tuple(out)


@dataclass
class ProfileRun:
    """Per profile: the templates it cannot express (with why), and per consumer the proof of the rest."""

    profile: str
    unsupported: dict[str, str] = field(default_factory=dict)
    proofs: dict[str, dict[str, Proof]] = field(default_factory=dict)  # consumer -> template -> proof
    versions: dict[str, str] = field(default_factory=dict)


def run_profiles(profiles: dict[str, tuple[str, ...]], *, python: str | None = None) -> dict[str, ProfileRun]:
    """Build each profile for every template and run its consumers (``profiles``: profile -> consumers) on
    all of them in one harness call: importing vLLM and SGLang once, not once per profile."""
    runs = {profile: ProfileRun(profile) for profile in profiles}
    jobs, owners = [], []
    for profile, consumers in profiles.items():
        for item in tool_capable():
            try:
                template = build_response_template(item.spec, profile)
            except Unsupported as exc:
                runs[profile].unsupported[item.name] = str(exc)
                continue
            key = f"{profile}/{item.name}"
            jobs.append(Job(key, template, tokenizer_for(item.name), item.report, consumers=consumers))
            owners.append((profile, item))
    consumers_all = tuple(dict.fromkeys(c for cs in profiles.values() for c in cs))
    answer = run_harness(jobs, consumers_all, python=python)
    for run in runs.values():
        run.versions = answer["versions"]
    for (profile, item), job, got in zip(owners, jobs, answer["jobs"], strict=True):
        for consumer in profiles[profile]:
            proof = engine_proof(job, got, consumer, item.spec, answer["versions"])
            runs[profile].proofs.setdefault(consumer, {})[item.name] = proof
    return runs


#: The engine profiles and who proves each: every one in one harness call.
ENGINE_PROFILES = {"vllm": ("vllm",), "sglang": ("sglang",), "portable": ("vllm", "sglang")}


@cache
def engine_runs() -> dict[str, ProfileRun]:
    return run_profiles(ENGINE_PROFILES)


def engine_run(profile: str) -> ProfileRun:
    return engine_runs()[profile]


@cache
def transformers_run(profile: str) -> ProfileRun:
    """The profile through transformers in this venv (no engines needed)."""
    return run_profiles({profile: ("transformers",)}, python=sys.executable)[profile]


def table(run: ProfileRun, consumer: str) -> str:
    """A markdown table: template -> accepted by the validator, round trips passed (one-shot and streamed)."""
    lines = ["| template | accepted | round trips (one-shot + streamed) | set aside |", "|---|---|---|---|"]
    for name, proof in sorted(run.proofs.get(consumer, {}).items()):
        refused = [c for c in proof.cases if c.id == "validator"]
        checked = [c for c in proof.cases if c.status != UNSUPPORTED]
        ok = sum(c.status == "pass" for c in checked)
        aside = [c.id for c in proof.cases if c.status == UNSUPPORTED and "template" not in c.detail]
        accepted = "no: " + refused[0].detail if refused else "yes"
        lines.append(f"| {name} | {accepted} | {ok}/{len(checked)} | {', '.join(aside) or '-'} |")
    for name, why in sorted(run.unsupported.items()):
        lines.append(f"| {name} | not expressible: {why} | - | - |")
    return "\n".join(lines)


def failures(run: ProfileRun, consumer: str) -> dict[str, list[str]]:
    return {
        name: [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]
        for name, proof in run.proofs.get(consumer, {}).items()
        if not proof.passed
    }
