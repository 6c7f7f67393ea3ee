"""What the vLLM and SGLang plug-in exports share: names, provenance, the embedded spec, the single-file form.

A plug-in export is a folder of files (``{relative path: text}``), built purely from the spec; the engines'
harness proves it afterwards (:mod:`workbench.engines.plugin_proof`).
"""

from __future__ import annotations

import pprint
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.engines.vendor import runtime_sources
from workbench.runtime import DEPENDENCIES
from workbench.runtime.spec import FormatSpec

#: Every name an export registers or installs under (files, folders, package, entry point, parser flag)
#: is built from a slug of this shape, so no name from a spec file or a file name reaches them as written.
SLUG = re.compile(r"[a-z][a-z0-9_]{0,59}")


@dataclass(frozen=True)
class PluginNames:
    """The names one export registers and installs under, all derived from the template's name."""

    slug: str  # lower-case, [a-z0-9_]: "qwen_qwen3_0_6b"

    def __post_init__(self) -> None:
        if not SLUG.fullmatch(self.slug):
            raise ValueError(f"plug-in slug {self.slug!r} is not of the form {SLUG.pattern}")

    @classmethod
    def for_template(cls, name: str) -> PluginNames:
        slug = re.sub(r"[^a-z0-9]+", "_", name.lower(), flags=re.ASCII).strip("_") or "format"
        if slug[0].isdigit():
            slug = "t_" + slug
        return cls(slug[:60].rstrip("_"))

    @property
    def parser(self) -> str:
        """The ``--tool-call-parser`` / ``--reasoning-parser`` value (and the SGLang parser name)."""
        return "wb_" + self.slug

    @property
    def package(self) -> str:
        """The Python package of the pip-installable plug-in."""
        return "workbench_plugin_" + self.slug

    @property
    def distribution(self) -> str:
        return "workbench-plugin-" + self.slug.replace("_", "-")

    @property
    def single_runtime(self) -> str:
        """The private top-level name the single-file plug-in loads its embedded runtime under."""
        return "_workbench_runtime_" + self.slug


def runtime_requirements() -> list[str]:
    """The distributions the vendored runtime imports (:data:`workbench.runtime.DEPENDENCIES`): every engine
    the plug-ins serve in installs them already, and the plug-in declares them."""
    return sorted(set(DEPENDENCIES.values()))


def requirements_note() -> str:
    """One line a single-file plug-in carries about what it needs beside the engine."""
    return f"Needs (the engine installs them): {', '.join(runtime_requirements())}.\n"


def provenance(spec: FormatSpec, engine: str, engine_version: str) -> dict[str, Any]:
    """Where an export comes from, what it was proven with (``engine_version`` "" until proven) and the
    validation verdict of the spec (``validation``: what was untested when exported with ``--force``)."""
    prov = spec.provenance
    return {
        "template_name": prov.template_name,
        "template_sha256": prov.template_sha256,
        "workbench_version": __version__,
        "engine": engine,
        "proven_with": engine_version or "not proven (engines venv absent: run `make engines`)",
        "validation": validation_record(spec),
    }


def validation_record(spec: FormatSpec) -> dict[str, Any]:
    """The verdict of the validation report the spec carries (``ValidationVerdict.to_dict()``); a spec
    that carries none was never validated."""
    from workbench.validate import report_from_spec

    report = report_from_spec(spec)
    if report is None:
        return {"status": "nothing_tested", "validated": False, "headline": "NOT validated: no report"}
    return report.verdict.to_dict()


def exported_module(spec: FormatSpec, prov: dict[str, Any]) -> str:
    """The runtime's ``exported`` module: the spec JSON and the provenance, as Python literals (``repr``:
    every name in them is a string value, never source text)."""
    provenance_literal = pprint.pformat(dict(sorted(prov.items())), width=108, sort_dicts=True)
    return (
        '"""The exported chat format (a workbench FormatSpec) and where it came from."""\n\n'
        # a Python literal (JSON's true/false/null are not Python)
        f"SPEC_JSON = {spec.to_json()!r}\n\nPROVENANCE = {provenance_literal}\n"
    )


def runtime_files(package: str, spec: FormatSpec, prov: dict[str, Any]) -> dict[str, str]:
    files = runtime_sources(package)
    files["exported.py"] = exported_module(spec, prov)
    return files


def adapter_source(path: Path, runtime: str, parser_name: str) -> str:
    """An engine's adapter (``workbench/engines/<name>/adapter.py``, never imported here) with its
    placeholders filled in."""
    text = path.read_text(encoding="utf-8")
    return text.replace("__WORKBENCH_RUNTIME__", runtime).replace("__WORKBENCH_PARSER_NAME__", parser_name)


_LOADER = """
# The parser runtime (workbench's parser, vendored) travels inside this file: a module finder serves it
# under a private name, so nothing needs installing beside the file.
import importlib.abc as _abc
import importlib.util as _util
import sys as _sys

_RUNTIME_NAME = {runtime!r}
_SOURCES = {sources}


class _EmbeddedRuntime(_abc.MetaPathFinder, _abc.Loader):
    def _file(self, fullname):
        if fullname != _RUNTIME_NAME and not fullname.startswith(_RUNTIME_NAME + "."):
            return None
        base = "/".join(fullname.split(".")[1:])
        for candidate in (base + "/__init__.py" if base else "__init__.py", base + ".py"):
            if candidate in _SOURCES:
                return candidate
        return None

    def find_spec(self, fullname, path=None, target=None):
        found = self._file(fullname)
        if found is None:
            return None
        return _util.spec_from_loader(fullname, self, is_package=found.endswith("__init__.py"))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        found = self._file(module.__name__)
        exec(compile(_SOURCES[found], f"<{{_RUNTIME_NAME}}>/{{found}}", "exec"), module.__dict__)


if not any(getattr(f, "name", "") == _RUNTIME_NAME for f in _sys.meta_path):
    _finder = _EmbeddedRuntime()
    _finder.name = _RUNTIME_NAME
    _sys.meta_path.insert(0, _finder)
"""


def single_file(adapter: str, runtime: str, files: dict[str, str], header: str) -> str:
    """A plug-in as one file: ``header``, the embedded runtime, then the adapter (minus its docstring and
    ``__future__`` import, which the header takes over)."""
    body = adapter
    if body.startswith('"""'):
        body = body[body.index('"""', 3) + 3 :]
    body = body.replace("from __future__ import annotations\n", "", 1)
    sources = "{\n" + "".join(f"    {rel!r}: {text!r},\n" for rel, text in sorted(files.items())) + "}"
    loader = _LOADER.format(runtime=runtime, sources=sources)
    return f'"""{header}"""\n\nfrom __future__ import annotations\n{loader}{body}'
