"""Which real tokenizer a proof streams a template's output with (token deltas, as a server detokenizes).

The folders are ``../shared/tokenizers/<name>`` (:func:`workbench.paths.shared_dir`); the model family a
template's name says picks one, and a format whose markers are one tokenizer's special tokens says so itself
(:attr:`~workbench.runtime.formats.base.FormatFamily.tokenizer_hint`).
"""

from __future__ import annotations

from pathlib import Path

from workbench.paths import shared_dir
from workbench.proofs import ExportError
from workbench.runtime.formats import families, family
from workbench.runtime.spec import FormatSpec

# The model family a template's name says -> the tokenizer folder of that family.
_TOKENIZER_HINTS = (
    ("gpt-oss", "gpt-oss"),
    ("deepseek", "deepseek-v3"),
    ("llama", "llama-3.1"),
    ("firefunction", "llama-3.1"),
)


def tokenizer_for(
    template_name: str, override: str | Path | None = None, *, spec: FormatSpec | None = None
) -> Path:
    """The tokenizer folder the harness splits outputs with: ``override``, else the one the spec's format
    names, else the one the template's name (or a format named in it) points to, else Qwen3's."""
    if override is not None:
        path = Path(override)
        return path.parent if path.is_file() else path
    lowered = template_name.lower()
    fam = family(spec.tools.format) if spec is not None else None
    hints = [fam.tokenizer_hint] if fam is not None and fam.tokenizer_hint else []
    hints += [f.tokenizer_hint for f in families().values() if f.tokenizer_hint and f.name in lowered]
    hints += [tok for hint, tok in _TOKENIZER_HINTS if hint in lowered]
    folder = shared_dir() / "tokenizers" / (hints[0] if hints else "qwen3")
    if not folder.is_dir():
        raise ExportError(f"no tokenizer to stream with: {folder} is absent (pass --tokenizer DIR)")
    return folder
