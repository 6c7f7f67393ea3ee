"""One package per tool-call format family, and the ONE table that maps ``ToolsSpec.format`` to it.

A family package (``formats/<name>/``) carries everything about its format: detection (for formats the
generic analysis cannot describe), value encoding, parser, grammar, samples and export hooks.  The stage
packages (``analysis``, ``parsing``, ``grammar``, ``export``) hold only generic machinery and look the
family up here, lazily, by the spec's format name.  Adding a format is one folder and one line in
:data:`FORMATS` (or :func:`register` at run time, as the tests' toy format does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.formats.base import FormatFamily, SampleCall
from workbench.formats.call_pattern import FAMILY as CALL_PATTERN
from workbench.formats.harmony import FAMILY as HARMONY
from workbench.formats.json_native import FAMILY as JSON_NATIVE
from workbench.formats.pythonic import FAMILY as PYTHONIC
from workbench.formats.recipient import FAMILY as RECIPIENT
from workbench.formats.tag_with_json import FAMILY as TAG_WITH_JSON
from workbench.formats.tag_with_tagged import FAMILY as TAG_WITH_TAGGED

if TYPE_CHECKING:
    from workbench.spec import FormatSpec

#: ``ToolsSpec.format`` -> its family.  Order matters for dedicated detectors: they are tried in this order
#: (Harmony's headers also look like recipient addresses; a recipient call also looks like a bare name).
FORMATS: dict[str, FormatFamily] = {
    f.name: f
    for f in (JSON_NATIVE, TAG_WITH_JSON, TAG_WITH_TAGGED, HARMONY, RECIPIENT, PYTHONIC, CALL_PATTERN)
}


def family(name: str) -> FormatFamily | None:
    """The family registered as ``name``; None for ``"none"`` and for unknown names (pure)."""
    return FORMATS.get(name)


def family_for(spec: FormatSpec) -> FormatFamily | None:
    """The family that reads, writes and constrains ``spec``'s whole output: the layout family when the spec
    has a layout (a lead, headed messages: spec v3), else its tool format's family (pure)."""
    if spec.layout.defined:
        from workbench.formats.layout import FAMILY as LAYOUT

        return LAYOUT
    return FORMATS.get(spec.tools.format)


def register(fam: FormatFamily, *, replace: bool = False) -> FormatFamily:
    """Add ``fam`` to :data:`FORMATS` (every stage sees it at once); returns it.

    Raises:
        ValueError: a family of that name is registered already and ``replace`` is False.
    """
    if fam.name in FORMATS and not replace:
        raise ValueError(f"a format named {fam.name!r} is registered already")
    FORMATS[fam.name] = fam
    return fam


def unregister(name: str) -> None:
    """Remove the family ``name`` (no error when it is not registered)."""
    FORMATS.pop(name, None)


__all__ = ["FORMATS", "FormatFamily", "SampleCall", "family", "family_for", "register", "unregister"]
