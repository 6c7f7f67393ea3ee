"""Prove plug-in exports in the real engines: :mod:`workbench.engines.harness.plugin` in the engines' venv.

The harness loads each export the way the engine would (vLLM's ``--tool-parser-plugin`` loader and its
``vllm.general_plugins`` entry-point loader; SGLang's registries through the launcher's ``register``) and
runs the template's round-trip outputs through the engine's own parser composition, one-shot and streamed
as a real tokenizer's token deltas.  Many templates go in one subprocess (importing vLLM takes 15-30 s).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from workbench.engines.harness import schema
from workbench.engines.harness.launch import run_harness_module
from workbench.engines.venv import engines_missing_reason, engines_python
from workbench.proofs import CaseProof, ExportError, Proof, applicable_cases, harness_proof
from workbench.validate import ROUND_TRIP_TOOLS, CaseResult, ValidationReport, compare_messages

#: What the harness calls each way of loading a plug-in, and the engine it belongs to.
RUNNERS = {"vllm-file": "vllm", "vllm-package": "vllm", "sglang": "sglang"}
LABELS = {"vllm-file": "vLLM --tool-parser-plugin", "vllm-package": "vLLM entry point", "sglang": "SGLang"}


@dataclass(frozen=True)
class PluginJob:
    """One exported plug-in folder, the tokenizer to stream with, and the cases it must parse back."""

    key: str
    parser: str
    folder: Path
    tokenizer: Path
    report: ValidationReport
    vllm: dict[str, str] | None = None
    sglang: dict[str, str] | None = None
    reasoning: tuple[str, str] = ("", "")  # the spec's reasoning start and end markers, stripped
    runners: tuple[str, ...] | None = None  # None: the harness's default runners of each engine
    ends: tuple[str, ...] = ()  # what ends a turn (a structural tag may stop before one)

    def request(self) -> schema.PluginJob:
        """The harness's view of the job (its applicable cases only; paths made absolute)."""
        tools = [t.to_openai() for t in ROUND_TRIP_TOOLS]
        cases = [
            schema.Case(
                c.id,
                c.output,
                c.generation_prefix,
                tools,
                calls=[call.get("name", "") for call in parsed.get("tool_calls") or []],
                content=bool(str(parsed.get("content") or "").strip()),
            )
            for c, parsed in applicable_cases(self.report)
        ]
        out = schema.PluginJob(self.key, self.parser, str(self.tokenizer), cases)
        if self.runners is not None:
            out.runners = list(self.runners)
        if self.vllm is not None:
            out.vllm = {k: str(self.folder / v) for k, v in self.vllm.items() if k != "package"}
            out.vllm["package"] = self.vllm["package"]
            out.vllm["ends"] = list(self.ends)
        if self.sglang is not None:
            out.sglang = {k: str(self.folder / v) for k, v in self.sglang.items()}
            out.sglang["reasoning"] = list(self.reasoning)
            out.sglang["ends"] = list(self.ends)
        return out


def exact_differences(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Where the texts differ at all, whitespace included (``compare_messages`` trims it, as templates pad
    content; a plug-in carries our parser, so it must give the same text).  Whitespace-only text counts as
    empty: the engines drop it (vLLM returns no content for whitespace-only content)."""
    out = []
    for key in ("content", "reasoning_content"):
        want, have = expected.get(key) or "", got.get(key) or ""
        want, have = (want if want.strip() else ""), (have if have.strip() else "")
        if want != have:
            out.append(f"{key}: expected exactly {want!r}, got {have!r}")
    return out


def run_plugin_harness(
    jobs: Sequence[PluginJob], engines: Sequence[str], *, timeout: float = 1800
) -> dict[str, Any]:
    """Run the harness once for all ``jobs``; its JSON answer (``{"versions", "jobs"}``, a
    :class:`~workbench.engines.harness.schema.PluginAnswer`).  The harness keeps the plug-ins from importing
    the workbench (:mod:`workbench.engines.harness.plugin`): they must load without it."""
    python = engines_python()
    if python is None:
        raise ExportError(engines_missing_reason())
    request = schema.PluginRequest(list(engines), [j.request() for j in jobs])
    return run_harness_module(
        "plugin",
        request,
        schema.PluginAnswer,
        python=python,
        timeout=timeout,
        what="plug-in harness",
        env={"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")},
    )


def plugin_proof(job: PluginJob, answer: dict[str, Any], runner: str, versions: dict[str, str]) -> Proof:
    """One way of loading the plug-in, as a :class:`Proof`: each case one-shot and streamed against our
    parser's message (call ids are the engine's to assign, so they are not compared)."""
    engine = RUNNERS[runner]
    version = versions.get(engine, "?")
    target = f"{runner}[{LABELS[runner]} {version}]"
    label = f"{LABELS[runner]} {version}"

    def differences(case: CaseResult, message: dict[str, Any]) -> list[str]:
        expected = case.parsed or {}
        return compare_messages(expected, message, compare_ids=False) or exact_differences(expected, message)

    result = answer["engines"].get(runner)
    return harness_proof(
        target, label, result, job.report, differences, refused=("load", f"not loaded by {label}")
    )


PLUGIN_TARGETS = ("vllm-plugin", "sglang-plugin")
_TARGET_RUNNERS = {"vllm-plugin": ("vllm-file", "vllm-package"), "sglang-plugin": ("sglang",)}


def job_for(
    target: str, key: str, names: Any, folder: Path, tokenizer: Path, report: ValidationReport, spec: Any
) -> PluginJob:
    """The harness job for an export written to ``folder`` (paths as :func:`build_plugin` lays them out)."""
    markers = (spec.reasoning.start.strip(), spec.reasoning.end.strip())
    if target == "vllm-plugin":
        vllm = {
            "file": f"{names.slug}_vllm.py",
            "package_src": "package/src",
            "pyproject": "package/pyproject.toml",
            "package": names.package,
        }
        return PluginJob(key, names.parser, folder, tokenizer, report, vllm=vllm, reasoning=markers)
    return PluginJob(
        key,
        names.parser,
        folder,
        tokenizer,
        report,
        sglang={"module": f"{names.slug}_sglang.py"},
        reasoning=markers,
    )


def build_plugin(target: str, spec: Any, names: Any, engine_version: str = "") -> dict[str, str]:
    from workbench.engines.sglang.plugin import build_sglang_plugin
    from workbench.engines.vllm.plugin import build_vllm_plugin

    build = build_vllm_plugin if target == "vllm-plugin" else build_sglang_plugin
    return build(spec, names, engine_version)


def write_files(folder: Path, files: dict[str, str]) -> None:
    """Write an export's files under ``folder`` (each atomically; folders made as needed).

    Every path must stay inside ``folder``: relative, no ``..`` part (the names are slugs, this is the last
    guard should one ever come from a file)."""
    from workbench.session import write_atomic

    for rel in files:
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts or "\\" in rel or "\x00" in rel:
            raise ExportError(f"refusing to write {rel!r}: an export's files stay inside its folder")
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)


def merged_proof(target: str, proofs: Sequence[Proof]) -> Proof:
    """The proofs of each way of loading the plug-in as one, each case named ``runner:case``."""
    cases = tuple(
        CaseProof(f"{p.target.split('[')[0]}:{c.id}", c.status, c.detail) for p in proofs for c in p.cases
    )
    notes = tuple(n for p in proofs for n in p.notes)
    return Proof(f"{target}[{', '.join(dict.fromkeys(notes))}]", cases, notes)


def export_plugin(
    target: str, spec: Any, report: ValidationReport, *, tokenizer: str | Path | None = None
) -> tuple[dict[str, str], Proof | None, list[str]]:
    """Build a plug-in export and prove it in the engine when the engines venv is there.

    Returns the files (with the proven engine version in their provenance), the proof (None when the
    engines are absent) and warnings.
    """
    import tempfile

    from workbench.engines.plugins import PluginNames
    from workbench.engines.tokenizers import tokenizer_for

    names = PluginNames.for_template(spec.provenance.template_name or "format")
    if engines_python() is None:
        warning = f"not proven in the engine: {engines_missing_reason()}"
        return build_plugin(target, spec, names), None, [warning]
    with tempfile.TemporaryDirectory(prefix="wb-plugin-") as tmp:
        folder = Path(tmp)
        write_files(folder, build_plugin(target, spec, names))
        job = job_for(
            target,
            names.slug,
            names,
            folder,
            tokenizer_for(spec.provenance.template_name or names.slug, tokenizer, spec=spec),
            report,
            spec,
        )
        engine = "vllm" if target == "vllm-plugin" else "sglang"
        answer = run_plugin_harness([job], [engine])
        proofs = [
            plugin_proof(job, answer["jobs"][0], r, answer["versions"]) for r in _TARGET_RUNNERS[target]
        ]
    version = answer["versions"].get(engine, "")
    return build_plugin(target, spec, names, version), merged_proof(target, proofs), []
