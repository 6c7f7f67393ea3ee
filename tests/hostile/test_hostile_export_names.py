"""Hostile names never inject anything into an exported file (issue 22, item 1).

A template's name comes from a spec file or from the template's own file name: both are shared.  It reaches
every export target (a TOML ``pyproject.toml``, Python source, a Lark grammar, Markdown, JSON, file and folder
names).  Each target is exported with names built to break out of a string, a docstring, a comment or a
path, and the written files must parse, carry the name only as a value, and have exactly the structure (keys,
rules, statements, lines, file names) of the same export under a plain name.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import tomllib

from workbench.engines.plugin_proof import write_files
from workbench.engines.plugins import SLUG, PluginNames, runtime_requirements
from workbench.export import export, write_export
from workbench.proofs import ExportError, inline_text
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "templates" / "chatml-think-tools.jinja"

HOSTILE_NAMES = [
    'x"\ndependencies = ["evil-package"]\n#',
    "x'''\n[project.scripts]\nevil = \"evil:main\"\n'''",
    'x" scripts = {evil = "evil:main"} "',
    'x"""\nimport os; os.system("touch pwned")\n"""',
    "x\n%ignore /[a-z]+/\nstart: /evil/\n// ",
    "../../outside",
    "a/b\\c/..",
    "模板\u2028line\u0085x\r\ny\x0bz\x1e",
    "nul\x00byte",
    "\\zq\\",
]
TARGETS = ("spec", "response-template", "structural-tag", "tests", "lark", "vllm-plugin", "sglang-plugin")
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]


@pytest.fixture(scope="module")
def base_spec() -> FormatSpec:
    """The project template's spec as exported, with its recorded round-trip report (spec-only exports
    re-check those cases, nothing is rendered)."""
    result = export("spec", template=load_template(TEMPLATE))
    return FormatSpec.from_json(result.text)


@pytest.fixture(scope="module", autouse=True)
def _no_engines() -> Iterator[None]:
    """Exports are built without the engines' proofs and with the project's small tokenizer: this test is
    about what is written (each target's proof has its own tests)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("workbench.engines.plugin_proof.engines_python", lambda: None)
        patch.setattr("workbench.export.response_profile.engines_missing_reason", lambda: "not here")
        patch.setattr("workbench.export.structural_tag.qwen3_tokenizer_path", lambda: None)
        patch.setattr("workbench.generation.tiny.qwen3_tokenizer_path", lambda: None)
        yield


def _tools() -> list[Any]:
    from workbench.runtime.chat import Tool

    return [Tool.from_openai(t) for t in TOOLS]


def _named(spec: FormatSpec, name: str) -> FormatSpec:
    return replace(spec, provenance=replace(spec.provenance, template_name=name))


def _export(target: str, spec: FormatSpec) -> dict[str, str]:
    result = export(target, spec=spec, tools=_tools(), force=True)
    return result.files if result.files is not None else {"out": result.text}


def _slugless(text: str, slug: str) -> str:
    """``text`` with the slug (as a whole word between non-alphanumerics) written as SLUG."""
    return re.sub(rf"(?<![a-z0-9]){re.escape(slug)}(?![a-z0-9])", "SLUG", text)


def _py_shape(text: str, slug: str) -> list[tuple[str, ...]]:
    """The top-level statements of a Python file: their kind and the names they bind or import (the slug
    replaced: the vendored runtime is imported under it)."""
    shape: list[tuple[str, ...]] = []
    for node in ast.parse(text).body:
        names: tuple[str, ...] = ()
        if isinstance(node, ast.Assign):
            names = tuple(ast.unparse(t) for t in node.targets)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = (getattr(node, "module", "") or "", *(a.name for a in node.names))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = (node.name,)
        shape.append((type(node).__name__, *(_slugless(n, slug) for n in names)))
    return shape


def _lark_shape(text: str) -> list[str]:
    """A Lark grammar's lines: comments as ``//``, rules by name."""
    return ["//" if line.startswith("//") else line.split(":", 1)[0] for line in text.splitlines()]


def _structure(target: str, files: dict[str, str], slug: str) -> dict[str, Any]:
    """What must not change with the name: file names (slug replaced), and per file its parsed structure."""
    out: dict[str, Any] = {}
    for rel, text in files.items():
        text.encode("utf-8")  # writable as UTF-8: no lone surrogate left in
        role = _slugless(rel, slug)
        if rel.endswith(".py") or target == "tests":
            out[role] = _py_shape(text, slug)
            body = ast.parse(text).body
            if body:
                out[role + ":docstring-lines"] = (body[0].end_lineno or 0) - body[0].lineno  # source lines
        elif rel.endswith(".toml"):
            data = tomllib.loads(text)
            out[role] = {
                "keys": sorted(data),
                "project": sorted(data["project"]),
                "entry-points": {
                    k: sorted(_slugless(n, slug) for n in v)
                    for k, v in data["project"]["entry-points"].items()
                },
            }
        elif rel.endswith(".json") or target in ("spec", "response-template", "structural-tag"):
            out[role] = sorted(json.loads(text))
        elif target == "lark":
            out[role] = _lark_shape(text)
        else:  # Markdown, flags: the same lines
            out[role] = len(text.splitlines())
    return out


@pytest.fixture(scope="module")
def plain(base_spec: FormatSpec) -> dict[str, dict[str, Any]]:
    out = {}
    for target in TARGETS:
        files = _export(target, _named(base_spec, "benign-qz"))
        out[target] = _structure(target, files, "benign_qz")
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=[f"name{i}" for i in range(len(HOSTILE_NAMES))])
def test_a_hostile_template_name_injects_nothing_into_any_export(
    target: str, name: str, base_spec: FormatSpec, plain: dict[str, dict[str, Any]]
) -> None:
    files = _export(target, _named(base_spec, name))
    slug = PluginNames.for_template(name).slug
    assert SLUG.fullmatch(slug)
    assert _structure(target, files, slug) == plain[target]
    for rel, text in files.items():
        assert ".." not in Path(rel).parts and not rel.startswith("/")
        if rel.endswith(".toml"):
            project = tomllib.loads(text)["project"]
            # exactly what the vendored runtime imports (runtime.DEPENDENCIES), nothing a name added
            assert project.get("dependencies", []) == runtime_requirements() and "scripts" not in project
            assert project["name"] == f"workbench-plugin-{slug.replace('_', '-')}"
            assert "\n" not in project["description"]
        if target == "lark":
            assert not any(line.startswith("%") for line in text.splitlines())
        if target == "spec":
            assert json.loads(text)["provenance"]["template_name"] == name  # kept as a value, exactly


def test_the_name_is_still_readable_where_it_is_shown(base_spec: FormatSpec) -> None:
    name = 'Qwen "3" \\ think\nmore'
    files = _export("vllm-plugin", _named(base_spec, name))
    readme = files["README.md"]
    assert readme.splitlines()[0] == "# vLLM parsers for " + inline_text(name)
    assert inline_text(name) == 'Qwen \\"3\\" \\\\ think\\nmore'
    single = next(text for rel, text in files.items() if rel.endswith("_vllm.py"))
    assert 'Qwen "3" \\ think\nmore' in (ast.get_docstring(ast.parse(single)) or "")  # escapes read back


@pytest.mark.parametrize("target", ["tests", "lark", "vllm-plugin"])
def test_a_hostile_template_file_name_injects_nothing(
    target: str, tmp_path: Path, plain: dict[str, dict[str, Any]]
) -> None:
    """The template's own file name (``path.stem``) is the other way a name comes in; bytes that are not
    UTF-8 arrive as lone surrogates."""
    stem = 'x"\ndependencies = ["evil"]\n%ignore "a"\n"""\nimport os\n\udcff'  # \udcff: the byte 0xff
    path = tmp_path / f"{stem}.jinja"
    shutil.copy(TEMPLATE, path)
    template = load_template(path)
    assert template.name == stem.replace("\udcff", "\ufffd")  # a label: made printable
    result = export(target, template=template, tools=_tools(), force=True)
    files = result.files if result.files is not None else {"out": result.text}
    slug = PluginNames.for_template(stem).slug
    assert _structure(target, files, slug) == plain[target]
    out = tmp_path / "out"
    written = write_export(result, out if result.files is not None else tmp_path / "out.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, written.name])


def test_a_spec_file_whose_name_is_not_text_is_refused_with_one_line(
    base_spec: FormatSpec, tmp_path: Path
) -> None:
    from workbench.spec_io import load_spec

    data = json.loads(base_spec.to_json())
    data["provenance"]["template_name"] = "lone \ud800 surrogate"
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii: the file holds the escape
    with pytest.raises(WorkbenchError, match=r"provenance\.template_name holds a lone surrogate"):
        load_spec(path)


@pytest.mark.parametrize("rel", ["../escape.py", "/abs/path.py", "a/../../b.py", "a\\..\\b.py", "a\x00b"])
def test_write_files_refuses_a_path_outside_the_folder(rel: str, tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    with pytest.raises(ExportError, match="stay inside its folder"):
        write_files(folder, {"ok.txt": "fine", rel: "evil"})
    assert list(folder.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["export"]


@pytest.mark.parametrize("name", [*HOSTILE_NAMES, "", "9lives", "_" * 80, "Ω" * 5, "a" * 200])
def test_plugin_names_are_strict_slugs(name: str) -> None:
    names = PluginNames.for_template(name)
    assert SLUG.fullmatch(names.slug)
    for derived in (names.parser, names.package, names.single_runtime):
        assert re.fullmatch(r"[a-z_][a-z0-9_]*", derived)
    assert re.fullmatch(r"[a-z0-9-]+", names.distribution)


def test_a_slug_of_another_shape_is_refused() -> None:
    with pytest.raises(ValueError):
        PluginNames('x"\nimport os')
