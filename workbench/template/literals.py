"""The literal output text a template's author wrote: evidence of where the markers of its renders begin.

A render is the concatenation of what the template's nodes output; a literal (template data between tags,
a string constant printed by ``{{ '...' }}``, concatenated into printed text, or assigned with
``{% set %}``) arrives in the render as one unit.  The analysis uses these literals as evidence when it must
cut a text where no render fixes a position (docs/layout.md): ``<|START_RESPONSE|>`` is a literal of
Command-R7B's template, so a cut that falls between its ``<|START_`` and ``RESPONSE|>`` moves to its start.

Two more units come from the literals themselves, by comparison: the lines of a literal that spans several
(``'<tool_call>\\n<function='`` holds ``<tool_call>`` and ``<function=``), and the text one literal ends with
and another begins with (``'<|START_THINKING|><|END_THINKING|>'`` and ``'<|END_THINKING|><|START_ACTION|>['``
share ``<|END_THINKING|>``).  Nothing here looks at what a literal looks like; only lengths matter (a unit
of one or two characters says nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import jinja2
from jinja2 import nodes

from workbench.template.render import TemplateError, compile_template

#: Literals shorter than this (trimmed) are not evidence: too common to mark a unit.
MIN_LITERAL = 3
#: Literals longer than this are prose (a system prompt), not units anything is cut at.
MAX_LITERAL = 80


@lru_cache(maxsize=64)
def template_literals(source: str) -> frozenset[str]:
    """Every literal the template outputs, trimmed of edge whitespace, plus the units the literals share
    (pure; empty when the template does not parse)."""
    try:
        ast = compile_template(source).env.parse(source)
    except (TemplateError, jinja2.TemplateSyntaxError):
        return frozenset()
    found: set[str] = set()
    for output in ast.find_all(nodes.Output):
        for expr in output.nodes:
            for text in _emitted(expr):
                found.update(_units(text))
    for assign in ast.find_all(nodes.Assign):
        for text in _emitted(assign.node):
            found.update(_units(text))
    for block in ast.find_all(nodes.AssignBlock):
        for data in block.find_all(nodes.TemplateData):
            found.update(_units(data.data))
    return frozenset(found | _overlaps(found) | _remainders(found))


@lru_cache(maxsize=64)
def template_strings(source: str) -> frozenset[str]:
    """Every string constant of the template, output or not (``'</think>' in content`` included), trimmed
    (pure; empty when it does not parse)."""
    try:
        ast = compile_template(source).env.parse(source)
    except (TemplateError, jinja2.TemplateSyntaxError):
        return frozenset()
    return frozenset(
        c.value.strip() for c in ast.find_all(nodes.Const) if isinstance(c.value, str) and c.value.strip()
    )


def _emitted(expr: nodes.Node) -> Iterator[str]:
    """The string constants ``expr`` puts into its value (not those it only looks things up with)."""
    if isinstance(expr, nodes.TemplateData):
        yield expr.data
    elif isinstance(expr, nodes.Const):
        if isinstance(expr.value, str):
            yield expr.value
    elif isinstance(expr, (nodes.Add, nodes.Concat)):
        for child in (expr.left, expr.right) if isinstance(expr, nodes.Add) else expr.nodes:
            yield from _emitted(child)
    elif isinstance(expr, nodes.CondExpr):
        yield from _emitted(expr.expr1)
        if expr.expr2 is not None:
            yield from _emitted(expr.expr2)
    elif isinstance(expr, nodes.Filter) and expr.node is not None:
        yield from _emitted(expr.node)
    elif isinstance(expr, (nodes.List, nodes.Tuple)):
        for item in expr.items:
            yield from _emitted(item)


def _units(text: str) -> list[str]:
    """A literal's text, and its lines when it spans several (each line is a unit of its own too)."""
    out = [text.strip()] if MIN_LITERAL <= len(text.strip()) <= MAX_LITERAL else []
    if "\n" in text.strip():
        out += [line.strip() for line in text.splitlines() if MIN_LITERAL <= len(line.strip()) <= MAX_LITERAL]
    return out


def _remainders(units: set[str]) -> set[str]:
    """The pieces of a unit on either side of another unit it holds (``<|END_RESPONSE|>`` of
    ``<|END_RESPONSE|><|END_OF_TURN_TOKEN|>``, which also holds the unit ``<|END_OF_TURN_TOKEN|>``).

    An inner unit found across the edge of another unit the outer one holds is a coincidence of characters,
    not a unit written there: ``##think####/think##`` holds ``##think##`` then ``##/think##``, and the
    ``###`` of a markdown heading found where they meet would make ``##think`` and ``#/think##`` units."""
    out: set[str] = set()
    for outer in units:
        held = [(at, at + len(u)) for u in units if u != outer and u in outer for at in _finds(outer, u)]
        for inner in units:
            if inner == outer or len(inner) < MIN_LITERAL or inner not in outer:
                continue
            at = outer.find(inner)
            end = at + len(inner)
            if any(s < at < e < end or at < s < end < e for s, e in held):
                continue
            for piece in (outer[:at], outer[end:]):
                if len(piece.strip()) >= MIN_LITERAL:
                    out.add(piece.strip())
    return out


def _finds(text: str, unit: str) -> Iterator[int]:
    """Every place ``unit`` starts in ``text``."""
    at = text.find(unit)
    while at >= 0:
        yield at
        at = text.find(unit, at + 1)


def _overlaps(units: set[str]) -> set[str]:
    """The text one unit ends with and another begins with (at least :data:`MIN_LITERAL` characters)."""
    out: set[str] = set()
    ordered = sorted(units)
    for a in ordered:
        for b in ordered:
            if a == b:
                continue
            for n in range(min(len(a), len(b)) - 1, MIN_LITERAL - 1, -1):
                if a.endswith(b[:n]):
                    piece = b[:n].strip()
                    if len(piece) >= MIN_LITERAL:
                        out.add(piece)
                    break
    return out
