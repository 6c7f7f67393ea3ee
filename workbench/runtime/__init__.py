"""The runtime: what runs inside a serving engine, and what every other part of the workbench builds on.

- ``spec`` (:class:`~workbench.runtime.spec.FormatSpec` and its parts), ``chat`` (messages, tools, calls),
  ``events`` (what streaming yields, diagnostics), ``errors`` (the one exception root);
- ``values`` (the value encodings: how a format writes a JSON value);
- ``parsing/`` (the streaming parser: one machine, fed once or chunk by chunk, and the OpenAI deltas);
- ``grammar/`` (grammar elements, the tool-grammar contract, the output-grammar builder);
- ``formats/`` (the format registry, a name -> module table resolved lazily, and each family's parser,
  grammar, sample writer and marker tables).

It is the bottom layer: it imports only itself, the standard library and the packages in
:data:`DEPENDENCIES` (see ``docs/ARCHITECTURE.md`` and ``tests/test_layers.py``).  A vLLM or SGLang plug-in
vendors this folder whole under a private package name (:mod:`workbench.engines.vendor`), so nothing
here may name the ``workbench`` package outside ``workbench.runtime``.

Third-party packages the runtime imports (import name -> the distribution that provides it):

- ``regex`` (``regex``): the parsers' possessive and recursive patterns;
- ``jsonschema``, ``referencing``, ``jsonschema_specifications`` (``jsonschema``): checking a call's
  arguments against the tool's schema;
- ``xgrammar`` (``xgrammar``): only to check a finished structural tag and show its EBNF (imported inside
  the functions that do so; a parser never needs it).
"""

from __future__ import annotations

#: The third-party modules the runtime may import, by import name -> the distribution that provides it.  The
#: layers test holds the runtime to this list and the plug-in export declares the distributions.
DEPENDENCIES: dict[str, str] = {
    "regex": "regex",
    "jsonschema": "jsonschema",
    "referencing": "jsonschema",
    "jsonschema_specifications": "jsonschema",
    "xgrammar": "xgrammar",
}
