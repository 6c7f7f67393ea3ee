"""TAG_WITH_TAGGED: the name and every argument sit in markers (Qwen3-Coder, GLM 4.6, MiniMax M2,
Seed-OSS); values follow the one value encoding of :mod:`workbench.formats.values`."""

from __future__ import annotations

from workbench.formats.base import FormatFamily
from workbench.formats.tag_with_tagged.export import response_fields
from workbench.formats.tag_with_tagged.grammar import TagWithTaggedGrammar
from workbench.formats.tag_with_tagged.parser import TagWithTaggedParser
from workbench.formats.tag_with_tagged.samples import write_calls

FAMILY = FormatFamily(
    name="tag_with_tagged",
    grammar=TagWithTaggedGrammar,
    write_calls=write_calls,
    parser=TagWithTaggedParser,
    response_fields=response_fields,
)
