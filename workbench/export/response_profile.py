"""Pick a response-template profile, build it, and prove it with the consumers it is meant for.

The transformers proof (``parse_response`` in this venv) always runs; the vLLM and SGLang proofs run their
own validators and parsers through the engine harness when the engines venv is installed, and a missing
venv is said in a warning rather than hidden.  What the proof ran with goes into the export's provenance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.engines.response_proof import Job, engine_proof, run_harness
from workbench.engines.response_rules import CONSUMERS, PROFILES, STRICTEST_FIRST
from workbench.engines.tokenizers import tokenizer_for
from workbench.engines.venv import engines_missing_reason
from workbench.export.response_template import build_response_template, prove_response_template
from workbench.proofs import ExportError, Proof, Unsupported
from workbench.runtime.spec import FormatSpec
from workbench.validate import ValidationReport


def choose_profile(spec: FormatSpec, profile: str | None) -> tuple[str, dict[str, Any]]:
    """``(profile, template)``: the one asked for, or the strictest that can express the format.

    Raises:
        Unsupported: the profile asked for (or every profile) cannot express the format; the message names
            the feature and why.
    """
    if profile is not None:
        if profile not in PROFILES:
            raise ExportError(f"unknown profile {profile!r} (choose from {', '.join(PROFILES)})")
        return profile, build_response_template(spec, profile)
    gaps: list[str] = []
    for candidate in STRICTEST_FIRST:
        try:
            return candidate, build_response_template(spec, candidate)
        except Unsupported as exc:
            gaps.append(str(exc))
    raise Unsupported(gaps[-1])


def _transformers_version() -> str:
    from importlib.metadata import version

    return version("transformers")


def prove_profile(
    spec: FormatSpec,
    report: ValidationReport,
    exported: FormatSpec,
    profile: str | None,
    tokenizer: str | Path | None = None,
) -> tuple[dict[str, Any], Proof, dict[str, Any], list[str]]:
    """``(template, proof, provenance, warnings)`` for the response-template target."""
    chosen, template = choose_profile(spec, profile)
    base = prove_response_template(template, spec, report)
    cases = list(base.cases)
    proven_with = {"transformers": _transformers_version()}
    notes: list[str] = []
    engines = [c for c in CONSUMERS[chosen] if c != "transformers"]
    if engines:
        missing = engines_missing_reason()
        if missing:
            notes.append(f"{chosen} profile proven with transformers only: {missing}")
        else:
            name = exported.provenance.template_name or spec.provenance.template_name
            job = Job(name or "spec", template, tokenizer_for(name, tokenizer, spec=spec), report)
            answer = run_harness([job], engines)
            for consumer in engines:
                proof = engine_proof(job, answer["jobs"][0], consumer, spec, answer["versions"])
                cases.extend(type(c)(f"{consumer}:{c.id}", c.status, c.detail) for c in proof.cases)
                proven_with[consumer] = answer["versions"].get(consumer, "?")
    proof = Proof(f"response-template ({chosen} profile)", tuple(cases), tuple(notes))
    provenance = {
        "profile": chosen,
        "template_name": exported.provenance.template_name,
        "template_sha256": exported.provenance.template_sha256,
        "workbench_version": exported.provenance.workbench_version or __version__,
        "proven_with": proven_with,
        "proof": proof.summary(),
        "validation": report.verdict.to_dict(),
    }
    return template, proof, provenance, notes
