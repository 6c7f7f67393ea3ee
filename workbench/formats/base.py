"""What a format family adds above the runtime: its dedicated detector and its response-template hook.

The runtime side of a family (:class:`workbench.runtime.formats.base.FormatFamily`: parser, grammar, sample
writer) is what every stage builds on.  The analysis and the exports need two more things that must not be
in the runtime (a serving plug-in vendors the runtime; detection needs the analyzer): how to recognise the
format in a template the generic diffs cannot describe, and how a transformers ``response_template`` spells
its tool calls.  A family folder ``formats/<name>/`` holds them and its ``HOOKS`` says which it has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.analysis.dedicated import Dedicated
from workbench.analysis.layout import LayoutProtocol
from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.spec import FormatSpec

#: ``spec -> {"tool_calls": {...}}`` (and, for Harmony, the reasoning and content regions too): the part of
#: a transformers ``response_template`` this format contributes.  Raises
#: :class:`~workbench.formats.response_parts.ResponseGap` for a spec it cannot spell.
ResponseFields = Callable[[FormatSpec], dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class FormatHooks:
    """One family's analysis and export side.

    Attributes:
        family: the runtime family these hooks belong to (its ``name`` is the format's name).
        dedicated: the dedicated detector, for formats the generic diffs cannot describe; families with one
            are tried in registry order before the generic analysis of a call.
        response_fields: the response-template export hook; None when a response template cannot read the
            format, and then ``response_template_gap`` says why.
        response_template_gap: why the response-template export cannot express the format.
        layout_protocol: rules of the family's protocol that no template renders, added to a learned layout
            that speaks the family's tokens (Harmony: OpenChatML's escapes, literal blocks, ``call_id=``).
    """

    family: FormatFamily
    dedicated: Dedicated | None = None
    response_fields: ResponseFields | None = None
    response_template_gap: str = ""
    layout_protocol: LayoutProtocol | None = None

    def __post_init__(self) -> None:
        if self.response_fields is None and not self.response_template_gap:
            raise ValueError(
                f"format {self.name!r}: without response_fields, say why (response_template_gap)"
            )

    @property
    def name(self) -> str:
        return self.family.name
