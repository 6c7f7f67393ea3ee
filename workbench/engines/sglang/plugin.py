"""``--target sglang-plugin``: an SGLang tool-call detector and reasoning detector for the exported format.

SGLang has no plug-in flag, so the export is a self-contained detector module (the workbench parser is
vendored inside it, see :mod:`workbench.engines.vendor`) plus a launcher that registers both detectors in
SGLang's tables and then runs ``sglang.launch_server`` with the same arguments (registering this way is not a
supported SGLang API; the launcher is the one place that depends on it).  ``provenance.json`` records the
template hash, workbench version and the SGLang version the export was proven with.  The adapter itself is
``workbench/engines/sglang/adapter.py``.
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
    single_file,
)
from workbench.proofs import inline_text
from workbench.runtime.spec import FormatSpec

ENGINE = "sglang"
#: The detectors' source, copied into the export (it imports SGLang: never imported here).
ADAPTER = Path(__file__).with_name("adapter.py")

_LAUNCHER = '''#!/usr/bin/env python
"""Start SGLang with the `{parser}` detectors registered (made by workbench export).

    python {launcher} --model-path MODEL [any sglang.launch_server argument]

It registers the tool-call and reasoning detectors of {module}.py, adds `--tool-call-parser {parser}
--reasoning-parser {parser}` unless given, and runs `sglang.launch_server` in this process.

SGLang starts its scheduler and detokenizer with multiprocessing's "spawn": each of them imports this file
again (as `__mp_main__`) before it runs, so the registration at the top runs in every SGLang process (the
scheduler builds its own reasoning parser); only the process started from the command line launches.
"""

import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import {module} as plugin  # noqa: E402

plugin.register()  # in this process and in every process SGLang spawns (they re-import this file)

if __name__ == "__main__":
    args = sys.argv[1:]
    for flag in ("--tool-call-parser", "--reasoning-parser"):
        if flag not in args:
            args += [flag, plugin.NAME]
    sys.argv = [sys.argv[0], *args]
    # alter_sys=False keeps this file as __main__: it is what a spawned process imports again.
    runpy.run_module("sglang.launch_server", run_name="__main__", alter_sys=False)
'''


def launch_command(names: PluginNames) -> str:
    return f"python launch_{names.slug}.py --model-path MODEL"


def _readme(names: PluginNames, prov: dict[str, Any]) -> str:
    return f"""# SGLang detectors for {inline_text(prov["template_name"] or names.slug)}

Made by `workbench export --target sglang-plugin` (workbench {prov["workbench_version"]}) from the
template with sha256 `{prov["template_sha256"] or "(none: exported from a spec file)"}`; proven with SGLang
{prov["proven_with"]}: once registered, SGLang's argument parsing accepted the parser names, and SGLang's own
`FunctionCallParser` and `ReasoningParser` returned every round-trip
message of the template, one-shot (`detect_and_parse`) and streamed (`parse_streaming_increment`, real
token deltas).

Validation of the spec: {prov["validation"]["headline"]}.

    {launch_command(names)}

`{names.slug}_sglang.py` holds a `BaseFormatDetector` and a `BaseReasoningFormatDetector` registered as
`{names.parser}`; the launcher registers them, then starts `sglang.launch_server` with
`--tool-call-parser {names.parser} --reasoning-parser {names.parser}`.  Neither needs the workbench.
SGLang's scheduler and detokenizer are spawned processes that import the launcher again, so they register
the detectors too: always start the server through the launcher.

On a CPU-only machine SGLang 0.5.23 also needs `--device cpu --attention-backend torch_native
--disable-cuda-graph`, and its server imports `torchvision` (a build that matches the installed torch).

## Limits

- Registering through SGLang's tables is not a supported SGLang API: a new SGLang release may move them.
- Constrained calls (`tool_choice="required"`, a named tool, `auto` with a `strict` tool) use the
  detector's `get_structural_tag`, built per request from this format's grammar; arguments follow each
  tool's schema whether or not the tool is `strict`.
- SGLang keeps special tokens in the decoded text only for requests with tools (and for the reasoning
  parsers it knows by name): when this format's reasoning markers are special tokens, send requests
  without tools with `"skip_special_tokens": false`.
"""


def build_sglang_plugin(spec: FormatSpec, names: PluginNames, engine_version: str = "") -> dict[str, str]:
    """Every file of the export, by path relative to the output folder (pure: writes nothing)."""
    prov = provenance(spec, ENGINE, engine_version)
    module = f"{names.slug}_sglang"
    header = (
        f"SGLang detectors `{names.parser}` for {inline_text(prov['template_name'] or names.slug)} (made by "
        "workbench "
        f"export).\n\nStart SGLang with launch_{names.slug}.py, which registers them.\n"
        f"{requirements_note()}"
    )
    runtime = runtime_files(names.single_runtime, spec, prov)
    adapter = adapter_source(ADAPTER, names.single_runtime, names.parser)
    return {
        f"{module}.py": single_file(adapter, names.single_runtime, runtime, header),
        f"launch_{names.slug}.py": _LAUNCHER.format(
            parser=names.parser, module=module, launcher=f"launch_{names.slug}.py"
        ),
        "README.md": _readme(names, prov),
        "provenance.json": json.dumps(prov, indent=2, sort_keys=True) + "\n",
    }
