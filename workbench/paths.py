"""Where the workbench finds what lives beside its package: the one place that knows ``../shared``.

``../shared`` (beside the repository) holds real templates, conformance vectors and real tokenizers; it is
test and proof data, never part of the package, and ``$WORKBENCH_SHARED`` points elsewhere.  Everything that
reads it (the tiny models' tokenizer, the proofs' tokenizers, the conformance runner's templates) asks here.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The repository the package is in (an editable install; a wheel has no ``../shared`` beside it).
REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``$WORKBENCH_SHARED``, else ``../shared`` beside the repository (read each call: tests set it)."""
    return Path(os.environ.get("WORKBENCH_SHARED", REPO.parent / "shared"))
