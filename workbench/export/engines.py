"""Prove a response template with the serving engines' own code, run in their own venv.

vLLM pins a torch and a transformers the workbench cannot share, so the engines live in ``.venv-engines``
(``make engines``) and :file:`workbench/data/engine_harness.py` runs there as a subprocess: one call per
batch of templates, because importing ``vllm.parser`` alone takes 15-30 s.  Nothing here imports vLLM or
SGLang.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.export.common import CaseProof, ExportError, Proof
from workbench.runtime.chat import Tool
from workbench.runtime.formats import families, family
from workbench.runtime.spec import FormatSpec
from workbench.validate import FAIL, PASS, ROUND_TRIP_TOOLS, UNSUPPORTED, ValidationReport, compare_messages

HARNESS = Path(__file__).resolve().parents[1] / "data" / "engine_harness.py"
REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("WORKBENCH_SHARED", REPO.parent / "shared"))
ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "transformers": "transformers"}


def engines_python() -> Path | None:
    """The engines venv's interpreter: ``$WORKBENCH_ENGINES_PYTHON``, else ``.venv-engines/bin/python`` once
    ``make engines`` has finished (its ``.installed`` stamp): a venv still being built, or one whose install
    failed half-way, is not used."""
    env = os.environ.get("WORKBENCH_ENGINES_PYTHON")
    if env:
        candidate = Path(env)
    else:
        venv = REPO / ".venv-engines"
        if not (venv / ".installed").is_file():
            return None
        candidate = venv / "bin" / "python"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def engines_missing_reason() -> str:
    """Why the engines cannot run here ("" when they can): what tests print when they skip."""
    if engines_python() is not None:
        return ""
    env = os.environ.get("WORKBENCH_ENGINES_PYTHON")
    where = (
        f"WORKBENCH_ENGINES_PYTHON={env} is not an executable"
        if env
        else ".venv-engines is absent or its install did not finish"
    )
    return f"the engines venv is not installed ({where}); run `make engines`"


# Which real tokenizer streams a template's output, by the model family its name says; a format whose markers
# are one tokenizer's special tokens says so itself (``FormatFamily.tokenizer_hint``).
_TOKENIZER_HINTS = (
    ("gpt-oss", "gpt-oss"),
    ("deepseek", "deepseek-v3"),
    ("llama", "llama-3.1"),
    ("firefunction", "llama-3.1"),
)


def tokenizer_for(
    template_name: str, override: str | Path | None = None, *, spec: FormatSpec | None = None
) -> Path:
    """The tokenizer folder the harness splits outputs with: ``override``, else the one the spec's format
    names, else the one the template's name (or a format named in it) points to, else Qwen3's."""
    if override is not None:
        path = Path(override)
        return path.parent if path.is_file() else path
    lowered = template_name.lower()
    fam = family(spec.tools.format) if spec is not None else None
    hints = [fam.tokenizer_hint] if fam is not None and fam.tokenizer_hint else []
    hints += [f.tokenizer_hint for f in families().values() if f.tokenizer_hint and f.name in lowered]
    hints += [tok for hint, tok in _TOKENIZER_HINTS if hint in lowered]
    folder = SHARED / "tokenizers" / (hints[0] if hints else "qwen3")
    if not folder.is_dir():
        raise ExportError(f"no tokenizer to stream with: {folder} is absent (pass --tokenizer DIR)")
    return folder


@dataclass(frozen=True)
class Job:
    """One template and the round-trip cases its engines should parse."""

    key: str
    template: dict[str, Any]
    tokenizer: Path
    report: ValidationReport
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS
    consumers: tuple[str, ...] = ()  # empty: the batch's consumers

    def to_dict(self) -> dict[str, Any]:
        tools = [t.to_openai() for t in self.tools]
        cases = [
            {"id": c.id, "output": c.output, "prefix": c.generation_prefix, "tools": tools}
            for c in self.report.cases
            if c.status != UNSUPPORTED and c.parsed is not None
        ]
        out = {"key": self.key, "template": self.template, "tokenizer": str(self.tokenizer), "cases": cases}
        return {**out, "consumers": list(self.consumers)} if self.consumers else out


def run_harness(
    jobs: Sequence[Job], consumers: Sequence[str], *, timeout: float = 1800, python: str | Path | None = None
) -> dict[str, Any]:
    """Run the harness once for all ``jobs``; its JSON answer (``{"versions", "jobs"}``).

    ``python``: the interpreter to run it with (default: the engines venv's).  The harness needs only
    transformers for the ``transformers`` consumer, so this venv's interpreter can run that one.
    """
    python = python or engines_python()
    if python is None:
        raise ExportError(engines_missing_reason())
    request = {"consumers": list(consumers), "jobs": [j.to_dict() for j in jobs]}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the harness needs none of ours
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        done = subprocess.run(
            [str(python), str(HARNESS)],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ExportError(f"the engine harness took more than {timeout:.0f} s") from exc
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ExportError(f"the engine harness failed ({python}): {tail}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def engine_proof(
    job: Job, answer: dict[str, Any], consumer: str, spec: FormatSpec, versions: dict[str, str]
) -> Proof:
    """The harness's answer for one consumer as a :class:`Proof`: each case one-shot and streamed against
    our parser's message.  Engines assign their own call ids, so ids are compared only for transformers."""
    from workbench.export.response_template import set_aside_reason

    version = versions.get(consumer, "?")
    target = f"response-template[{ENGINE_NAMES.get(consumer, consumer)} {version}]"
    result = answer["consumers"].get(consumer) or {"accepted": False, "reason": "not run", "cases": []}
    if not result["accepted"]:
        reason = f"refused by {ENGINE_NAMES.get(consumer, consumer)} {version}: {result['reason']}"
        return Proof(target, (CaseProof("validator", FAIL, reason),), notes=(reason,))
    by_id = {c["id"]: c for c in result["cases"]}
    out: list[CaseProof] = []
    for case in job.report.cases:
        if case.status == UNSUPPORTED or case.parsed is None:
            out.append(CaseProof(case.id, UNSUPPORTED, case.reason or "case not applicable"))
            continue
        got = by_id.get(case.id, {})
        problems = []
        for mode in ("one_shot", "streamed"):
            message = got.get(mode) or {"error": "no result"}
            if "error" in message:
                problems.append(f"{mode}: raised {message['error']}")
                continue
            diff = compare_messages(
                case.parsed, message, compare_ids=case.compare_ids and consumer == "transformers"
            )
            if diff:
                problems.append(f"{mode}: {diff[0]}")
        aside = set_aside_reason(spec, case) if problems else ""
        if aside:
            out.append(CaseProof(case.id, UNSUPPORTED, aside))
        else:
            out.append(CaseProof(case.id, FAIL if problems else PASS, "; ".join(problems)))
    return Proof(target, tuple(out), notes=(f"{ENGINE_NAMES.get(consumer, consumer)} {version}",))
