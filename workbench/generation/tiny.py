"""Tiny random models built from a config: tests and demos run with no weights to download.

A 2-layer Qwen3-style model sized to a real tokenizer's vocabulary exercises everything the generator does
with a real model (KV cache, 151k-entry masks, added-token markers) in milliseconds per step.  Its output is
noise, which is the point for grammar tests: whatever a random model picks, the grammar must keep it valid.

The tokenizer is the real Qwen3 one from ``../shared/tokenizers/qwen3`` when that folder is there (set
``WORKBENCH_SHARED`` to point elsewhere); otherwise a small byte-level BPE tokenizer is trained on the spot
with the ``tokenizers`` library, with the chat markers as added tokens, so nothing is ever downloaded.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from workbench.generation.loaded import LoadedModel
from workbench.paths import shared_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
ADDED_TOKENS = ("<think>", "</think>", "<tool_call>", "</tool_call>")

# Enough text for the BPE trainer to learn the pieces chat output is made of (JSON, markers, words).
_CORPUS = """\
The weather in Paris is sunny today. What is the capital of France? The capital of France is Paris.
Let me think about this step by step. I need to call a tool to answer the question.
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "days": 3}}
{"location": "Tokyo", "query": "hotels", "limit": 5, "exact": true, "tags": ["a", "b"], "note": null}
<function=get_weather>
<parameter=city>
Berlin
</parameter>
</function>
[TOOL_CALLS][{"name": "search", "arguments": {"q": "news"}, "id": "a1b2c3d4e"}]
<|channel|>analysis<|message|>Thinking.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather
 <|constrain|>json<|message|>{"city": "Rome"}<|call|>
0 1 2 3 4 5 6 7 8 9 10 42 100 3.14 -7 true false null , : ; . ! ? ' " ( ) [ ] { } < > / \\ = + - * _ # @ & %
abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ
"""


def qwen3_tokenizer_path() -> Path | None:
    p = shared_dir() / "tokenizers" / "qwen3"
    return p if (p / "tokenizer.json").is_file() else None


def build_fallback_tokenizer(vocab_size: int = 1024) -> Any:
    """A byte-level BPE tokenizer trained on a few lines of chat-like text, chat markers as added tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS.splitlines(), trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None
    )
    wrapped.add_tokens(list(ADDED_TOKENS))
    return wrapped


@lru_cache(maxsize=2)
def load_tiny_tokenizer(prefer_shared: bool = True) -> Any:
    """The Qwen3 tokenizer from ../shared when present, else the project's own small one."""
    path = qwen3_tokenizer_path() if prefer_shared else None
    if path is None:
        return build_fallback_tokenizer()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path))


def make_tiny_model(
    tokenizer: Any,
    *,
    vocab_size: int | None = None,
    layers: int = 2,
    hidden: int = 32,
    seed: int = 0,
) -> Any:
    """A randomly initialised Qwen3-style causal LM whose vocabulary fits ``tokenizer``."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    size = vocab_size or len(tokenizer)
    config = Qwen3Config(
        vocab_size=size,
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=hidden // 4,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    model.eval()
    return model


def load_tiny(*, seed: int = 0, prefer_shared: bool = True, hidden: int = 32) -> LoadedModel:
    """The tiny model with its tokenizer.  At a 151k vocabulary the output layer dominates a step, so the
    hidden size stays small (32): a step then costs a few milliseconds."""
    tokenizer = load_tiny_tokenizer(prefer_shared)
    model = make_tiny_model(tokenizer, seed=seed, hidden=hidden)
    which = "Qwen3 tokenizer" if prefer_shared and qwen3_tokenizer_path() else "built-in BPE tokenizer"
    return LoadedModel(
        model=model, tokenizer=tokenizer, name=f"tiny random Qwen3-style model ({which})", source="tiny"
    )
