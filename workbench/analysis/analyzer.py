"""``analyze(template) -> Analysis``: run the phases over the probe renders and build the FormatSpec.

Order matters and is fixed: turn structure (P1, P2) -> reasoning (R1, R1c, R3, R2) -> prompt facts ->
reasoning mode -> content (C1) -> tools (T1-T7, dedicated detectors) -> arguments (A1, A2, T5) ->
workarounds.  Each phase reads only what earlier phases wrote into :class:`Findings`.

Bad templates never crash the analysis.  A template that cannot be compiled, or that fails even the
simplest render (a user message), raises :class:`TemplateError` -- there is nothing to analyse.  Anything
narrower (one probe's render, one phase) becomes a warning on the result, and the spec keeps whatever the
other probes established.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

from workbench import __version__
from workbench.analysis import (
    arguments,
    content,
    layout,
    pattern,
    prompt,
    reasoning,
    switches,
    tools,
    workarounds,
)
from workbench.analysis.dedicated import Dedicated
from workbench.analysis.diff import Evidence, marker_evidence
from workbench.analysis.layout import LayoutProtocol
from workbench.analysis.probes import FUNC_A, ID_A, PROBES
from workbench.analysis.renders import ProbeRenderer, ProbeResult
from workbench.analysis.state import Findings
from workbench.analysis.switches import quiet_kwargs
from workbench.runtime.spec import ContentSpec, FormatSpec, PromptSpec, Provenance, ReasoningSpec, ToolsSpec
from workbench.template.budget import budget_for
from workbench.template.literals import template_closed_instances, template_instances, template_literals
from workbench.template.render import (
    DEFAULT_TIME_LIMIT,
    RenderTimeout,
    TemplateError,
    compile_template,
    fixed_clock,
)
from workbench.template.render_cache import cached_renders
from workbench.template.source import TemplateSource


@dataclass
class Analysis:
    """The spec plus the evidence: every probe's renders, diff and outcome, and the warnings."""

    spec: FormatSpec
    probes: list[ProbeResult]
    warnings: list[str]
    source: TemplateSource
    notes: list[str] = field(default_factory=list)
    render_count: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The CLI/JSON contract: ``{"spec", "probes", "warnings"}`` (plus ``template`` and ``notes``)."""
        return {
            "template": self.source.name,
            "spec": self.spec.to_dict(),
            "probes": [p.to_dict() for p in self.probes],
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }


def _as_source(source: TemplateSource | str) -> TemplateSource:
    if isinstance(source, TemplateSource):
        return source
    return TemplateSource(text=source, name="<template>", origin="<string>")


#: Told the spec the probes established (and the source analysed) before the call pattern and the turn
#: layout are learned, the longest part of an analysis: a caller can start work that needs a spec then
#: (the self-check's first renders, :class:`workbench.selfcheck.EarlyRenders`).  Must not raise.
SpecHook = Callable[[TemplateSource, FormatSpec], None]


#: The variants the phases ask for first, in their order: every template of the corpus renders the first
#: seven, three in four the rest (the reasoning phase's, the tools phase's first calls).  Rendered in one
#: batch up front (:meth:`ProbeRenderer.prefetch_variants`): a worker round trip costs more than the render
#: of a variant no phase then asks for.
ASKED_FIRST = (
    "prompt_none",
    "prompt",
    "content",
    "call",
    "content_then_user",
    "reasoning",
    "reasoning_chunks",
    "tools_reasoning",
    "reasoning_call",
    "tools_content",
    "call_two",
    "call_id_b",
)


def _check_renderable(renderer: ProbeRenderer) -> None:
    """Raise when the template cannot render even a single user message (nothing to analyse)."""
    compile_template(renderer.source.text)
    renderer.prefetch_variants(ASKED_FIRST)
    first = renderer.get("prompt_none")
    if first is not None:
        return
    message = renderer.failures.get("prompt_none", "render failed")
    if "timed out" in message or renderer.get("content") is None:
        kind = "timeout" if "timed out" in message else "render"
        err_cls = RenderTimeout if kind == "timeout" else TemplateError
        raise err_cls(f"cannot analyse: {message}", kind=kind)


_PHASES: tuple[tuple[str, Callable[[Findings], None]], ...] = (
    ("structure", prompt.analyze_structure),
    ("switches", switches.probe_switches),
    ("reasoning", reasoning.analyze_reasoning),
    ("prompt", prompt.analyze_prompt_facts),
    ("reasoning mode", reasoning.decide_mode),
    ("content", content.analyze_content),
    ("tools", tools.analyze_tools),
    ("arguments", arguments.analyze_arguments),
    ("switch stages", switches.read_start_stages),
    ("thinking switch", switches.adopt_thinking_switch),
)


def analyze(
    source: TemplateSource | str,
    *,
    dedicated: Sequence[Dedicated],
    protocols: Mapping[str, LayoutProtocol] | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    on_spec: SpecHook | None = None,
) -> Analysis:
    """Analyse a chat template by differential rendering and return its spec and the evidence.

    ``dedicated`` are the format families' dedicated detectors, tried in order before the generic analysis
    of a call; ``protocols`` their rules (by family name) that a learned turn layout in their own tokens
    cannot see in any render.  :func:`workbench.formats.analyze` passes every registered one: the families
    sit above this package, so it cannot look them up itself.  ``on_spec`` is told the spec the probes
    established, before the turn is learned (:data:`SpecHook`).

    Raises:
        TemplateError: the template does not compile, or cannot render a plain user message.
    """
    with cached_renders():
        return _analyze(
            source, dedicated=dedicated, protocols=protocols or {}, time_limit=time_limit, on_spec=on_spec
        )


def _analyze(
    source: TemplateSource | str,
    *,
    dedicated: Sequence[Dedicated],
    protocols: Mapping[str, LayoutProtocol],
    time_limit: float,
    on_spec: SpecHook | None = None,
) -> Analysis:
    started = time.perf_counter()
    src = _as_source(source)
    # Every probe renders at one instant: a template that prints the time must differ only where the
    # probes vary something, and give the same spec on every run.
    with fixed_clock(), budget_for(time_limit, "the analysis") as budget:
        renderer = ProbeRenderer(src, time_limit=time_limit)
        _check_renderable(renderer)
        f = Findings(renderer=renderer, dedicated=tuple(dedicated))
        with marker_evidence(template_evidence(src)):
            spec = _run_phases(f, src, renderer, protocols, on_spec)
            if _ids_hide_names(spec, f):
                # The call's id is written where its label goes, the label with the name only for a call
                # without one (Kimi-K2-Thinking): the analysis again, every call rendered without an id.
                idless = ProbeRenderer(src, time_limit=time_limit, call_ids=False)
                g = Findings(renderer=idless, dedicated=tuple(dedicated))
                again = _run_phases(g, src, idless, protocols, on_spec)
                if again.tools.supported:
                    spec, f, renderer = again, g, idless
                    renderer.notes.append(
                        "tool calls rendered without ids: the template writes a call's id where its label "
                        "goes, and a label naming the function only for a call without an id"
                    )
        budget.raise_if_exhausted()  # never a spec read from renders the budget refused
    return Analysis(
        spec=spec,
        probes=[f.probes[p.id] for p in PROBES],
        warnings=f.warnings,
        source=src,
        notes=list(renderer.notes),
        render_count=renderer.render_count,
        seconds=time.perf_counter() - started,
    )


def _ids_hide_names(spec: FormatSpec, f: Findings) -> bool:
    """The template renders a call (its id shows where the call is) but never its function's name: the
    label may be the id the history passes, the name written only for a call without one."""
    if spec.tools.supported:
        return False
    region = tools.call_region(f, "call")
    return region is not None and region.find(ID_A) >= 0 and region.find(FUNC_A) < 0


def template_evidence(src: TemplateSource) -> Evidence:
    """What says where markers begin (issue 18): the literal text the template writes (with and without
    tools) and its tokenizer's added tokens; never what a marker looks like.  Validation cuts its cases
    with the same evidence the analysis read the spec with."""
    return _evidence(frozenset({src.text, src.for_tools(True).text}), src.added_tokens)


@lru_cache(maxsize=64)  # as many as compiled templates: a fact of the source
def _evidence(texts: frozenset[str], tokens: tuple[str, ...]) -> Evidence:
    units: set[str] = set()
    whole: set[str] = set()
    closed: set[str] = set()
    for text in texts:
        units |= template_literals(text)
        whole |= template_instances(text)
        closed |= template_closed_instances(text)
    return Evidence.of(units | whole, tokens, whole=whole, closed=closed)


def _run_phases(
    f: Findings,
    src: TemplateSource,
    renderer: ProbeRenderer,
    protocols: Mapping[str, LayoutProtocol],
    on_spec: SpecHook | None = None,
) -> FormatSpec:
    """The phases, the workarounds and the call pattern, in order; the spec they establish."""
    for name, phase in _PHASES:
        try:
            phase(f)
        except Exception as exc:  # a template can always surprise a phase; keep the others' results
            f.warn(f"{name} phase failed: {type(exc).__name__}: {exc}")
    if f.claimed is not None and f.claimed.fills_reasoning:
        prompt.analyze_prompt_facts(f)
    f.applied_workarounds = workarounds.apply_workarounds(renderer.patched_source, f)
    if f.applied_workarounds and f.reasoning.get("mode") != "none":
        prompt.analyze_prompt_facts(f)
    for name in f.applied_workarounds:
        f.warn(f"workaround {name!r} applied")
    try:
        prompt.analyze_output_prefix(f)
    except Exception as exc:  # as for the phases: keep everything else the analysis found
        f.warn(f"output prefix phase failed: {type(exc).__name__}: {exc}")
    for probe in PROBES:
        if probe.id not in f.probes:
            f.probes[probe.id] = ProbeResult(
                probe.id,
                probe.question,
                probe.variant_a,
                probe.variant_b,
                None,
                None,
                None,
                outcome="not needed for this template",
            )
        elif f.probes[probe.id].error:
            if probe.optional:
                f.note(probe.id, "the template does not accept this input shape")
            else:
                f.warn(f"{probe.id}: render failed: {f.probes[probe.id].error}")
    spec = build_spec(f, src)
    if on_spec is not None and not renderer.timed_out:
        on_spec(src, spec)  # a template that ran out of time gets nothing made alongside
    render = pattern.memoized(pattern.probe_render(renderer))
    t1 = f.probes.get("T1")
    if t1 is not None and t1.render_b is not None and not (f.claimed is not None and f.claimed.keeps_spec):
        try:
            spec, pattern_notes = pattern.adopt_pattern(spec, render, f.end_markers)
        except Exception as exc:  # the pattern is a second opinion: never lose the first one to it
            f.warn(f"call pattern phase failed: {type(exc).__name__}: {exc}")
        else:
            renderer.notes.extend(pattern_notes)
            if pattern_notes:
                spec = replace(spec, preserved_tokens=preserved_tokens(spec))
    quiet = None
    if spec.prompt.thinking_opened:
        quiet = pattern.memoized(pattern.probe_render(renderer, quiet_kwargs(spec)))
    try:
        keep = src.for_tools(True).text != src.for_tools(False).text
        spec, layout_notes = layout.adopt_layout(
            spec, render, keep_reasoning=keep, protocols=protocols, quiet=quiet
        )
    except Exception as exc:  # the layout is a second opinion too
        f.warn(f"turn layout phase failed: {type(exc).__name__}: {exc}")
    else:
        if layout_notes:
            renderer.notes.extend(layout_notes)
            spec = replace(spec, preserved_tokens=preserved_tokens(spec))
    return spec


_TOOL_FIELDS = {fl.name for fl in fields(ToolsSpec)}


def build_spec(f: Findings, src: TemplateSource) -> FormatSpec:
    """Freeze the findings into a FormatSpec (pure with respect to ``f``)."""
    tool_values = {k: v for k, v in f.tools.items() if k in _TOOL_FIELDS}
    if "parameter_order" in tool_values:
        tool_values["parameter_order"] = tuple(tool_values["parameter_order"])
    tool_spec = ToolsSpec(**tool_values)
    if tool_spec.format == "none":
        tool_spec = ToolsSpec()
    spec = FormatSpec(
        reasoning=ReasoningSpec(**f.reasoning),
        content=ContentSpec(**f.content),
        tools=tool_spec,
        prompt=PromptSpec(**f.prompt),
        bos_token=src.bos_token,
        eos_token=src.eos_token,
        end_markers=tuple(f.end_markers),
        provenance=Provenance(
            template_sha256=src.sha256, template_name=src.name, workbench_version=__version__
        ),
    )
    return FormatSpec(
        **{
            **{fl.name: getattr(spec, fl.name) for fl in fields(spec)},
            "preserved_tokens": preserved_tokens(spec),
        }
    )


_NOT_TOKENS = {
    "name_field",
    "args_field",
    "id_field",
    "gen_id_field",
    "function_field",
    "code_block_language",
    "function_namespace",
    "call_separator",
    "arg_separator",
}


def preserved_tokens(spec: FormatSpec) -> tuple[str, ...]:
    """Every marker the parser matches, trimmed, in spec order: the tokenizer must keep them whole."""
    out: list[str] = []
    for part in (spec.reasoning, spec.content, spec.tools):
        for fl in fields(part):
            value = getattr(part, fl.name)
            if (
                isinstance(value, str)
                and fl.name not in _NOT_TOKENS
                and fl.name not in ("mode", "format", "id_position")
            ):
                token = value.strip()
                if token and token not in out:
                    out.append(token)
    if spec.tools.pattern.defined:
        out += [m for m in pattern.pattern_markers(spec.tools.pattern) if m not in out]
    for m in spec.end_markers:
        if m.strip() and m.strip() not in out:
            out.append(m.strip())
    lay = spec.layout
    for m in (lay.opener, lay.closer, *(e for msg in lay.messages for e in msg.ends)):
        if m.strip() and m.strip() not in out:
            out.append(m.strip())
    return tuple(out)
