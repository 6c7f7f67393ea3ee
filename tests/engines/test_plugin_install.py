"""The vLLM plug-in's package, really pip-installed, registers itself through vLLM's own plug-in loader.

``test_engine_plugins.py`` stands in for the install (sources on ``sys.path`` plus a hand-written
``.dist-info``).  Here the package goes through pip itself (``pip install --no-deps --no-build-isolation
--no-index --target TMP``: the engines venv's own setuptools builds it, nothing is downloaded, nothing
lands in the engines venv), and a fresh engines interpreter with only ``TMP`` added to its path runs
``vllm.plugins.load_general_plugins()``, which finds the ``vllm.general_plugins`` entry point pip wrote.
That interpreter must then know the parser name in vLLM's tool-parser, reasoning-parser and structural-tag
registries, build a ``required`` tag through ``get_model_structural_tag``, and never import ``workbench``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from workbench.engines.plugin_proof import build_plugin, write_files
from workbench.engines.plugins import PluginNames
from workbench.engines.venv import engines_missing_reason, engines_python
from workbench.export.spec_target import spec_with_provenance
from workbench.formats import analyze
from workbench.template.source import load_template

pytestmark = pytest.mark.slow

TEMPLATE = "chatml-think-tools"  # built in: no ../shared needed

PROBE = """
import json, sys
import vllm.plugins
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager
from vllm.tool_parsers.structural_tag_registry import _VLLM_STRUCTURAL_TAG_REGISTRY, get_model_structural_tag
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

name = sys.argv[1]
vllm.plugins.load_general_plugins()
tool = {"type": "function", "function": {"name": "get_time", "parameters": {
    "type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}}}
request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "x"}], tools=[tool],
                                tool_choice="required")
tag = get_model_structural_tag(name, request.tools, request.tool_choice, reasoning=False)
parser = ToolParserManager.get_tool_parser(name)
print(json.dumps({
    "tool": name in ToolParserManager.list_registered(),
    "reasoning": name in ReasoningParserManager.list_registered(),
    "tag_builder": name in _VLLM_STRUCTURAL_TAG_REGISTRY,
    "structural_tag_model": parser.structural_tag_model,
    "supports_required_and_named": parser.supports_required_and_named,
    "tag": tag.model_dump_json(),
    "parser_file": sys.modules[parser.__module__].__file__,
    "workbench_imported": sorted(m for m in sys.modules if m == "workbench" or m.startswith("workbench.")),
}))
"""


@pytest.fixture(scope="module")
def engines() -> Path:
    python = engines_python()
    if python is None:
        pytest.skip(engines_missing_reason())
    return python


def _pip_has_no_network_needs(python: Path) -> None:
    """setuptools must already be in the engines venv: with ``--no-build-isolation --no-index`` pip builds
    with what is installed (setuptools >= 70.1 carries ``bdist_wheel``; ``wheel`` is not needed)."""
    found = subprocess.run(
        [str(python), "-c", "import setuptools; print(setuptools.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        pytest.skip("the engines venv has no setuptools to build the plug-in package with")


def test_pip_installed_package_registers_through_vllms_plugin_loader(engines: Path, tmp_path: Path) -> None:
    _pip_has_no_network_needs(engines)
    source = load_template(TEMPLATE)
    spec = spec_with_provenance(
        analyze(source).spec, None, template_sha256=source.sha256, template_name=source.name
    )
    names = PluginNames.for_template(source.name)
    export = tmp_path / "export"
    write_files(export, build_plugin("vllm-plugin", spec, names))
    site = tmp_path / "site"
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
    }
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", OMP_NUM_THREADS="1", VLLM_LOGGING_LEVEL="ERROR")
    offline = ["--no-deps", "--no-build-isolation", "--no-index"]
    install = subprocess.run(
        [str(engines), "-m", "pip", "install", *offline, "--target", str(site), str(export / "package")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    dist = next(site.glob("*.dist-info"))
    assert (
        f"{names.parser} = {names.package}.vllm_parsers:register" in (dist / "entry_points.txt").read_text()
    )
    assert (site / names.package / "_runtime" / "grammar" / "build.py").is_file()

    probe = subprocess.run(
        [str(engines), "-c", PROBE, names.parser],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(site)},
        cwd=tmp_path,
        timeout=900,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    got = json.loads(probe.stdout.strip().splitlines()[-1])
    assert (got["tool"], got["reasoning"], got["tag_builder"]) == (True, True, True)
    assert got["structural_tag_model"] == names.parser
    assert got["supports_required_and_named"] is False  # calls are read in the format's own syntax
    assert Path(got["parser_file"]).is_relative_to(site)  # the installed copy, not the export folder
    assert got["workbench_imported"] == []
    tag = json.loads(got["tag"])
    assert tag["type"] == "structural_tag"
    assert "get_time" in got["tag"] and "timezone" in got["tag"]
