"""TAG_WITH_JSON: the name sits in markers, the arguments are one JSON object (``<function=NAME>{...}``,
DeepSeek's ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}```, Kimi-K2)."""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.tag_with_json.grammar import TagWithJsonGrammar
from workbench.runtime.formats.tag_with_json.parser import TagWithJsonParser
from workbench.runtime.formats.tag_with_json.samples import write_calls

FAMILY = FormatFamily(
    name="tag_with_json",
    grammar=TagWithJsonGrammar,
    write_calls=write_calls,
    parser=TagWithJsonParser,
)
