"""Load conformance case files of both shapes into one :class:`Case` type.

Two suites live under ``../shared/conformance``: llama.cpp's (one file per template, ``"template"`` key,
cases carry ``options.tools`` as a list of names into the file's ``tools`` map) and the peers' (one file
per format family, ``"family"`` key, cases carry ``options.toolset`` as a key into the file's ``tools`` map
of lists).  Everything downstream (option translation, running, checking) works on :class:`Case` only, so
the two file shapes are dealt with here and nowhere else.

Malformed files raise :class:`CaseFileError` naming the file and the field: a conformance run over a folder
with one broken file must say which one instead of dying with a ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.runtime.errors import WorkbenchError

LLAMACPP = "llamacpp"
PEERS = "peers"


class CaseFileError(WorkbenchError, ValueError):
    """A case file (or a folder given to the runner) is not in a shape this runner understands."""


@dataclass(frozen=True)
class Case:
    """One conformance vector: a model output, how to parse it, and what must come out.

    ``group`` is the template stem for llama.cpp cases and the family for peer cases: pass rates are
    reported per group.  ``tools`` holds OpenAI-shaped tool dicts; ``tools is None`` means the request
    carried no tools (peer ``toolset: null``), which is different from an empty list only in that parsers
    must then accept any function name.
    """

    suite: str
    group: str
    name: str
    file: str
    input: str
    options: Mapping[str, Any]
    expect: Mapping[str, Any]
    tools: tuple[Mapping[str, Any], ...] | None
    chunks: tuple[str, ...] | None = None
    template: str | None = None
    source: str = ""
    parser: str = ""
    rule: str = ""
    notes: str = ""
    explicit_options: tuple[str, ...] = field(default_factory=tuple)

    @property
    def case_id(self) -> str:
        """Unique across both suites: ``suite/group/name``."""
        return f"{self.suite}/{self.group}/{self.name}"


def load_case_paths(paths: Iterable[str | Path]) -> list[Case]:
    """Every case from the given files and folders (folders: their ``*.json`` files, sorted).

    Files whose name starts with ``_`` (llama.cpp's ``_auto-parser-helpers.json``) hold expectations that
    are not template parse cases and are skipped; so are JSON files that are neither suite shape, when they
    come from a folder (a folder may hold a summary or manifest).  A file named explicitly must be a case
    file.
    """
    cases: list[Case] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.glob("*.json")):
                if child.name.startswith("_"):
                    continue
                data = _read_json(child)
                if _shape(data) is None:
                    continue
                cases.extend(cases_from_data(data, child))
        elif path.is_file():
            cases.extend(cases_from_data(_read_json(path), path))
        else:
            raise CaseFileError(f"no such case file or folder: {path}")
    _check_unique(cases)
    return cases


def cases_from_data(data: Any, path: str | Path) -> list[Case]:
    """Cases from one decoded case file (either shape)."""
    shape = _shape(data)
    if shape == LLAMACPP:
        return _llamacpp_cases(data, str(path))
    if shape == PEERS:
        return _peer_cases(data, str(path))
    raise CaseFileError(
        f"{path}: not a conformance case file (expected a 'template' or 'family' key and 'cases')"
    )


def _read_json(path: Path) -> Any:
    """A case file: bounded like every input (regular file, size cap, strict UTF-8, nesting, huge
    integers, lone surrogates), each failure one :class:`CaseFileError` line."""
    from workbench.inputs import InputError, read_json_document

    try:
        return read_json_document(path, "conformance case")
    except InputError as exc:
        raise CaseFileError(str(exc)) from None


def _shape(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        return None
    if isinstance(data.get("template"), str):
        return LLAMACPP
    if isinstance(data.get("family"), str):
        return PEERS
    return None


def _require(case: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(case, dict) or key not in case:
        raise CaseFileError(f"{where}: missing '{key}'")
    value = case[key]
    if not isinstance(value, kind):
        raise CaseFileError(f"{where}: '{key}' has the wrong type ({type(value).__name__})")
    return value


def _chunks(case: dict[str, Any], where: str) -> tuple[str, ...] | None:
    chunks = case.get("chunks")
    if chunks is None:
        return None
    if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
        raise CaseFileError(f"{where}: 'chunks' must be a list of strings")
    return tuple(chunks)


def _llamacpp_cases(data: dict[str, Any], path: str) -> list[Case]:
    template = data["template"]
    group = template[: -len(".jinja")] if template.endswith(".jinja") else template
    tool_defs = data.get("tools") or {}
    if not isinstance(tool_defs, dict):
        raise CaseFileError(f"{path}: 'tools' must map tool names to definitions")
    defaults = data.get("defaults") or {}
    out: list[Case] = []
    for i, raw in enumerate(data["cases"]):
        name, where, text = _case_head(raw, i, path)
        options = {**defaults, **_require(raw, "options", dict, where)}
        expect = _require(raw, "expect", dict, where)
        names = options.get("tools") or []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise CaseFileError(f"{where}: options.tools must be a list of tool names")
        missing = [n for n in names if n not in tool_defs]
        if missing:
            raise CaseFileError(f"{where}: options.tools names undefined tool(s) {', '.join(missing)}")
        out.append(
            _case(
                LLAMACPP,
                group,
                path,
                raw,
                (name, where, text),
                options,
                expect,
                tuple(tool_defs[n] for n in names),
                template=template,
                source=f"line {raw.get('source_line')}" if raw.get("source_line") is not None else "",
                notes=str(raw.get("test_comment") or ""),
                explicit_options=tuple(raw.get("explicit_options") or ()),
            )
        )
    return out


def _case_head(raw: Any, i: int, path: str) -> tuple[str, str, str]:
    """A case's name, where it is (for error messages) and its input text."""
    name = _require(raw, "name", str, f"{path}: case #{i}")
    where = f"{path}: case {name!r}"
    return name, where, _require(raw, "input", str, where)


def _case(
    suite: str,
    group: str,
    path: str,
    raw: dict[str, Any],
    head: tuple[str, str, str],
    options: dict[str, Any],
    expect: dict[str, Any],
    tools: tuple[Mapping[str, Any], ...] | None,
    **own: Any,
) -> Case:
    """A case from the fields both suites' files give (``head`` from :func:`_case_head`) and the suite's
    ``own`` ones (llama.cpp's template and source line, a peer case's parser and rule): the two readers
    differ only in where options and tools come from."""
    name, where, text = head
    return Case(
        suite=suite,
        group=group,
        name=name,
        file=path,
        input=text,
        options=options,
        expect=expect,
        tools=tools,
        chunks=_chunks(raw, where),
        **own,
    )


def _peer_cases(data: dict[str, Any], path: str) -> list[Case]:
    family = data["family"]
    toolsets = data.get("tools") or {}
    if not isinstance(toolsets, dict):
        raise CaseFileError(f"{path}: 'tools' must map toolset ids to lists of tools")
    out: list[Case] = []
    for i, raw in enumerate(data["cases"]):
        name, where, text = _case_head(raw, i, path)
        options = _require(raw, "options", dict, where)
        expect = _require(raw, "expect", dict, where)
        toolset = options.get("toolset")
        tools: tuple[Mapping[str, Any], ...] | None
        if toolset is None:
            tools = None
        elif toolset in toolsets and isinstance(toolsets[toolset], list):
            tools = tuple(toolsets[toolset])
        else:
            raise CaseFileError(f"{where}: options.toolset {toolset!r} is not in the file's 'tools'")
        out.append(
            _case(
                PEERS,
                family,
                path,
                raw,
                (name, where, text),
                options,
                expect,
                tools,
                source=str(raw.get("source") or ""),
                parser=str(raw.get("parser") or ""),
                rule=str(raw.get("rule") or ""),
                notes=str(raw.get("notes") or ""),
            )
        )
    return out


def _check_unique(cases: list[Case]) -> None:
    seen: dict[str, str] = {}
    for case in cases:
        if case.case_id in seen:
            raise CaseFileError(f"duplicate case {case.case_id} (in {seen[case.case_id]} and {case.file})")
        seen[case.case_id] = case.file
