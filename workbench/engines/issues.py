"""Known engine-side reasons a built-in parser fails a family's round trips (``workbench recommend``).

Each engine keeps its own in ``engines/<name>/issues.py`` (``ISSUES``: parser name -> issue), found by reading
the engine's code; measured with vLLM 0.32.0 and SGLang 0.5.23 (docs/export.md, "Which parser do I pass?").
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from workbench.engines import MODULES


@dataclass(frozen=True)
class EngineIssue:
    """A built-in parser that is wrong for text the template renders, found by reading the engine's code:
    ``where`` names the engine file and function, ``why`` what it does, ``formats`` the tool formats it
    concerns and ``cases`` the round-trip cases it fails for that reason (the note is attached only for a
    template of one of those formats whose first failure is one of those cases: the same parser run on
    another family's output fails for the plain reason that it is not its format)."""

    where: str
    why: str
    formats: tuple[str, ...]
    cases: tuple[str, ...]


CALL_CASES = (
    "one_call",
    "content_and_call",
    "parallel_calls",
    "string_arguments",
    "markup_arguments",
    "own_marker_arguments",
    "scalar_arguments",
    "nested_arguments",
)


def engine_issue(engine: str, name: str, tool_format: str, first: str) -> EngineIssue | None:
    """The known engine-side reason for ``name``'s first failure ``first`` (``"CASE: ..."``) on a template
    whose tool format is ``tool_format``, if any."""
    issue = ENGINE_ISSUES.get((engine, name))
    if issue is None or tool_format not in issue.formats:
        return None
    return issue if first.split(":", 1)[0] in issue.cases else None


def _collect() -> dict[tuple[str, str], EngineIssue]:
    out: dict[tuple[str, str], EngineIssue] = {}
    for engine, module in MODULES.items():
        name = f"{__package__}{module}.issues"
        try:
            issues = importlib.import_module(name).ISSUES
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # this engine has no known issues
        out.update({(engine, parser): issue for parser, issue in issues.items()})
    return out


#: Every engine's known issues by ``(engine, parser name)``.
ENGINE_ISSUES: dict[tuple[str, str], EngineIssue] = _collect()
