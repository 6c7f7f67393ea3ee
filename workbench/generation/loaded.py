"""``LoadedModel``: a model, its tokenizer, and the xgrammar objects that belong to that tokenizer.

The xgrammar tokenizer info (the decoded vocabulary) and the grammar compiler are built once per model and
shared by every generation: building them for a 151k vocabulary takes about a second, compiling a grammar
with the compiler's cache takes milliseconds the second time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The compiler's worker threads; the machines this runs on have two cores.
COMPILER_THREADS = 2


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    name: str
    source: str = ""  # "tiny", "cache", "folder", "gguf", "hub"
    _xgr: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def vocab_size(self) -> int:
        """The model's logit count (may exceed the tokenizer's vocabulary: padded embeddings)."""
        out = self.model.get_output_embeddings()
        if out is not None and hasattr(out, "weight"):
            return int(out.weight.shape[0])
        return int(self.model.config.vocab_size)

    def eos_token_ids(self) -> list[int]:
        """Every id the model or tokenizer declares as an end of sequence."""
        ids: list[int] = []
        cfg = getattr(self.model, "generation_config", None)
        for value in (getattr(cfg, "eos_token_id", None), getattr(self.tokenizer, "eos_token_id", None)):
            if isinstance(value, int):
                ids.append(value)
            elif isinstance(value, (list, tuple)):
                ids.extend(int(v) for v in value)
        return list(dict.fromkeys(ids))

    def single_token_id(self, text: str) -> int | None:
        """The id of ``text`` when it is exactly one token (e.g. an added marker), else None."""
        if not text:
            return None
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        return int(ids[0]) if len(ids) == 1 else None

    def tokenizer_info(self) -> Any:
        import xgrammar as xgr

        if "info" not in self._xgr:
            stops = self.eos_token_ids() or None
            self._xgr["info"] = xgr.TokenizerInfo.from_huggingface(
                self.tokenizer, vocab_size=self.vocab_size, stop_token_ids=stops
            )
        return self._xgr["info"]

    def token_bytes(self) -> list[bytes]:
        """The exact bytes each token id adds to the text (xgrammar's decoded vocabulary)."""
        if "bytes" not in self._xgr:
            vocab = list(self.tokenizer_info().decoded_vocab)
            vocab.extend([b""] * (self.vocab_size - len(vocab)))
            self._xgr["bytes"] = vocab
        return self._xgr["bytes"]

    def max_token_bytes(self) -> int:
        """The most bytes one token adds to the text: a prompt of more characters than the context length
        times this has more tokens than the context holds, known before tokenizing it."""
        if "longest" not in self._xgr:
            self._xgr["longest"] = max((len(b) for b in self.token_bytes()), default=1) or 1
        return int(self._xgr["longest"])

    def compiler(self) -> Any:
        import xgrammar as xgr

        if "compiler" not in self._xgr:
            self._xgr["compiler"] = xgr.GrammarCompiler(self.tokenizer_info(), max_threads=COMPILER_THREADS)
        return self._xgr["compiler"]

    def compile_structural_tag(self, text: str) -> Any:
        return self.compiler().compile_structural_tag(text)
