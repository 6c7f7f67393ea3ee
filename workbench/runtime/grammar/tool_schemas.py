"""Checks on the request's tool schemas before a grammar is built from them (issue 13).

Grammar building turns every ``enum`` value into an alternative of the grammar, and xgrammar's compile time
grows much faster than the alternatives: on this machine 4,000 values compile in 0.2 s, 6,000 in 7 s,
16,000 in 41 s, and 200,000 never finish.  So the values of every ``enum`` (and ``const``) of one request's
tools together are limited to :data:`MAX_ENUM_VALUES`; more is refused with one line naming the tool, not
built for minutes.  A ``$ref`` that does not resolve inside its schema would be compiled as "any value" by
some formats and refused with a C++ message by others: it is refused here, by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.runtime.chat import Tool
from workbench.runtime.grammar.elements import GrammarError
from workbench.runtime.parsing.schema_check import unresolved_refs, walk

#: Enum (and const) values in all the tool schemas of one grammar, together.
MAX_ENUM_VALUES = 4096


def check_tool_schemas(tools: Sequence[Tool]) -> None:
    """Raise :class:`GrammarError` for a schema no grammar should be built from (see the module doc)."""
    counts: dict[str, int] = {}
    for tool in tools:
        schema = tool.parameters
        if not isinstance(schema, dict):
            continue
        bad = unresolved_refs(schema)
        if bad:
            raise GrammarError(
                f"tool {tool.name!r}: the schema's $ref {bad[0]!r} does not resolve "
                "(only references inside the schema are followed)"
            )
        counts[tool.name] = sum(
            (len(n["enum"]) if isinstance(n.get("enum"), list) else 0) + ("const" in n) for n in walk(schema)
        )
    total = sum(counts.values())
    if total > MAX_ENUM_VALUES:
        name = max(counts, key=lambda k: counts[k])
        raise GrammarError(
            f"the tools' schemas have {total:,} enum values (tool {name!r}: {counts[name]:,}); a grammar "
            f"takes at most {MAX_ENUM_VALUES:,} (xgrammar's compile time grows too fast beyond that)"
        )


__all__ = ["MAX_ENUM_VALUES", "check_tool_schemas"]
