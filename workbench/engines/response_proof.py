"""Prove a response template with the serving engines' own code, run in their own venv.

vLLM pins a torch and a transformers the workbench cannot share, so the engines live in ``.venv-engines``
(``make engines``) and :file:`workbench/engines/harness/response.py` runs there as a subprocess: one call per
batch of templates, because importing ``vllm.parser`` alone takes 15-30 s.  Nothing here imports vLLM or
SGLang.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.engines import engine
from workbench.engines.harness import schema
from workbench.engines.harness.launch import run_harness_module
from workbench.engines.response_rules import set_aside_reason
from workbench.engines.venv import engines_missing_reason, engines_python
from workbench.proofs import ExportError, Proof, applicable_cases, harness_proof
from workbench.runtime.chat import Tool
from workbench.runtime.spec import FormatSpec
from workbench.validate import ROUND_TRIP_TOOLS, CaseResult, ValidationReport, compare_messages


@dataclass(frozen=True)
class Job:
    """One template and the round-trip cases its engines should parse."""

    key: str
    template: dict[str, Any]
    tokenizer: Path
    report: ValidationReport
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS
    consumers: tuple[str, ...] = ()  # empty: the batch's consumers

    def request(self) -> schema.ResponseJob:
        """The harness's view of the job (its applicable cases only)."""
        tools = [t.to_openai() for t in self.tools]
        cases = [
            schema.Case(c.id, c.output, c.generation_prefix, tools)
            for c, _parsed in applicable_cases(self.report)
        ]
        return schema.ResponseJob(
            self.key, self.template, str(self.tokenizer), cases, list(self.consumers) or None
        )


def run_harness(
    jobs: Sequence[Job], consumers: Sequence[str], *, timeout: float = 1800, python: str | Path | None = None
) -> dict[str, Any]:
    """Run the harness once for all ``jobs``; its JSON answer (``{"versions", "jobs"}``, a
    :class:`~workbench.engines.harness.schema.ResponseAnswer`).

    ``python``: the interpreter to run it with (default: the engines venv's).  The harness needs only
    transformers for the ``transformers`` consumer, so this venv's interpreter can run that one.
    """
    python = python or engines_python()
    if python is None:
        raise ExportError(engines_missing_reason())
    request = schema.ResponseRequest(list(consumers), [j.request() for j in jobs])
    return run_harness_module(
        "response", request, schema.ResponseAnswer, python=python, timeout=timeout, what="engine harness"
    )


def engine_proof(
    job: Job, answer: dict[str, Any], consumer: str, spec: FormatSpec, versions: dict[str, str]
) -> Proof:
    """The harness's answer for one consumer as a :class:`Proof`: each case one-shot and streamed against
    our parser's message.  Engines assign their own call ids, so ids are compared only for transformers."""
    display = engine(consumer).display
    version = versions.get(consumer, "?")
    target = f"response-template[{display} {version}]"
    label = f"{display} {version}"
    compare_ids = engine(consumer).compares_ids

    def differences(case: CaseResult, message: dict[str, Any]) -> list[str]:
        return compare_messages(case.parsed or {}, message, compare_ids=case.compare_ids and compare_ids)

    result = answer["consumers"].get(consumer)
    refused = ("validator", f"refused by {label}")
    return harness_proof(
        target,
        label,
        result,
        job.report,
        differences,
        refused=refused,
        set_aside=lambda c: set_aside_reason(spec, c),
    )
