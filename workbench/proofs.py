"""What every export target and every engine proof shares: the error types and the consumer's :class:`Proof`.

Kept apart from the targets so that each target module depends only on this one, never on another target,
and below :mod:`workbench.engines`, whose proofs build :class:`Proof` values too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from workbench.runtime.errors import WorkbenchError
from workbench.validate import FAIL, PASS, UNSUPPORTED, CaseResult, ValidationReport


class ExportError(WorkbenchError):
    """The spec cannot be exported to the requested target (the message says why, in one line)."""


@dataclass(frozen=True)
class CaseProof:
    """One round-trip case as checked by a consumer."""

    id: str
    status: str  # pass | fail | unsupported
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Proof:
    """What running the consumer on the round-trip cases showed."""

    target: str
    cases: tuple[CaseProof, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        checked = [c for c in self.cases if c.status != UNSUPPORTED]
        return bool(checked) and all(c.status == PASS for c in checked)

    def summary(self) -> str:
        checked = [c for c in self.cases if c.status != UNSUPPORTED]
        ok = sum(c.status == PASS for c in checked)
        return f"{self.target}: {ok}/{len(checked)} round-trip cases accepted by the consumer"

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "passed": self.passed,
            "summary": self.summary(),
            "notes": list(self.notes),
            "cases": [c.to_dict() for c in self.cases],
        }


class Unsupported(ExportError):
    """The target format cannot express this spec (e.g. a response_template cannot read Python calls)."""


def first_line(exc: BaseException) -> str:
    """The first line of a consumer's exception: transformers and xgrammar errors can run to many lines."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else ""


def inline_text(text: str) -> str:
    """``text`` made safe to place inside one line of a generated file: a comment, a docstring, a Markdown
    line.  Names in exports come from spec files and file names, which people share: a template named
    ``x``, three double quotes, a newline and ``import os`` must not end the docstring or the comment it
    is written into.

    Backslashes, double quotes and every character that is not printable (line breaks of every kind,
    control characters, lone surrogates) become escapes, so the result ends no line, no string and no
    docstring, and encodes as UTF-8.
    """
    out: list[str] = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(ascii(ch)[1:-1])  # "\\n", "\\x00", "\\u2028", "\\ud800"
    return "".join(out)


def open_tokenizer(path: str | Path) -> tuple[Any, str]:
    """A Hugging Face fast tokenizer from ``path`` (a folder with ``tokenizer.json``, or the file itself) and
    the name it is reported under (its folder's name).

    The file is the user's (``--tokenizer``) and may be anything: not JSON, a JSON of the wrong shape, a
    vocabulary with no tokens.  Whatever transformers or the tokenizers library raise on it becomes one
    :class:`ExportError` line.
    """
    from transformers import PreTrainedTokenizerFast

    given = Path(path)
    folder = given if given.is_dir() else given.parent
    file = given / "tokenizer.json" if given.is_dir() else given
    if not file.is_file():
        raise ExportError(f"tokenizer not found: {file}")
    try:
        if (folder / "tokenizer_config.json").is_file() and file.name == "tokenizer.json":
            tokenizer = PreTrainedTokenizerFast.from_pretrained(str(folder))
        else:
            tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(file))
        if len(tokenizer) == 0:  # the size, not get_vocab(): that builds a dict of the whole vocabulary
            raise ValueError("the vocabulary is empty")
    except Exception as exc:  # the tokenizers library raises its own Exception subclasses
        why = first_line(exc) or type(exc).__name__
        raise ExportError(f"cannot read the tokenizer {file}: {why}") from None
    return tokenizer, folder.name


def applicable(case: CaseResult) -> bool:
    """Whether a consumer is held to ``case``: the report applies it and our parser gave a message.  The
    harnesses are sent only these cases, and :func:`consumer_case_proofs` judges only these."""
    return case.status != UNSUPPORTED and case.parsed is not None


def applicable_cases(report: ValidationReport) -> list[tuple[CaseResult, dict[str, Any]]]:
    """The report's :func:`applicable` cases, each with our parser's message: what a harness is sent."""
    return [(c, c.parsed) for c in report.cases if c.parsed is not None and applicable(c)]


#: ``(case, the consumer's message) -> differences``: how one consumer's message is held to the case's.
Differences = Callable[[CaseResult, dict[str, Any]], list[str]]


def consumer_case_proofs(
    report: ValidationReport,
    results: Sequence[dict[str, Any]],
    differences: Differences,
    set_aside: Callable[[CaseResult], str] | None = None,
) -> tuple[CaseProof, ...]:
    """Each round-trip case as a consumer's harness answered it (``{"id", "one_shot", "streamed"}``), one-shot
    and streamed, against our parser's message.  A case the report does not apply is unsupported; a
    disagreement ``set_aside`` explains (beyond what the target can express) is set aside, not failed."""
    by_id = {c["id"]: c for c in results}
    out: list[CaseProof] = []
    for case in report.cases:
        if not applicable(case):
            out.append(CaseProof(case.id, UNSUPPORTED, case.reason or "case not applicable"))
            continue
        got = by_id.get(case.id, {})
        problems = []
        for mode in ("one_shot", "streamed"):
            message = got.get(mode) or {"error": "no result"}
            if "error" in message:
                problems.append(f"{mode}: raised {message['error']}")
                continue
            diff = differences(case, message)
            if diff:
                problems.append(f"{mode}: {diff[0]}")
        aside = set_aside(case) if problems and set_aside is not None else ""
        if aside:
            out.append(CaseProof(case.id, UNSUPPORTED, aside))
        else:
            out.append(CaseProof(case.id, FAIL if problems else PASS, "; ".join(problems)))
    return tuple(out)


def harness_proof(
    target: str,
    note: str,
    result: dict[str, Any] | None,
    report: ValidationReport,
    differences: Differences,
    *,
    refused: tuple[str, str],
    set_aside: Callable[[CaseResult], str] | None = None,
) -> Proof:
    """One consumer's (or way of loading's) harness result as a :class:`Proof`.  A result that is missing
    or not accepted is one failed case: ``refused`` is ``(step, why)``, the step it failed at (loading,
    validating) and the words put before the harness's reason, so no round-trip case reads as if it ran.
    Otherwise each case as :func:`consumer_case_proofs` judges it, with ``note`` (the consumer's name)."""
    result = result or {"accepted": False, "reason": "not run", "cases": []}
    if not result["accepted"]:
        step, why = refused
        reason = f"{why}: {result['reason']}"
        return Proof(target, (CaseProof(step, FAIL, reason),), notes=(reason,))
    return Proof(target, consumer_case_proofs(report, result["cases"], differences, set_aside), notes=(note,))
