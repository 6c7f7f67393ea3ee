"""Load exported serving plug-ins into the real engines and run round-trip outputs through them.

Like :mod:`.response` (whose helpers it reuses) it runs in the engines' venv, which has vLLM and SGLang but
not the workbench: ``python -m workbench.engines.harness.plugin``.  Before any plug-in loads, every import of
a ``workbench`` module the harness has not loaded itself is refused (:func:`refuse_workbench_imports`), so a
plug-in that needed the workbench would fail here as it would in a real deployment.  One subprocess per
batch of templates, because importing vLLM takes 15-30 s.

stdin (JSON, :class:`~workbench.engines.harness.schema.PluginRequest`)::

    {"engines": ["vllm", "sglang"],
     "jobs": [{"key": "...", "parser": "wb_...", "tokenizer": "/path",
               "vllm": {"file": ".../x_vllm.py", "package_src": ".../package/src", "package": "...",
                        "pyproject": ".../package/pyproject.toml"},
               "sglang": {"module": ".../x_sglang.py"},
               "runners": ["vllm-tags", ...],   # optional: only these (vllm-tags runs only when named)
               "cases": [{"id", "output", "prefix", "tools", "calls", "content"}]}]}

stdout (JSON, :class:`~workbench.engines.harness.schema.PluginAnswer`)::

    {"versions": {...}, "jobs": [{"key": "...", "engines": {"vllm-file": RESULT, "vllm-package": RESULT,
     "sglang": RESULT}}]}

RESULT is ``{"accepted": bool, "reason": str, "cases": [{"id", "one_shot": MESSAGE, "streamed": MESSAGE}]}``
as in :mod:`.response`: "accepted" means the plug-in loaded and registered with the engine's own
registry (the single file through vLLM's ``--tool-parser-plugin`` loader, the package through vLLM's
``vllm.general_plugins`` entry-point loader, the SGLang module through the launcher's registration).

The ``vllm-tags`` and ``sglang-tags`` runners prove the structural tags instead: their cases are
``{"id", "checks": {label: verdict}}``, a verdict "" when the tag accepted or refused the case's tokens as
it must (:func:`_tag_checks`).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import tomllib

from workbench.engines.harness.response import (
    Deltas,
    Message,
    SGLangParsers,
    _first_line,
    _ipython_stub,
    _load_tokenizer,
    answer,
    case_result,
    harness_error,
    quiet_engines,
    sglang_case_results,
    vllm_message,
    vllm_request,
    vllm_streamed,
    vllm_tokenizer,
)
from workbench.engines.harness.schema import PluginRequest, from_json

# --------------------------------------------------------------------------------------------- vLLM


def _vllm_cases(name: str, tokenizer: Any, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case through the parser vLLM's serving layer composes for ``--tool-call-parser NAME
    --reasoning-parser NAME --enable-auto-tool-choice`` (``ParserManager.get_parser``)."""
    from vllm.parser.parser_manager import ParserManager

    tokenizer = vllm_tokenizer(tokenizer)
    parser_cls = ParserManager.get_parser(
        tool_parser_name=name, reasoning_parser_name=name, enable_auto_tools=True, tokenizer=tokenizer
    )
    assert parser_cls is not None
    deltas = Deltas(tokenizer)
    results = []
    for case in cases:
        request = vllm_request(case)
        prompt_ids = deltas.encode(case["prefix"])
        # The serving layer lets the parser adjust each request first; our markers must survive
        # detokenization, so the parser has to turn skipping special tokens off.
        request = parser_cls(tokenizer, request.tools).adjust_request(request)
        kept = "" if request.skip_special_tokens is False else "the parser left skip_special_tokens on"

        def one_shot(case: dict[str, Any] = case, request: Any = request, kept: str = kept) -> Message:
            if kept:
                raise ValueError(kept)
            parser = parser_cls(tokenizer, request.tools)
            return vllm_message(*parser.parse(case["output"], request, enable_auto_tools=True))

        def streamed(
            case: dict[str, Any] = case, request: Any = request, prompt_ids: list[int] = prompt_ids
        ) -> Message:
            parser = parser_cls(tokenizer, request.tools)
            return vllm_streamed(parser, deltas, case["output"], request, prompt_ids)

        results.append(case_result(case, one_shot, streamed))
    return results


def _registered(name: str) -> str:
    """ "" when both of vLLM's registries know ``name``, else what is missing."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    missing = [
        kind
        for kind, manager in (
            ("tool parser", ToolParserManager),
            ("reasoning parser", ReasoningParserManager),
        )
        if name not in manager.list_registered()
    ]
    return f"{' and '.join(missing)} {name!r} not registered" if missing else ""


def _forget(name: str) -> None:
    """Unregister ``name`` so the next form of the plug-in has to register it itself."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    for manager in (ToolParserManager, ReasoningParserManager):
        for table in ("tool_parsers", "lazy_parsers", "reasoning_parsers"):
            getattr(manager, table, {}).pop(name, None)


def _load_vllm_file(name: str, path: str) -> str:
    """Load the single-file plug-in as ``--tool-parser-plugin FILE --reasoning-parser-plugin FILE`` does
    (after forgetting an earlier registration of ``name``); what is not registered then ("" when all is)."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    _forget(name)
    ToolParserManager.import_tool_parser(path)
    ReasoningParserManager.import_reasoning_parser(path)
    return _registered(name)


def run_vllm_file(job: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """The single file, loaded the way ``--tool-parser-plugin FILE --reasoning-parser-plugin FILE`` does."""

    name, path = job["parser"], job["vllm"]["file"]
    missing = _load_vllm_file(name, path)
    if missing:
        return {"accepted": False, "reason": f"{path}: {missing}", "cases": []}
    return {"accepted": True, "reason": "", "cases": _vllm_cases(name, tokenizer, job["cases"])}


def run_vllm_package(job: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """The package, found through its ``vllm.general_plugins`` entry point by vLLM's own plug-in loader.

    Installing it is replaced by what installing leaves behind: its sources on ``sys.path`` and a
    ``.dist-info`` holding the entry points of its ``pyproject.toml``.
    """
    from vllm.plugins import DEFAULT_PLUGINS_GROUP, load_plugins_by_group

    info = job["vllm"]
    name = job["parser"]
    _forget(name)
    project = tomllib.loads(Path(info["pyproject"]).read_text(encoding="utf-8"))["project"]
    points = project.get("entry-points", {}).get(DEFAULT_PLUGINS_GROUP, {})
    site = Path(tempfile.mkdtemp(prefix="wb-plugin-site-"))
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    lines = [f"[{DEFAULT_PLUGINS_GROUP}]", *(f"{k} = {v}" for k, v in points.items())]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.path[:0] = [str(site), info["package_src"]]
    try:
        plugins = load_plugins_by_group(DEFAULT_PLUGINS_GROUP)
        if name not in plugins:
            return {"accepted": False, "reason": f"entry point {name!r} not loaded by vLLM", "cases": []}
        plugins[name]()
        missing = _registered(name)
        if missing:
            return {"accepted": False, "reason": missing, "cases": []}
        return {"accepted": True, "reason": "", "cases": _vllm_cases(name, tokenizer, job["cases"])}
    finally:
        sys.path.remove(str(site))
        sys.path.remove(info["package_src"])


# ------------------------------------------------------------------------------- vLLM structural tags

#: A required parameter no round-trip call passes: a strict tool whose schema demands it must refuse them.
EXTRA_REQUIRED = "wb_required_extra"


def _tool_cases(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The job's cases that offer tools: a structural tag constrains tool calls, so only they are checked
    (vLLM's and SGLang's tag checks alike)."""
    return [case for case in job["cases"] if case["tools"]]


def _grammar_compiler(tokenizer: Any) -> Any:
    import xgrammar as xgr

    vocab_size = max(len(tokenizer), max(tokenizer.get_vocab().values()) + 1)
    info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
    return xgr.GrammarCompiler(info)


def _accepts(compiled: Any, ids: list[int], tokenizer: Any, ends: list[str]) -> str:
    """Feed ``ids`` to a fresh matcher token by token: "" when all are accepted and the grammar may end
    there (or after one of the format's end markers), else where it stopped."""
    import xgrammar as xgr

    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    for i, token in enumerate(ids):
        if not matcher.accept_token(token):
            before = tokenizer.decode(ids[:i], skip_special_tokens=False)[-50:]
            return (
                f"token {i} {tokenizer.decode([token], skip_special_tokens=False)!r} refused after {before!r}"
            )
    if matcher.is_completed():
        return ""
    for marker in ends:
        trial = matcher.fork()
        if marker and trial.accept_string(marker) and trial.is_completed():
            return ""
    return f"all {len(ids)} tokens accepted, but the grammar cannot end there"


def _constrained_ids(reasoner: Any, prompt_ids: list[int], ids: list[int]) -> list[int]:
    """The output tokens vLLM's structured-output manager feeds the grammar with a reasoning parser: all of
    them when the prompt already ended reasoning, else those after the token on which the parser's
    ``is_reasoning_end`` (over prompt + output so far) first turns true (``_get_constraint_bounds``)."""
    if reasoner.is_reasoning_end(prompt_ids):
        return ids
    for k in range(1, len(ids) + 1):
        if reasoner.is_reasoning_end(prompt_ids + ids[:k]):
            return ids[k:]
    return []


def _strict(tools: list[dict[str, Any]], extra: bool = False) -> list[dict[str, Any]]:
    """The tools marked ``strict``; ``extra``: each schema also requires :data:`EXTRA_REQUIRED`."""
    out = []
    for tool in tools:
        fn = dict(tool["function"], strict=True)
        if extra:
            params = dict(fn.get("parameters") or {"type": "object"})
            params["properties"] = {**params.get("properties", {}), EXTRA_REQUIRED: {"type": "string"}}
            params["required"] = [*params.get("required", []), EXTRA_REQUIRED]
            fn["parameters"] = params
        out.append({"type": "function", "function": fn})
    return out


def _tag_checks(case: dict[str, Any]) -> list[tuple[str, Any, list[dict[str, Any]], bool]]:
    """``(label, tool_choice, tools, must accept)`` for one case: what each tool choice must let through or
    stop, judged from the case's expected message."""
    tools, calls, content = case["tools"], case["calls"], case["content"]
    checks: list[tuple[str, Any, list[dict[str, Any]], bool]] = [("auto", "auto", _strict(tools), True)]
    if not calls:
        checks.append(("required", "required", tools, False))  # plain text, no call: refused
        return checks
    if not content:
        checks.append(("required", "required", tools, True))
        if len(set(calls)) == 1:
            checks.append(("named", _named(calls[0]), tools, True))
    other = next((t["function"]["name"] for t in tools if t["function"]["name"] not in calls), None)
    if other is not None:
        checks.append(("named-other", _named(other), tools, False))  # a call to another tool: refused
    checks.append(("strict-schema", "auto", _strict(tools, extra=True), False))
    return checks


def _named(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def run_vllm_tags(job: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """The single file loaded as ``--tool-parser-plugin`` does, then, per case and tool choice, vLLM's own
    structural-tag path: ``DelegatingParser.adjust_request`` (``_apply_structural_tag`` -> our parser's
    ``get_structural_tag`` -> ``get_model_structural_tag`` -> the builder we registered) puts the tag in
    ``request.structured_outputs``; xgrammar compiles it against the real tokenizer and is fed the output's
    tokens the structured-output manager would feed it (those after the end of reasoning).  Also the tag
    with ``reasoning=True`` (``get_model_structural_tag`` directly: vLLM's serving passes False), fed the
    whole output.  Each check's verdict is "" (as expected) or why not."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager
    from vllm.tool_parsers.structural_tag_registry import get_model_structural_tag

    name, path = job["parser"], job["vllm"]["file"]
    missing = _load_vllm_file(name, path)
    if missing:
        return {"accepted": False, "reason": f"{path}: {missing}", "cases": []}
    tool_cls = ToolParserManager.get_tool_parser(name)
    if getattr(tool_cls, "structural_tag_model", None) != name or tool_cls.supports_required_and_named:
        return {
            "accepted": False,
            "reason": "the tool parser does not opt in to structural tags",
            "cases": [],
        }
    tokenizer = vllm_tokenizer(tokenizer)
    parser_cls = ParserManager.get_parser(
        tool_parser_name=name, reasoning_parser_name=name, enable_auto_tools=True, tokenizer=tokenizer
    )
    reasoner_cls = ReasoningParserManager.get_reasoning_parser(name)
    compiler = _grammar_compiler(tokenizer)
    ends = job["vllm"].get("ends", [])
    deltas = Deltas(tokenizer)
    results = []
    for case in _tool_cases(job):
        ids = deltas.encode(case["output"])
        prompt_ids = deltas.encode(case["prefix"])
        after = _constrained_ids(reasoner_cls(tokenizer), prompt_ids, ids)
        verdicts: dict[str, str] = {}
        for label, choice, tools, accept in _tag_checks(case):

            def check(
                choice: Any = choice,
                tools: Any = tools,
                accept: bool = accept,
                after: list[int] = after,
                ids: list[int] = ids,
                prompt_ids: list[int] = prompt_ids,
            ) -> str:
                request = ChatCompletionRequest(
                    model="workbench",
                    messages=[{"role": "user", "content": "x"}],
                    tools=tools,
                    tool_choice=choice,
                )
                parser = parser_cls(tokenizer, request.tools)
                request = parser.adjust_request(request)
                so = request.structured_outputs
                if so is None or so.structural_tag is None:
                    return "vLLM applied no structural tag"
                # What serving hands the engine: True = constrain from the first output token.
                fed = ids if request.resolve_reasoning_ended(parser, prompt_ids) is True else after
                why = _accepts(compiler.compile_structural_tag(so.structural_tag), fed, tokenizer, ends)
                if accept:
                    return why
                return "" if why else "accepted, but must be refused"

            verdicts[label] = _verdict(check)

        def whole(case: dict[str, Any] = case, ids: list[int] = ids) -> str:
            request = ChatCompletionRequest(
                model="workbench", messages=[{"role": "user", "content": "x"}], tools=_strict(case["tools"])
            )
            tag = get_model_structural_tag(name, request.tools, "auto", reasoning=True)
            return _accepts(compiler.compile_structural_tag(tag.model_dump_json()), ids, tokenizer, ends)

        verdicts["auto+reasoning"] = _verdict(whole)
        results.append({"id": case["id"], "checks": verdicts, "constrained": len(after)})
    return {"accepted": True, "reason": "", "cases": results}


def _verdict(fn: Any) -> str:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return str(fn())
    except Exception as exc:
        return f"raised {_first_line(exc)}"


# ------------------------------------------------------------------------------------------- SGLang


def _load_module(path: str) -> Any:
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _prompt_opens_reasoning(prompt: str, start: str, end: str) -> bool:
    """SGLang's ``force_reasoning``: the generation prompt leaves a reasoning block open (its last start
    marker is not followed by an end marker); False when the format has no start marker to look for."""
    at = prompt.rfind(start) if start else -1
    return at >= 0 and end not in prompt[at + len(start) :]


def _sglang_cli_refuses(name: str) -> str:
    """What SGLang's server argument parsing says about ``--tool-call-parser NAME --reasoning-parser NAME``
    once the launcher registered them ("" when accepted): its choices are the registries' keys."""
    from sglang.srt.server_args import prepare_server_args

    args = ["--model-path", "unused", "--tool-call-parser", name, "--reasoning-parser", name]
    try:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            prepare_server_args(args)
    except SystemExit:
        lines = err.getvalue().strip().splitlines() or ["no message"]
        return f"SGLang's command line refused the parser names: {lines[-1]}"
    return ""


def run_sglang(job: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """The detector module registered as its launcher does, then SGLang's own ``FunctionCallParser`` and
    ``ReasoningParser`` (what its serving layer builds per request) over each case."""
    _ipython_stub()
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    name = job["parser"]
    module = _load_module(job["sglang"]["module"])
    module.register()
    if name not in FunctionCallParser.ToolCallParserEnum or name not in ReasoningParser.DetectorMap:
        return {"accepted": False, "reason": f"{name!r} not registered with SGLang", "cases": []}
    refused = _sglang_cli_refuses(name)
    if refused:
        return {"accepted": False, "reason": refused, "cases": []}

    def parsers_for(case: dict[str, Any]) -> SGLangParsers:
        tools = [Tool(**t) for t in case["tools"]]
        opened = _prompt_opens_reasoning(case["prefix"], *job["sglang"].get("reasoning", ("", "")))

        def parsers() -> tuple[Any, Any]:
            reasoning = ReasoningParser(name, force_reasoning=opened, tool_call_parser_active=True)
            return reasoning, FunctionCallParser(tools, name)

        return parsers

    cases = sglang_case_results(job["cases"], Deltas(tokenizer), parsers_for)
    return {"accepted": True, "reason": "", "cases": cases}


def run_sglang_tags(job: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """The detector module registered as its launcher does, then per case and tool choice SGLang's own
    constraint path: ``FunctionCallParser.get_structure_constraint`` (what its chat serving calls, with
    ``thinking_mode=False`` as when a reasoning parser is configured) must return a structural tag, which
    xgrammar compiles against the real tokenizer and is fed the output after the reasoning end marker (what
    SGLang's reasoner grammar lets through to it); plus the tag with ``thinking_mode=True`` fed the whole
    output.  Verdicts as :func:`run_vllm_tags`."""
    _ipython_stub()
    from sglang.srt.entrypoints.openai.protocol import Tool, ToolChoice
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    name = job["parser"]
    module = _load_module(job["sglang"]["module"])
    module.register()
    if name not in FunctionCallParser.ToolCallParserEnum:
        return {"accepted": False, "reason": f"{name!r} not registered with SGLang", "cases": []}
    compiler = _grammar_compiler(tokenizer)
    start, end = job["sglang"].get("reasoning") or ["", ""]
    ends = job["sglang"].get("ends", [])
    deltas = Deltas(tokenizer)
    results = []
    for case in _tool_cases(job):
        output = case["output"]
        # The grammar waits for the end marker only while reasoning is open: the prompt left a block open
        # (SGLang's force_reasoning), or the output opens one.
        reasoning = _prompt_opens_reasoning(case["prefix"], start, end) or (
            bool(start) and output.lstrip().startswith(start)
        )
        at = output.find(end) if end and reasoning else -1
        if reasoning and end and at < 0:
            after = []  # reasoning never ends: the grammar is never handed a token
        else:
            after = deltas.encode(output[at + len(end) :] if at >= 0 else output)
        verdicts: dict[str, str] = {}

        def constrained(tools: list[dict[str, Any]], choice: Any, thinking: bool) -> Any:
            parser = FunctionCallParser([Tool(**t) for t in tools], name)
            if isinstance(choice, dict):
                choice = ToolChoice(function={"name": choice["function"]["name"]})
            found = parser.get_structure_constraint(choice, parallel_tool_calls=True, thinking_mode=thinking)
            if found is None or found[0] != "structural_tag":
                raise ValueError(f"SGLang applied no structural tag ({found!r:.60})")
            return compiler.compile_structural_tag(found[1].model_dump_json())

        for label, choice, tools, accept in _tag_checks(case):

            def check(
                choice: Any = choice, tools: Any = tools, accept: bool = accept, after: Any = after
            ) -> str:
                why = _accepts(constrained(tools, choice, False), after, tokenizer, ends)
                return why if accept else ("" if why else "accepted, but must be refused")

            verdicts[label] = _verdict(check)

        def whole(case: dict[str, Any] = case) -> str:
            compiled = constrained(_strict(case["tools"]), "auto", True)
            return _accepts(compiled, deltas.encode(case["output"]), tokenizer, ends)

        verdicts["auto+reasoning"] = _verdict(whole)
        results.append({"id": case["id"], "checks": verdicts, "constrained": len(after)})
    return {"accepted": True, "reason": "", "cases": results}


RUNNERS = {
    "vllm-file": run_vllm_file,
    "vllm-package": run_vllm_package,
    "vllm-tags": run_vllm_tags,
    "sglang": run_sglang,
    "sglang-tags": run_sglang_tags,
}
ENGINE_OF = {
    "vllm-file": "vllm",
    "vllm-package": "vllm",
    "vllm-tags": "vllm",
    "sglang": "sglang",
    "sglang-tags": "sglang",
}
#: Runners a job must ask for by name (``"runners": [...]``); the others run for every job of their engine.
OPT_IN = {"vllm-tags", "sglang-tags"}


def run_job(job: dict[str, Any], engines: list[str], tokenizers: dict[str, Any]) -> dict[str, Any]:
    path = job["tokenizer"]
    if path not in tokenizers:
        tokenizers[path] = _load_tokenizer(path)
    out: dict[str, Any] = {"key": job.get("key", ""), "engines": {}}
    for runner, fn in RUNNERS.items():
        if ENGINE_OF[runner] not in engines or ENGINE_OF[runner] not in job:
            continue
        wanted = job.get("runners")
        if (wanted is not None and runner not in wanted) or (wanted is None and runner in OPT_IN):
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                out["engines"][runner] = fn(job, tokenizers[path])
        except Exception as exc:
            out["engines"][runner] = harness_error(exc, limit=4)
    return out


class _NoWorkbench(importlib.abc.MetaPathFinder):
    """Refuses ``workbench`` modules not loaded yet: what a plug-in imports must travel inside it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if (fullname == "workbench" or fullname.startswith("workbench.")) and fullname not in sys.modules:
            raise ImportError(f"{fullname}: a plug-in must not need the workbench (it is not installed here)")


def refuse_workbench_imports() -> None:
    """From now on, importing a ``workbench`` module the harness did not load itself fails."""
    if not any(isinstance(f, _NoWorkbench) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoWorkbench())


def main() -> int:
    quiet_engines()
    request = from_json(PluginRequest, json.load(sys.stdin))
    refuse_workbench_imports()
    return answer(request.jobs, run_job, request.engines or ["vllm", "sglang"])


if __name__ == "__main__":
    sys.exit(main())
