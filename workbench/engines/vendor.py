"""The parser runtime a serving plug-in carries: the ``workbench/runtime/`` folder, vendored under a private
name.

A plug-in must not import ``workbench`` when the engine loads it (the engine's venv pins its own torch and
transformers; the workbench is not installed there).  Everything a plug-in runs (spec, streaming parser,
format families, value encodings, the grammar pieces its structural tags are built from) is in
``workbench/runtime/``, which imports only itself, the standard library and the packages it declares
(:data:`workbench.runtime.DEPENDENCIES`).  So the export copies the folder whole, with its
``workbench.runtime`` imports rewritten to the plug-in's private package: the parse results are the
workbench's by construction, the same code, not a port.  The format registry resolves families relative to
its own package, so it needs no rewriting beyond the imports.  The adapters call the runtime's serving
side (:mod:`workbench.runtime.serving`: the two-stage split and each request's structural tag).  The copy
is proven by ``tests/test_vendored_runtime.py``: every module imports in a fresh ``python -I`` where
``workbench`` cannot be imported.
"""

from __future__ import annotations

import re
from pathlib import Path

from workbench.proofs import ExportError

RUNTIME_ROOT = Path(__file__).resolve().parents[1] / "runtime"

_IMPORT_RX = re.compile(r"^(\s*(?:from|import)\s+)workbench\.runtime(?=[.\s])", re.MULTILINE)
_LEFT_RX = re.compile(r"^\s*(?:from|import)\s+workbench[.\s]", re.MULTILINE)


def rewrite_imports(source: str, package: str) -> str:
    """``from workbench.runtime.x import y`` -> ``from PACKAGE.x import y`` (import statements only)."""
    return _IMPORT_RX.sub(lambda m: m.group(1) + package, source)


def runtime_sources(package: str) -> dict[str, str]:
    """Every file of the vendored runtime, keyed by its path inside ``package`` (``"spec.py"``, ...).

    Raises:
        ExportError: a vendored module imports the workbench outside its runtime (the layers test keeps
            this from happening), so the plug-in would not load without the workbench installed.
    """
    files = {
        path.relative_to(RUNTIME_ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(RUNTIME_ROOT.rglob("*.py"))
    }
    out = {rel: rewrite_imports(text, package) for rel, text in sorted(files.items())}
    for rel, text in out.items():
        if _LEFT_RX.search(text):
            raise ExportError(f"the vendored runtime's {rel} imports workbench outside its runtime")
    return out
