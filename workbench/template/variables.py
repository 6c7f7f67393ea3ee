"""The switches a template reads: variables callers may pass, with the values worth trying for each.

A 2026 template can change its output format through variables other than ``enable_thinking``
(``thinking``, ``reasoning_effort``, ``clear_thinking``, ...).  Which ones exist is read off the template
itself, not a list of known names: jinja2's :func:`jinja2.meta.find_undeclared_variables` on the parsed
source (of the same sandboxed environment that renders it) gives every variable the caller may set; the
ones the rendering machinery always passes (``messages``, ``tools``, special tokens, ...) are not switches.

The values to try come from how the template uses each variable, read from the AST:

* compared with string (or number) literals -- ``reasoning_effort == 'high'``, ``x in ['low', 'high']`` --
  the literals are the candidate values, also through a local alias (``{% set effort = reasoning_effort if
  reasoning_effort is defined else 'low' %}`` then ``effort == 'none'``), whose fallback literals count too;
* otherwise tested for truth (``{% if thinking %}``, ``not clear_thinking``, ``x is defined and x``) --
  ``True`` and ``False``.

A variable the template only prints or iterates gives no candidate values and is not a switch.  Nothing is
rendered here; probing the candidates is the analysis' job (``workbench.analysis.switches``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import jinja2
import jinja2.meta
from jinja2 import nodes

from workbench.template.errors import TemplateError
from workbench.template.render import compile_template

#: Variables the rendering machinery itself passes (transformers' ``apply_chat_template`` and its special
#: tokens), or data rather than a switch: never probed as switches.
NOT_SWITCHES = frozenset(
    {
        "messages",
        "tools",
        "documents",
        "add_generation_prompt",
        "continue_final_message",
        "bos_token",
        "eos_token",
        "unk_token",
        "pad_token",
        "sep_token",
        "cls_token",
        "mask_token",
        "additional_special_tokens",
        "raise_exception",
        "strftime_now",
        "namespace",
        "dict",
        "range",
        "lipsum",
        "cycler",
        "joiner",
        "custom_tools",
        "builtin_tools",
        "date_string",
        "functions",
        "datetime",
    }
)

#: Bounds that keep probing cheap on a template with many variables.
MAX_SWITCHES = 6
MAX_VALUES = 4

Value = str | int | float | bool


@dataclass(frozen=True)
class SwitchCandidate:
    """A variable the template reads that may change its format, and the values worth rendering it with.

    ``kind`` is ``choice`` (compared with literals: ``values`` are those literals) or ``flag`` (tested for
    truth: ``values`` are ``(True, False)``).
    """

    name: str
    kind: str
    values: tuple[Value, ...]


#: Sources whose facts are remembered: as many as compiled templates (``render.compile_template``), since
#: they are facts of the compiled source, and the AST walk costs a compile's worth of time.
_REMEMBERED = 64


@lru_cache(maxsize=_REMEMBERED)
def undeclared_variables(source: str) -> frozenset[str]:
    """Every variable ``source`` reads that it does not set itself (empty when it does not compile)."""
    tree = _parse(source)
    if tree is None:
        return frozenset()
    try:
        return frozenset(jinja2.meta.find_undeclared_variables(tree))
    except RecursionError:  # a hostile nesting depth: nothing known rather than a crash
        return frozenset()


def find_switches(source: str) -> tuple[SwitchCandidate, ...]:
    """The template's switch candidates, in order of first appearance (at most :data:`MAX_SWITCHES`).

    Pure: parses ``source`` (in the sandbox's environment, nothing is rendered); a template that does not
    parse has none.
    """
    return _find_switches(source)


@lru_cache(maxsize=_REMEMBERED)
def _find_switches(source: str) -> tuple[SwitchCandidate, ...]:
    try:
        return _switches_of(source)
    except RecursionError:  # a hostile nesting depth: no switches rather than a crash
        return ()


def _switches_of(source: str) -> tuple[SwitchCandidate, ...]:
    tree = _parse(source)
    if tree is None:
        return ()
    names = set(undeclared_variables(source)) - NOT_SWITCHES - _loop_locals(tree)
    if not names:
        return ()
    aliases = _aliases(tree, names)
    literals: dict[str, list[Value]] = {}
    tested: set[str] = set()
    order: list[str] = []
    for node in tree.find_all(nodes.Name):
        if node.ctx == "load" and node.name in names and node.name not in order:
            order.append(node.name)
    for var, value in _compared_literals(tree, names, aliases):
        bucket = literals.setdefault(var, [])
        if value not in bucket:
            bucket.append(value)
    for var, fallback in _alias_fallbacks(tree, names):
        bucket = literals.setdefault(var, [])
        if fallback not in bucket:
            bucket.append(fallback)
    for var in _truth_tested(tree, names, aliases):
        tested.add(var)
    out: list[SwitchCandidate] = []
    for name in order:
        if name in literals and any(isinstance(v, str) for v in literals[name]):
            out.append(SwitchCandidate(name, "choice", tuple(literals[name][:MAX_VALUES])))
        elif name in tested or name in literals:
            out.append(SwitchCandidate(name, "flag", (True, False)))
        if len(out) >= MAX_SWITCHES:
            break
    return tuple(out)


def _parse(source: str) -> nodes.Template | None:
    try:
        compiled = compile_template(source)
        return compiled.env.parse(source)
    except (TemplateError, jinja2.TemplateSyntaxError, RecursionError):
        return None


def _refers(node: nodes.Node, names: set[str], aliases: dict[str, str]) -> str | None:
    """The switch a node stands for: the variable itself, or a local alias of it."""
    if isinstance(node, nodes.Name):
        if node.name in aliases:
            return aliases[node.name]
        if node.name in names:
            return node.name
    if isinstance(node, nodes.Filter) and node.node is not None and node.name in ("lower", "string", "trim"):
        return _refers(node.node, names, aliases)
    return None


def _loop_locals(tree: nodes.Template) -> set[str]:
    """Names a template sets inside a loop or a macro (``{% set content = message.content %}``): jinja2
    reports them as undeclared where they are read in another scope, but no caller passes them."""
    out: set[str] = set()
    for scope in tree.find_all((nodes.For, nodes.Macro)):
        targets: list[nodes.Node] = [a.target for a in scope.find_all(nodes.Assign)]
        targets += [a.target for a in scope.find_all(nodes.AssignBlock)]
        targets += [a.target for a in scope.find_all(nodes.For)]
        for target in targets:
            out.update(n.name for n in target.find_all(nodes.Name))
            if isinstance(target, nodes.Name):
                out.add(target.name)
        if isinstance(scope, nodes.For):
            out.update(n.name for n in scope.target.find_all(nodes.Name))
            if isinstance(scope.target, nodes.Name):
                out.add(scope.target.name)
    return out


def _aliases(tree: nodes.Template, names: set[str]) -> dict[str, str]:
    """Local names set from exactly one switch, directly or through other aliases -> the switch.

    ``{% set effort = reasoning_effort if reasoning_effort is defined else 'low' %}`` makes ``effort`` an
    alias of ``reasoning_effort``; ``{% set keep = (not clear) or loop.index0 > last %}`` makes ``keep`` one
    of whatever ``clear`` stands for.
    """
    out: dict[str, str] = {}
    assigns = [a for a in tree.find_all(nodes.Assign) if isinstance(a.target, nodes.Name)]
    changed = True
    while changed:
        changed = False
        for assign in assigns:
            target = assign.target
            assert isinstance(target, nodes.Name)
            if target.name in names or target.name in out:
                continue
            used = {
                out.get(n.name, n.name)
                for n in assign.node.find_all(nodes.Name)
                if n.name in names or n.name in out
            }
            if isinstance(assign.node, nodes.Name) and (assign.node.name in names or assign.node.name in out):
                used = {out.get(assign.node.name, assign.node.name)}
            if len(used) == 1:
                out[target.name] = next(iter(used))
                changed = True
    return out


def _alias_fallbacks(tree: nodes.Template, names: set[str]) -> Iterator[tuple[str, Value]]:
    """The literal a template falls back to when the switch is not given: ``x if x is defined else 'low'``."""
    for assign in tree.find_all(nodes.Assign):
        expr = assign.node
        if not isinstance(expr, nodes.CondExpr) or expr.expr2 is None:
            continue
        used = {n.name for n in expr.find_all(nodes.Name) if n.name in names}
        if len(used) == 1 and isinstance(expr.expr2, nodes.Const) and isinstance(expr.expr2.value, str):
            yield next(iter(used)), expr.expr2.value


def _literal_values(node: nodes.Node) -> list[Value]:
    if isinstance(node, nodes.Const) and isinstance(node.value, (str, int, float, bool)):
        return [node.value]
    if isinstance(node, (nodes.List, nodes.Tuple)):
        return [v for item in node.items for v in _literal_values(item)]
    return []


def _compared_literals(
    tree: nodes.Template, names: set[str], aliases: dict[str, str]
) -> Iterator[tuple[str, Value]]:
    """(switch, literal) for every comparison of a switch with literals, either way round."""
    for cmp in tree.find_all(nodes.Compare):
        operands = [cmp.expr, *(op.expr for op in cmp.ops)]
        for i, node in enumerate(operands):
            var = _refers(node, names, aliases)
            if var is None:
                continue
            for j, other in enumerate(operands):
                if j != i:
                    for value in _literal_values(other):
                        yield var, value


def _truth_tested(tree: nodes.Template, names: set[str], aliases: dict[str, str]) -> Iterator[str]:
    """Switches used as a condition: the test of an ``if`` or a conditional expression, also under
    ``not``, ``and`` and ``or``."""
    tests: list[nodes.Node] = [node.test for node in tree.find_all(nodes.If)]
    tests += [node.test for node in tree.find_all(nodes.CondExpr)]
    while tests:
        node = tests.pop()
        var = _refers(node, names, aliases)
        if var is not None:
            yield var
        elif isinstance(node, nodes.Not):
            tests.append(node.node)
        elif isinstance(node, (nodes.And, nodes.Or)):
            tests.extend((node.left, node.right))
