"""Export a validated FormatSpec to the formats real consumers load, each proven by its consumer.

Targets, one module each:

* ``spec`` (:mod:`.spec_target`) — the canonical FormatSpec JSON (schema:
  ``workbench/data/spec.schema.json``) with provenance (template sha256, workbench version) and the
  round-trip validation report.  Exporting it again from the exported file gives the same bytes.
* ``response-template`` (:mod:`.response_template`) — the ``response_template`` dict of Hugging Face
  transformers (``tokenizer.parse_response``; vLLM reads it with ``--tool-call-parser hf
  --reasoning-parser hf``).  It is proven by running transformers' own ``parse_response`` on every
  round-trip case and comparing with our parser.
* ``structural-tag`` (:mod:`.structural_tag`) — an xgrammar StructuralTag for a given tool list, proven by
  compiling it and feeding every round-trip tool-call output to a ``GrammarMatcher`` token by token.
* ``vllm-plugin`` / ``sglang-plugin`` (:mod:`.vllm_plugin`, :mod:`.sglang_plugin`) — a folder: the engine's
  tool + reasoning parser plug-in carrying the workbench parser (vendored by :mod:`workbench.engines.vendor`),
  proven by loading it into the real engine (:mod:`workbench.engines.plugin_proof`).
* ``tests`` (:mod:`.tests_file`) — a pytest file holding the round-trip cases (and recorded sessions) that a
  user can drop into their own repository; it needs only this package (the spec is embedded).

Every builder is a pure function of the spec (plus tools); every ``prove_*`` function runs the consumer and
returns a :class:`Proof` listing each case it checked.  :mod:`.pipeline` ties them together; nothing writes
files except :func:`write_export`, which writes atomically and never overwrites with a half-finished result.

This package re-exports the public names so callers keep importing from ``workbench.export``.
"""

from __future__ import annotations

from workbench.export.pipeline import (
    TARGETS,
    ExportResult,
    check_destination,
    export,
    resolve_inputs,
    write_export,
)
from workbench.export.response_template import (
    build_response_template,
    normalize_hf_message,
    prove_response_template,
)
from workbench.export.spec_target import (
    SCHEMA_PATH,
    check_spec_schema,
    load_spec_file,
    load_spec_schema,
    render_spec_export,
    spec_with_provenance,
)
from workbench.export.structural_tag import (
    GrammarTokenizer,
    build_structural_tag,
    check_accepted,
    load_grammar_tokenizer,
    prove_structural_tag,
    shared_qwen3,
)
from workbench.export.tests_file import TESTS_TEMPLATE, build_tests_file
from workbench.proofs import CaseProof, ExportError, Proof, Unsupported

__all__ = [
    "SCHEMA_PATH",
    "TARGETS",
    "TESTS_TEMPLATE",
    "CaseProof",
    "ExportError",
    "ExportResult",
    "GrammarTokenizer",
    "Proof",
    "Unsupported",
    "build_response_template",
    "build_structural_tag",
    "build_tests_file",
    "check_accepted",
    "check_destination",
    "check_spec_schema",
    "export",
    "load_grammar_tokenizer",
    "load_spec_file",
    "load_spec_schema",
    "normalize_hf_message",
    "prove_response_template",
    "prove_structural_tag",
    "render_spec_export",
    "resolve_inputs",
    "shared_qwen3",
    "spec_with_provenance",
    "write_export",
]
