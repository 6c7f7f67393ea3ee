"""The format registry at the bottom: ``ToolsSpec.format`` -> the family that reads, constrains and writes it.

A small table of module names (:data:`MODULES`), resolved lazily and *relative to this package*
(:func:`importlib.import_module` with ``__name__``): listing the names imports no family, loading a spec
imports none, and the folder works unchanged when a plug-in vendors the runtime under another package name.
Each built-in family is a sub-package named after its ``ToolsSpec.format`` value, holding ``FAMILY`` (a
:class:`~workbench.runtime.formats.base.FormatFamily`); adding a format is a folder and one line here.
:func:`register` adds a family at run time (the tests' toy format does).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from workbench.runtime.formats.base import FormatFamily, SampleCall

if TYPE_CHECKING:
    from workbench.runtime.spec import FormatSpec

#: The built-in families' modules, relative to this package, in the order people read them: the families
#: the generic analysis describes, the dedicated ones, then call patterns.  A family's name is its module's.
MODULES: tuple[str, ...] = (
    ".json_native",
    ".tag_with_json",
    ".tag_with_tagged",
    ".harmony",
    ".pythonic",
    ".recipient",
    ".call_pattern",
)

# Families registered at run time, by name (they win over a built-in of the same name only with replace).
_REGISTERED: dict[str, FormatFamily] = {}


def builtin_names() -> tuple[str, ...]:
    """The built-in families' names, in :data:`MODULES` order (pure; imports none of them)."""
    return tuple(m.lstrip(".") for m in MODULES)


def names() -> tuple[str, ...]:
    """Every registered format name: the built-in ones, then those added with :func:`register` (pure)."""
    builtin = builtin_names()
    return (*builtin, *sorted(n for n in _REGISTERED if n not in builtin))


def family(name: str) -> FormatFamily | None:
    """The family registered as ``name``; None for ``"none"`` and for unknown names.

    A built-in family is imported the first time it is asked for.
    """
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in builtin_names():
        return None
    return _load(name)


def family_for(spec: FormatSpec) -> FormatFamily | None:
    """The family that reads, writes and constrains ``spec``'s whole output: the turn layout's
    (:mod:`.layout`, not a tool format and so not in :data:`MODULES`) when the spec has a layout (a lead,
    headed messages: spec v3), the reply envelope's (:mod:`.envelope`, spec v6) when the reply is one JSON
    object, else its tool format's family."""
    if spec.envelope.defined:
        return _load("envelope")
    if spec.layout.defined:
        return _load("layout")
    return family(spec.tools.format)


@cache
def _load(name: str) -> FormatFamily:
    module = importlib.import_module(f".{name}", __name__)
    fam: FormatFamily = module.FAMILY
    if fam.name != name:
        raise RuntimeError(f"the family in formats/{name}/ is named {fam.name!r}")
    return fam


def families() -> dict[str, FormatFamily]:
    """Every registered family by name (imports the built-in ones)."""
    out: dict[str, FormatFamily] = {}
    for name in names():
        fam = family(name)
        if fam is not None:
            out[name] = fam
    return out


def register(fam: FormatFamily, *, replace: bool = False) -> FormatFamily:
    """Add ``fam`` (every stage sees it at once); returns it.

    Raises:
        ValueError: a family of that name is registered already and ``replace`` is False.
    """
    if fam.name in names() and not replace:
        raise ValueError(f"a format named {fam.name!r} is registered already")
    _REGISTERED[fam.name] = fam
    return fam


def unregister(name: str) -> None:
    """Remove a family added with :func:`register` (no error when there is none; built-ins stay)."""
    _REGISTERED.pop(name, None)


__all__ = [
    "MODULES",
    "FormatFamily",
    "SampleCall",
    "builtin_names",
    "families",
    "family",
    "family_for",
    "names",
    "register",
    "unregister",
]
