"""The plug-in's runtime is the ``workbench/runtime/`` folder, and it stands alone.

:func:`workbench.engines.vendor.runtime_sources` copies the folder under a private package name; every module
of the copy must import in a fresh ``python -I`` interpreter where ``workbench`` cannot be imported, and the
copy must parse and build structural tags as the workbench does.  This replaces the hand-kept list of
modules the export used to vendor: a module the runtime needs and the copy lacks cannot hide.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from workbench.engines.vendor import RUNTIME_ROOT, runtime_sources
from workbench.runtime.parsing import parse
from workbench.runtime.serving.tags import request_tag
from workbench.spec_io import load_spec
from workbench.validate import ROUND_TRIP_TOOLS

PACKAGE = "_wb_vendored_runtime"
REPO = Path(__file__).resolve().parents[1]
OUTPUT = (
    '<think>plan</think>\n\nHi.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    "</tool_call>"
)

_CHECK = r"""
import importlib, json, sys
sys.modules["workbench"] = None  # importing workbench now raises ImportError
root, package, modules, spec_json, output, tools = json.load(sys.stdin)
sys.path.insert(0, root)
imported = [importlib.import_module(m).__name__ for m in modules]
try:
    import workbench.runtime  # noqa: F401
    blocked = False
except ImportError:
    blocked = True
spec = importlib.import_module(package + ".spec").FormatSpec.from_json(spec_json)
parsing = importlib.import_module(package + ".parsing")
tags = importlib.import_module(package + ".serving.tags")
result = parsing.parse(spec, output, tools=tools).to_contract()
tag = tags.request_tag(spec, tools, "required", reasoning=True)
print(json.dumps({"imported": imported, "blocked": blocked, "parsed": result, "tag": tag}))
"""


def module_names(files: dict[str, str]) -> list[str]:
    out = []
    for rel in files:
        parts = rel.removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join([PACKAGE, *parts]))
    return sorted(out)


def test_the_vendored_runtime_is_the_whole_runtime_folder() -> None:
    files = runtime_sources(PACKAGE)
    assert set(files) == {p.relative_to(RUNTIME_ROOT).as_posix() for p in RUNTIME_ROOT.rglob("*.py")}
    assert not any(
        "workbench" in line
        for text in files.values()
        for line in text.splitlines()
        if line.lstrip().startswith(("import ", "from "))
    )


def test_every_vendored_module_imports_without_the_workbench(tmp_path: Path) -> None:
    files = runtime_sources(PACKAGE)
    for rel, text in files.items():
        path = tmp_path / PACKAGE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    spec = load_spec(REPO / "specs" / "qwen3_thinking.json")
    tools = [t.to_openai() for t in ROUND_TRIP_TOOLS[:1]]
    payload = [str(tmp_path), PACKAGE, module_names(files), spec.to_json(), OUTPUT, tools]
    done = subprocess.run(
        [sys.executable, "-I", "-c", _CHECK],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got["blocked"] is True
    assert got["imported"] == module_names(files)
    assert got["parsed"] == parse(spec, OUTPUT, tools=tools).to_contract()
    assert got["tag"] == request_tag(spec, tools, "required", reasoning=True)
