"""TAG_WITH_TAGGED: the name and every argument sit in markers (Qwen3-Coder, GLM 4.6, MiniMax M2,
Seed-OSS); values follow the one value encoding of :mod:`workbench.runtime.values`."""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.tag_with_tagged.grammar import TagWithTaggedGrammar
from workbench.runtime.formats.tag_with_tagged.parser import TagWithTaggedParser
from workbench.runtime.formats.tag_with_tagged.samples import write_calls

FAMILY = FormatFamily(
    name="tag_with_tagged",
    grammar=TagWithTaggedGrammar,
    write_calls=write_calls,
    parser=TagWithTaggedParser,
)
