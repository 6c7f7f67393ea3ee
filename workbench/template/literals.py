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

import itertools
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
    for text in _folded(ast):
        found.update(_units(text))
    return frozenset(found | _overlaps(found) | _remainders(found, _fragments(ast), _after_values_only(ast)))


def _folded(ast: nodes.Template) -> Iterator[str]:
    """The text of each run of constants joined by ``~`` / ``+`` where a run holds a name set once to a
    string (``'<tool_call' + S + '>'`` after ``{% set S = ':6124c78e' %}``): one literal in every render."""
    assigned: dict[str, list[nodes.Node]] = {}
    for assign in ast.find_all(nodes.Assign):
        if isinstance(assign.target, nodes.Name):
            assigned.setdefault(assign.target.name, []).append(assign.node)
    consts = {
        name: node.value
        for name, values in assigned.items()
        if len(values) == 1 and isinstance(node := values[0], nodes.Const) and isinstance(node.value, str)
    }
    if not consts:
        return
    for expr in ast.find_all((nodes.Concat, nodes.Add)):
        run: list[str] = []
        named = False
        for part in [*_flattened(expr), None]:
            if part is not None and _is_text(part):
                run.append(_text(part))
            elif isinstance(part, nodes.Name) and part.name in consts:
                run.append(consts[part.name])
                named = True
            else:
                if named and len(run) > 1:
                    yield "".join(run)
                run, named = [], False


def template_instances(source: str) -> frozenset[str]:
    """The instances of a ``HEAD ~ value ~ TAIL`` the template writes that start one of its literals
    (``<|/analysis|>`` beside ``'<|/' ~ key ~ '|>'``), up to the tail: units read whole, never as the head
    and the rest (pure; empty when the template does not parse)."""
    return frozenset(_instances(source))


def template_closed_instances(source: str) -> frozenset[str]:
    """The instances of :func:`template_instances` that end in their tail (``<!--think-->``, not a header
    line ``<|im_start|>assistant -> thought`` whose tail is its line break): markers closed by the
    template's own literal, which no cut splits (a model completes a header line, never a closed marker)."""
    return frozenset(unit for unit, closed in _instances(source).items() if closed)


@lru_cache(maxsize=64)
def _instances(source: str) -> dict[str, bool]:
    """Each instance (trimmed) and whether it ends in a tail that is not blanks."""
    try:
        ast = compile_template(source).env.parse(source)
    except (TemplateError, jinja2.TemplateSyntaxError):
        return {}
    # (only heads that are units, and tails too short to be one or written nowhere but after a value: a
    # tail written on its own too marks where the value ends by itself, ``'<|im_start|>' ~ role ~
    # '\n<think>'`` beside ``'<think>\n'``, and the finest reading finds it; ``-->`` of ``'<!--' ~ role ~
    # '-->'`` closes what its head opened, and ``<!--/assistant-->`` is one marker, not ``<!--`` and more)
    closers = _after_values_only(ast)
    fragments = {
        head: {t for t in tails if t and (len(t) < MIN_LITERAL or t in closers)}
        for head, tails in _fragments(ast).items()
        if len(head) >= MIN_LITERAL
    }
    out: dict[str, bool] = {}
    units = template_literals(source)

    def plain(value: str, tail: str) -> bool:
        """A closer's value is a word, not markup: one that holds a unit of its own (``assistant<|channel|>
        response`` before ``<|im_sep|>``) makes a header of several markers, read as each of them."""
        return len(tail) < MIN_LITERAL or tail not in closers or not any(u in value for u in units)

    for unit in units:
        for head, tails in fragments.items():
            if unit == head or not unit.startswith(head):
                continue
            rest = unit[len(head) :]
            ends = sorted(
                (_tail_end(rest, t), not t.startswith(_BLANK))
                for t in tails
                if t.startswith(_BLANK) or (t in rest and plain(rest[: rest.find(t)], t))
            )
            if ends:  # the instance runs to its tail: ``<|open|>message role="assistant"`` of a longer unit
                instance = unit[: len(head) + ends[0][0]].strip()
                out[instance] = out.get(instance, False) or ends[0][1]
    return out


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


#: Marks a tail of blanks (``'### ' ~ role ~ '\n'``): the blank follows, in :func:`_fragments`' tails.
_BLANK = "\x00"


def _tail_end(rest: str, tail: str) -> int:
    """Where an instance's value and tail end in the text after its head: after the tail; a tail of blanks
    ends the instance before it (at the end of the unit when the unit holds none)."""
    if tail.startswith(_BLANK):
        at = rest.find(tail[len(_BLANK) :])
        return at if at > 0 else len(rest)
    return rest.find(tail) + len(tail)


def _fragments(ast: nodes.Template) -> dict[str, set[str]]:
    """The literals written only as the head of ``LITERAL ~ value ~ LITERAL`` (trimmed), each with the
    literals written after its value (``'<|/'`` of ``'<|/' ~ key ~ '|>'``, with ``|>``; a tail of blanks
    as :data:`_BLANK` and its first blank).

    A longer literal that starts with such a head and holds one of its tails after it is an instance of
    that pattern (``<|/analysis|>``: the value ``analysis``), not the head then a unit: what follows the
    head is where a value goes."""
    tails: dict[int, set[str]] = {}
    for expr in ast.find_all((nodes.Concat, nodes.Add)):
        parts = list(_flattened(expr))
        for n in range(len(parts) - 2):
            head, value, tail = parts[n : n + 3]
            if _is_text(head) and not _is_text(value) and _is_text(tail):
                raw = _text(tail)
                tails.setdefault(id(head), set()).add(raw.strip() or (_BLANK + raw[:1] if raw else ""))
    out: dict[str, set[str]] = {}
    heads_only: dict[str, bool] = {}
    for node in ast.find_all((nodes.Const, nodes.TemplateData)):
        if _is_text(node):
            text = _text(node).strip()
            heads_only[text] = heads_only.get(text, True) and id(node) in tails
            if id(node) in tails:
                out.setdefault(text, set()).update(tails[id(node)])
    return {t: out[t] for t, only in heads_only.items() if t and only}


def _after_values_only(ast: nodes.Template) -> set[str]:
    """The literals (trimmed) written only right after a value, with nothing between: every node of that
    text follows a non-literal operand of ``~`` / ``+`` at once (``'-->\n'`` of ``'<!--' ~ role ~
    '-->\n'``), so the text closes whatever precedes it and never opens anything of its own."""
    after: set[int] = set()
    for expr in ast.find_all((nodes.Concat, nodes.Add)):
        parts = list(_flattened(expr))
        for before, node in itertools.pairwise(parts):
            # (a tail that starts a new line, ``'\n<think>\n'``, opens something there: it closes nothing)
            if _is_text(node) and not _is_text(before) and not _text(node)[:1].isspace():
                after.add(id(node))
    only: dict[str, bool] = {}
    for node in ast.find_all((nodes.Const, nodes.TemplateData)):
        if _is_text(node):
            text = _text(node).strip()
            only[text] = only.get(text, True) and id(node) in after
    return {t for t, yes in only.items() if t and yes}


def _text(node: nodes.Node) -> str:
    return node.value if isinstance(node, nodes.Const) else node.data  # type: ignore[attr-defined]


def _is_text(node: nodes.Node) -> bool:
    if isinstance(node, nodes.TemplateData):
        return True
    return isinstance(node, nodes.Const) and isinstance(node.value, str)


def _flattened(expr: nodes.Node) -> Iterator[nodes.Node]:
    """The operands of a chain of ``~`` / ``+``, in order."""
    if isinstance(expr, nodes.Concat):
        for child in expr.nodes:
            yield from _flattened(child)
    elif isinstance(expr, nodes.Add):
        yield from _flattened(expr.left)
        yield from _flattened(expr.right)
    else:
        yield expr


def _remainders(
    units: set[str], fragments: dict[str, set[str]] | None = None, closers: set[str] | None = None
) -> set[str]:
    """The pieces of a unit on either side of another unit it holds (``<|END_RESPONSE|>`` of
    ``<|END_RESPONSE|><|END_OF_TURN_TOKEN|>``, which also holds the unit ``<|END_OF_TURN_TOKEN|>``).

    An inner unit found across the edge of another unit the outer one holds is a coincidence of characters,
    not a unit written there: ``##think####/think##`` holds ``##think##`` then ``##/think##``, and the
    ``###`` of a markdown heading found where they meet would make ``##think`` and ``#/think##`` units.
    ``fragments`` (:func:`_fragments`): after the head of a ``HEAD ~ value ~ TAIL`` comes a value, so the
    piece after it, up to a tail, is none (``analysis|>`` of ``<|/analysis|>``); ``closers``
    (:func:`_after_values_only`): before a text written only right after a value comes that value, so the
    piece in front of it is none either (``<|assistant`` of ``<|assistant_end|>`` beside ``'<|' ~ role ~
    '_end|>'``)."""
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
            # after the head of ``HEAD ~ value ~ TAIL`` comes a value: the rest up to a tail is no unit
            # (``analysis|>`` of ``<|/analysis|>``, an instance of ``'<|/' ~ key ~ '|>'``)
            # (``call`` of ``<!--call `` is none either when the outer is a head with one of the inner's
            # tails: ``'<!--call ' ~ name ~ '-->'`` is an instance of ``'<!--' ~ role ~ '-->'``, whose
            # value starts after ``<!--``)
            tails = (fragments or {}).get(inner, ())
            own = (fragments or {}).get(outer, ())
            value = any(t and (t in outer[end:] or t in own) for t in tails)
            after = "" if value else outer[end:]
            before = "" if inner in (closers or ()) else outer[:at]
            for piece in (before, after):
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
