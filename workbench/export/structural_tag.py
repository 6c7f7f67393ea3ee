"""The ``structural-tag`` target: an xgrammar StructuralTag for a given tool list.

It is proven by compiling it and feeding every round-trip tool-call output to a ``GrammarMatcher`` token by
token, with a real tokenizer (or a small byte-level BPE built here when none is at hand).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.export.grammar_proof import Feed, cached_tokenizer, check_tokens, prove_cases
from workbench.generation.tiny import qwen3_tokenizer_path
from workbench.paths import shared_dir
from workbench.proofs import ExportError, Proof, Unsupported, first_line
from workbench.runtime.chat import Tool
from workbench.runtime.grammar.assembler import assemble
from workbench.runtime.grammar.elements import GrammarError
from workbench.runtime.spec import FormatSpec
from workbench.validate import ROUND_TRIP_TOOLS, ValidationReport


def build_structural_tag(
    spec: FormatSpec, tools: Sequence[Tool], tool_choice: Any = "auto"
) -> dict[str, Any]:
    """An xgrammar StructuralTag (JSON form) for the whole assistant output with ``tools`` (pure).

    Built by the runtime's one assembler (:func:`workbench.runtime.grammar.assembler.assemble`), which the
    serving plug-ins call per request too, so the exported tag and a plug-in's tag for the same tools and
    choice are the same document: reasoning, when the format has it, is free text up to its end marker (no
    constraint while the model thinks); under ``auto`` text is free until a tool-call trigger, and from the
    trigger on only well-formed calls of the given tools are possible.

    Raises:
        ExportError: no tools were given.
        Unsupported: the spec has no tool calls, or its format has no grammar (named in the message).
    """
    if not tools:
        raise ExportError("the structural tag needs at least one tool (--tools)")
    if spec.tools.format == "none":
        raise Unsupported("the spec has no tool calls")
    try:
        return assemble(spec, tools, tool_choice)
    except GrammarError as exc:
        raise Unsupported(f"the structural tag cannot express this spec: {exc}") from None


@dataclass
class GrammarTokenizer:
    """A tokenizer and its xgrammar view, loaded once (building the xgrammar view of a 150k vocabulary
    takes seconds)."""

    name: str
    tokenizer: Any
    info: Any
    compiler: Any

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))


_TOKENIZERS: dict[str, GrammarTokenizer] = {}


def shared_qwen3() -> Path:
    """Where the real Qwen3 tokenizer is kept (``../shared``, or ``$WORKBENCH_SHARED``:
    see generation/tiny)."""
    return shared_dir() / "tokenizers" / "qwen3"


def load_grammar_tokenizer(path: str | Path | None = None, *, use_shared: bool = True) -> GrammarTokenizer:
    """The tokenizer structural tags are checked with: ``path`` (a folder or ``tokenizer.json``), else the
    real Qwen3 tokenizer from ``../shared`` when present (and ``use_shared``), else the project's own
    byte-level BPE (:func:`workbench.generation.tiny.build_fallback_tokenizer`; no download).
    Cached: building xgrammar's view of a 150k vocabulary takes seconds.
    """
    import xgrammar as xgr

    def build(tokenizer: Any, name: str, vocab_size: int) -> GrammarTokenizer:
        stop = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=[stop])
        return GrammarTokenizer(name, tokenizer, info, xgr.GrammarCompiler(info))

    if path is None and use_shared:
        path = qwen3_tokenizer_path()
    return cached_tokenizer(_TOKENIZERS, path, build)


def check_accepted(compiled: Any, tok: GrammarTokenizer, text: str, end_markers: Sequence[str]) -> str:
    """Feed ``text`` token by token to a fresh matcher; "" when every token is accepted and the grammar can
    end there (or right after one of ``end_markers``, which the model emits to stop), else why not."""
    import xgrammar as xgr

    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)

    def ends_with(marker: str) -> bool:
        trial = matcher.fork()
        return bool(trial.accept_string(marker) and trial.is_completed())

    feed = Feed(matcher.accept_token, matcher.is_completed, ends_with)
    stops = set(tok.info.stop_token_ids)
    return check_tokens(feed, tok.encode(text), tok.tokenizer.decode, end_markers, stops)


def prove_structural_tag(
    spec: FormatSpec,
    report: ValidationReport,
    tok: GrammarTokenizer,
    tools: Sequence[Tool] = ROUND_TRIP_TOOLS,
) -> Proof:
    """Compile the structural tag for the round-trip tools and feed it every applicable round-trip output."""
    compiled = compile_or_fail(build_structural_tag(spec, tools), tok)
    ends = [m for m in spec.end_markers if m]
    out = prove_cases(report, lambda output: check_accepted(compiled, tok, output, ends))
    return Proof("structural-tag", out, notes=(f"tokenizer: {tok.name}",))


def compile_or_fail(tag: dict[str, Any], tok: GrammarTokenizer) -> Any:
    """The compiled grammar of ``tag``; an :class:`ExportError` naming xgrammar's complaint when it cannot
    compile (xgrammar raises its own types, and their messages run to many lines)."""
    try:
        return tok.compiler.compile_structural_tag(json.dumps(tag, ensure_ascii=False))
    except Exception as exc:
        raise ExportError(f"xgrammar cannot compile the structural tag: {first_line(exc)}") from None
