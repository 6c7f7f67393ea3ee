"""The analysis and export side of the format families, and the registry the stages above them read.

A format family is one runtime folder (``workbench/runtime/formats/<name>/``: parser, grammar, sample writer,
looked up by name at the bottom: :mod:`workbench.runtime.formats`) and, here, one folder with what only the
analysis and the exports need (:class:`~workbench.formats.base.FormatHooks`): a dedicated detector and the
response-template hook.  This package sits above ``analysis`` (whose detectors it supplies) and below
``validate`` and ``export`` (which read it), so nothing below imports it: :func:`analyze` is the analysis
with every registered family's detector, the one the rest of the workbench calls.

Adding a format: a runtime folder, a folder here, and its line in :data:`_BUILTIN` (the order dedicated
detectors are tried in: Harmony's headers also look like recipient addresses; a recipient call also looks
like a bare name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench import analysis
from workbench.analysis import Analysis
from workbench.analysis.analyzer import SpecHook
from workbench.analysis.dedicated import Dedicated
from workbench.analysis.layout import LayoutProtocol
from workbench.formats import (
    call_pattern,
    envelope,
    harmony,
    json_native,
    layout,
    pythonic,
    recipient,
    tag_with_json,
    tag_with_tagged,
)
from workbench.formats.base import FormatHooks, ResponseFields
from workbench.formats.response_parts import ResponseGap
from workbench.runtime import formats as runtime_formats
from workbench.runtime.formats import FormatFamily, SampleCall, families, family
from workbench.runtime.spec import FormatSpec
from workbench.template.render import DEFAULT_TIME_LIMIT
from workbench.template.source import TemplateSource

_BUILTIN: tuple[FormatHooks, ...] = tuple(
    m.HOOKS for m in (json_native, tag_with_json, tag_with_tagged, harmony, recipient, pythonic, call_pattern)
)
_HOOKS: dict[str, FormatHooks] = {h.name: h for h in _BUILTIN}


def hooks(name: str) -> FormatHooks | None:
    """The analysis and export side of the family ``name`` (None for ``"none"`` and unknown names)."""
    return _HOOKS.get(name)


def hooks_for(spec: FormatSpec) -> FormatHooks | None:
    """The hooks of the family that writes ``spec``'s whole output: the reply envelope's when the reply is
    one JSON object (spec v6), the turn layout's when the spec has a layout (spec v3; neither is a tool
    format, so neither is in the table), else its tool format's."""
    if spec.envelope.defined:
        return envelope.HOOKS
    return layout.HOOKS if spec.layout.defined else hooks(spec.tools.format)


def layout_protocols() -> dict[str, LayoutProtocol]:
    """Every registered family's protocol supplement for a learned layout, by family name (registry
    order)."""
    return {h.name: h.layout_protocol for h in _HOOKS.values() if h.layout_protocol is not None}


def protocol_family(spec: FormatSpec) -> FormatFamily | None:
    """The family whose own tokens ``spec``'s learned headed layout is written in (its ``layout_protocol``
    recognises the layout: a gpt-oss template learned as headed messages speaks Harmony), else None.  The
    engines serve such a model through that family's own path whatever parser is named."""
    if not spec.layout.headed:
        return None
    for h in _HOOKS.values():
        if h.layout_protocol is not None and h.layout_protocol(spec.layout) is not None:
            return h.family
    return None


def dedicated_detectors() -> tuple[Dedicated, ...]:
    """Every registered family's dedicated detector, in registry order."""
    return tuple(h.dedicated for h in _HOOKS.values() if h.dedicated is not None)


def analyze(
    source: TemplateSource | str,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    on_spec: SpecHook | None = None,
) -> Analysis:
    """:func:`workbench.analysis.analyze` with every registered family's dedicated detector: the analysis the
    rest of the workbench runs (``on_spec``: see :data:`workbench.analysis.analyzer.SpecHook`).

    Raises:
        TemplateError: the template does not compile, or cannot render a plain user message.
    """
    return analysis.analyze(
        source,
        dedicated=dedicated_detectors(),
        protocols=layout_protocols(),
        time_limit=time_limit,
        on_spec=on_spec,
    )


def response_fields(spec: FormatSpec) -> dict[str, dict[str, Any]]:
    """The response-template regions the format's family contributes ({} without a tool format).

    Raises:
        ResponseGap: the family has no response-template spelling (its gap says why), or cannot spell this
            spec.
    """
    fam = hooks_for(spec)
    if fam is None:
        return {}
    if fam.response_fields is None:
        raise ResponseGap(fam.response_template_gap)
    return fam.response_fields(spec)


def register(
    fam: FormatFamily,
    *,
    dedicated: Dedicated | None = None,
    response_fields: ResponseFields | None = None,
    response_template_gap: str = "",
    replace: bool = False,
) -> FormatHooks:
    """Add a family at run time: its runtime side to :mod:`workbench.runtime.formats`, its analysis and export
    side here (every stage sees it at once); returns its hooks.

    Raises:
        ValueError: a family of that name is registered already and ``replace`` is False, or the family has
            neither a response-template hook nor the reason why not.
    """
    added = FormatHooks(fam, dedicated, response_fields, response_template_gap)
    runtime_formats.register(fam, replace=replace)
    _HOOKS[fam.name] = added
    return added


def unregister(name: str) -> None:
    """Remove a family added with :func:`register` (no error when there is none; built-ins stay)."""
    runtime_formats.unregister(name)
    if name not in runtime_formats.builtin_names():
        _HOOKS.pop(name, None)


def check_registry(names: Sequence[str] | None = None) -> list[str]:
    """What is out of step between the runtime families and their hooks here ([] when nothing is)."""
    runtime = set(runtime_formats.names() if names is None else names)
    missing = [f"format {n!r} has a runtime folder but no hooks here" for n in runtime - set(_HOOKS)]
    orphans = [f"format {n!r} has hooks but no runtime family" for n in set(_HOOKS) - runtime]
    return sorted(missing + orphans)


__all__ = [
    "FormatFamily",
    "FormatHooks",
    "ResponseGap",
    "SampleCall",
    "analyze",
    "check_registry",
    "dedicated_detectors",
    "families",
    "family",
    "hooks",
    "hooks_for",
    "layout_protocols",
    "protocol_family",
    "register",
    "response_fields",
    "unregister",
]
