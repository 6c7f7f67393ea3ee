"""The import graph keeps the layers of docs/ARCHITECTURE.md: every import points down, and the runtime
stands alone.

Every module of ``workbench/`` is read as source (nothing is imported), and every import statement counts:
module level, inside functions, under ``TYPE_CHECKING``, and ``importlib.import_module`` / ``__import__`` of
a literal ``workbench...`` name.  A module belongs to the layer of its top-level package (``workbench.
runtime.spec`` -> ``runtime``; ``workbench/spec_io.py`` -> ``spec_io``).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.runtime import DEPENDENCIES

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"

#: The layers, bottom first (docs/ARCHITECTURE.md).  A module may import its own top-level package and the
#: packages of lower layers, never a higher one.  ``workbench`` itself (``__init__.py``: the version) is
#: below everything but the runtime, which must not name ``workbench`` at all (a plug-in vendors it).
LAYERS: tuple[str, ...] = (
    "runtime",
    "paths",
    "inputs",
    "spec_io",
    "template",
    "analysis",
    "formats",
    "streaming",
    "generation",
    "validate",
    "selfcheck",
    "session",
    "testing",
    "proofs",
    "engines",
    "conformance",
    "export",
    "services",
    "tui",
    "commands",
    "cli",
    "__main__",
)
ROOT = "workbench"

#: Imports that point up or sideways on purpose, each with its reason.  Empty: there are none.
ALLOWED: dict[tuple[str, str], str] = {}

# Folders of data files run in other interpreters (the engines venv), never imported by the workbench.
NOT_MODULES = ("data",)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {
        module_name(p): p
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE).parts[0] not in NOT_MODULES
    }


def imports_of(name: str, path: Path) -> Iterator[tuple[int, str]]:
    """``(line, imported module)`` for every import in the module, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # ``from workbench import analysis`` imports the sub-package
                yield node.lineno, f"{target}.{alias.name}"
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not arg.value.startswith("."):
                yield node.lineno, arg.value


def _is_dynamic_import(node: ast.Call) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in ("import_module", "__import__")
    )


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def workbench_edges() -> list[tuple[str, int, str]]:
    """``(importer, line, imported)`` for every import of a workbench module by a workbench module."""
    known = modules()
    out = []
    for name, path in known.items():
        for line, target in imports_of(name, path):
            if target == ROOT or target.startswith(ROOT + "."):
                # ``from workbench.x import name``: the module when ``name`` is an attribute, not a module
                while target not in known and "." in target:
                    target = target.rpartition(".")[0]
                out.append((name, line, target))
    return out


def rank(layer: str) -> int:
    return -1 if layer == ROOT else LAYERS.index(layer)


def test_every_top_level_package_has_a_layer() -> None:
    layers = {layer_of(m) for m in modules()} - {ROOT}
    assert sorted(layers - set(LAYERS)) == []


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for importer, line, target in workbench_edges():
        low, high = layer_of(target), layer_of(importer)
        if low == high or (high, low) in ALLOWED:
            continue
        if rank(low) > rank(high) or (low == ROOT and high == "runtime"):
            wrong.append(f"{importer}:{line} ({high}) imports {target} ({low})")
    assert wrong == []


def test_no_cycle_between_top_level_packages() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for importer, _line, target in workbench_edges():
        if layer_of(importer) != layer_of(target):
            graph[layer_of(importer)].add(layer_of(target))
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the graph's strongly connected components."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            out.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_the_runtime_imports_only_itself_the_standard_library_and_its_declared_packages() -> None:
    outside = []
    for name, path in modules().items():
        if layer_of(name) != "runtime":
            continue
        for line, target in imports_of(name, path):
            top = target.split(".")[0]
            if target.startswith("workbench.runtime") or top == "__future__":
                continue
            if top in sys.stdlib_module_names or top in DEPENDENCIES:
                continue
            outside.append(f"{name}:{line} imports {target}")
    assert outside == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import workbench.analysis.probes", ["workbench.analysis.probes"]),
        ("def f():\n    from workbench.export import run", ["workbench.export", "workbench.export.run"]),
        ("from . import spec", ["workbench.runtime", "workbench.runtime.spec"]),
        ("import importlib\nimportlib.import_module('workbench.tui')", ["importlib", "workbench.tui"]),
    ],
)
def test_the_import_reader_sees_every_kind_of_import(tmp_path: Path, source: str, expected: list) -> None:
    path = tmp_path / "__init__.py"
    path.write_text(source, encoding="utf-8")
    assert [t for _line, t in imports_of("workbench.runtime", path)] == expected
