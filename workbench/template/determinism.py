"""Can a template render different text for the same call?  Read from its source, not by rendering twice.

Validation must not call a template validated when its output changes from render to render (the cut
between prompt and answer would move, and no spec could be checked against it).  It used to render every
case a second time to find out, which was a fifth of the renders of ``workbench analyze``.  In the sandbox
a render is a function of the template, its context and the environment's globals, and only a few things
in that environment are not functions of their input:

* the ``random`` filter, by name or through ``map('random')``, and a ``map`` whose filter name is computed
  (it could be ``random``);
* the ``lipsum`` global (random words);
* ``strftime_now`` when the clock is not fixed (:func:`workbench.template.render.fixed_clock`);
* an object's default ``repr`` printed into the output (``<function ... at 0x7f...>``): its address can
  change between renders.  That one is seen in the text (:func:`prints_an_address`), not in the source.

When none of these is present the template renders the same text every time, by construction; when one is,
validation renders every case twice, as before.  A template that does not parse is treated as one that can
differ (its renders fail anyway).
"""

from __future__ import annotations

import re
from functools import lru_cache

import jinja2
from jinja2 import nodes

from workbench.template.render import TemplateError, compile_template

#: Filters whose result is drawn at random.
RANDOM_FILTERS = frozenset({"random"})
#: Globals whose result is drawn at random.
RANDOM_GLOBALS = frozenset({"lipsum"})
#: Globals that read the clock (the same text only at a fixed clock).
CLOCK_GLOBALS = frozenset({"strftime_now"})
#: Filters that apply another filter named by their first argument.
_BY_NAME = frozenset({"map"})

_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{4,}")


def varying_sources(source: str, *, clock_fixed: bool) -> tuple[str, ...]:
    """What in ``source`` can make two renders of one call differ (empty: nothing; pure)."""
    found = _sources(source)
    if clock_fixed:
        found = tuple(f for f in found if f not in CLOCK_GLOBALS)
    return found


def prints_an_address(text: str) -> bool:
    """Does ``text`` hold an object's address (a default ``repr``), which can differ between renders?

    Asked of every render a validation makes, most of them thousands of characters without a ``0x``: the
    substring test rules those out ~30x faster than the regular expression, which tries a match at every
    position (a 5 KB render: 6 against 190 us)."""
    return "0x" in text and _ADDRESS.search(text) is not None


@lru_cache(maxsize=64)
def _sources(source: str) -> tuple[str, ...]:
    try:
        tree = compile_template(source).env.parse(source)
    except (TemplateError, jinja2.TemplateSyntaxError, RecursionError):
        return ("a template that does not parse",)
    found: list[str] = []
    try:
        for node in tree.find_all((nodes.Filter, nodes.Name)):
            for name in _varying(node):
                if name not in found:
                    found.append(name)
    except RecursionError:  # a hostile nesting depth: assume the worst
        return ("a template nested too deep to read",)
    return tuple(found)


def _varying(node: nodes.Node) -> list[str]:
    if isinstance(node, nodes.Name):
        if node.ctx == "load" and node.name in RANDOM_GLOBALS | CLOCK_GLOBALS:
            return [node.name]
        return []
    assert isinstance(node, nodes.Filter)
    if node.name in RANDOM_FILTERS:
        return [node.name]
    if node.name in _BY_NAME and node.args:
        first = node.args[0]
        if not isinstance(first, nodes.Const):
            return [f"{node.name} with a computed filter name"]
        if first.value in RANDOM_FILTERS:
            return [str(first.value)]
    return []
