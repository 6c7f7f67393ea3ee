"""One module per tool-call format; :data:`FORMATS` maps ``ToolsSpec.format`` to its builder."""

from __future__ import annotations

from workbench.grammar.formats.base import ToolFormat
from workbench.grammar.formats.harmony import Harmony
from workbench.grammar.formats.json_native import JsonNative
from workbench.grammar.formats.pythonic import Pythonic
from workbench.grammar.formats.recipient import Recipient
from workbench.grammar.formats.tag_with_json import TagWithJson
from workbench.grammar.formats.tag_with_tagged import TagWithTagged

FORMATS: dict[str, type[ToolFormat]] = {
    cls.name: cls for cls in (JsonNative, TagWithJson, TagWithTagged, Harmony, Pythonic, Recipient)
}

__all__ = ["FORMATS", "ToolFormat"]
