"""The plug-ins' structural tags, asked for through the engines' own code and checked token by token.

For six shared templates (Qwen3, GLM-4.6, DeepSeek-V3.1, Kimi-K2, gpt-oss, Llama 3.1) the vLLM plug-in is
loaded as ``--tool-parser-plugin`` loads it and vLLM's serving path builds each request's tag
(``DelegatingParser.adjust_request`` -> ``get_model_structural_tag`` -> the builder the plug-in
registered); the SGLang detector is registered as its launcher does and ``FunctionCallParser.
get_structure_constraint`` builds it.  xgrammar compiles the tag against the template's real tokenizer and
is fed the round-trip output's tokens after reasoning (what the engine's reasoning gate lets through), and:

* ``auto`` (tools ``strict``) and ``required`` / ``named`` accept every round-trip output they should;
* ``named-other``: a call to another tool than the named one is refused;
* ``required`` refuses an output with no call (plain text);
* ``strict-schema``: a strict tool whose schema also requires a parameter no call passes refuses the call;
* ``auto+reasoning``: the tag that covers reasoning too accepts the whole output.

Each verdict comes from the harness (``workbench/engines/harness/plugin.py``, runners ``vllm-tags`` and
``sglang-tags``); the expectations are the case's own expected message (which tools it calls, whether it
has content), not the tag's output.
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_path
from workbench.engines.plugin_proof import PluginJob, build_plugin, job_for, run_plugin_harness, write_files
from workbench.engines.plugins import PluginNames
from workbench.engines.tokenizers import tokenizer_for
from workbench.engines.venv import engines_missing_reason
from workbench.export.spec_target import spec_with_provenance
from workbench.formats import analyze
from workbench.template.source import load_template
from workbench.validate import validate

pytestmark = [pytest.mark.slow, pytest.mark.shared]

TEMPLATES = (
    "Qwen-Qwen3-0.6B",
    "GLM-4.6",
    "deepseek-ai-DeepSeek-V3.1",
    "moonshotai-Kimi-K2",
    "openai-gpt-oss-120b",
    "meta-llama-Llama-3.1-8B-Instruct",
)
#: xgrammar's byte-level view of DeepSeek-V3's tokenizer maps its token 'ü' (id 187) to the byte 0xFC, an
#: invalid UTF-8 lead, so every xgrammar grammar (a plain JSON schema too) refuses "über": not the tag.
XGRAMMAR_TOKEN = {("deepseek-ai-DeepSeek-V3.1", "string_arguments")}
#: gpt-oss: the engines' reasoning gate hands the grammar a call without its channel header (SGLang), or
#: nothing at all when the output has no analysis message (vLLM), so forced and strict calls are not held;
#: only the tag over the whole output is checked.
WHOLE_OUTPUT_ONLY = {"openai-gpt-oss-120b"}
ENGINES = {"vllm": "vllm-tags", "sglang": "sglang-tags"}


@cache
def jobs() -> tuple[PluginJob, ...]:
    shared_path("templates")
    root = Path(tempfile.mkdtemp(prefix="wb-plugin-tags-"))
    out = []
    for name in TEMPLATES:
        source = load_template(str(shared_path("templates", f"{name}.jinja")))
        spec = analyze(source).spec
        report = validate(source, spec)
        assert report.validated, f"{name}: {report.summary()}"
        spec = spec_with_provenance(spec, None, template_sha256=source.sha256, template_name=name)
        names = PluginNames.for_template(name)
        folder = root / names.slug
        for target in ("vllm-plugin", "sglang-plugin"):
            write_files(folder, build_plugin(target, spec, names))
        vllm = job_for("vllm-plugin", name, names, folder, tokenizer_for(name), report, spec)
        sglang = job_for("sglang-plugin", name, names, folder, tokenizer_for(name), report, spec)
        ends = tuple(m for m in spec.end_markers if m)
        out.append(
            PluginJob(
                name,
                names.parser,
                folder,
                vllm.tokenizer,
                report,
                vllm=vllm.vllm,
                sglang=sglang.sglang,
                reasoning=vllm.reasoning,
                runners=tuple(ENGINES.values()),
                ends=ends,
            )
        )
    return tuple(out)


@cache
def verdicts(engine: str) -> dict[str, list[dict[str, Any]]]:
    """template -> [{"id", "checks": {label: verdict}, "constrained": n}] from one harness run."""
    answer = run_plugin_harness(jobs(), [engine])
    out = {}
    for job, got in zip(jobs(), answer["jobs"], strict=True):
        result = got["engines"][ENGINES[engine]]
        assert result["accepted"], f"{job.key}: {result['reason']} {result.get('trace', '')}"
        out[job.key] = result["cases"]
    return out


@pytest.mark.parametrize("engine", list(ENGINES))
def test_structural_tags_let_through_and_stop_what_each_tool_choice_says(engine: str) -> None:
    reason = engines_missing_reason()
    if reason:
        pytest.skip(reason)
    got = verdicts(engine)
    lines, unexpected, passed = [], [], 0
    for name in TEMPLATES:
        cases = got[name]
        checks = [(c["id"], label, why) for c in cases for label, why in c["checks"].items()]
        ok = sum(not why for _id, _label, why in checks)
        passed += ok
        lines.append(f"| {name} | {ok}/{len(checks)} |")
        for case_id, label, why in checks:
            if not why:
                continue
            if (name, case_id) in XGRAMMAR_TOKEN:
                assert "'ü' refused" in why, f"{name} {case_id} {label}: {why}"
            elif name in WHOLE_OUTPUT_ONLY and label != "auto+reasoning":
                continue
            else:
                unexpected.append(f"{name} {case_id} {label}: {why}")
    print(f"\n{engine} structural tags (checks as expected / run):\n" + "\n".join(lines))
    assert unexpected == []
    assert passed >= 250  # six templates, 7-11 cases each, up to 7 checks per case


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_checks_are_not_vacuous(engine: str) -> None:
    """Each template's calls reach the grammar (tokens after reasoning), and its refusals were exercised:
    a named tool refusing another tool's call, required refusing plain text, a strict schema refusing a
    call without its required parameter."""
    reason = engines_missing_reason()
    if reason:
        pytest.skip(reason)
    for name, cases in verdicts(engine).items():
        if name in WHOLE_OUTPUT_ONLY:
            assert all(not c["checks"]["auto+reasoning"] for c in cases), name
            continue
        with_calls = [c for c in cases if "named-other" in c["checks"]]
        assert with_calls and all(c["constrained"] > 0 for c in with_calls), name
        refusals = {label for c in cases for label, why in c["checks"].items() if not why}
        assert {"named-other", "strict-schema", "required", "named"} <= refusals, name
        plain = [c for c in cases if "named-other" not in c["checks"]]
        assert plain and all(not c["checks"]["required"] for c in plain), name  # no call: refused
