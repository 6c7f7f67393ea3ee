"""The engines venv (``make engines``): vLLM and SGLang in an interpreter of their own.

vLLM pins a torch and a transformers the workbench cannot share, so the engines live in ``.venv-engines``
beside the repository (or wherever ``$WORKBENCH_ENGINES_PYTHON`` points); the harness
(:mod:`workbench.engines.harness`) runs there.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def engines_python() -> Path | None:
    """The engines venv's interpreter: ``$WORKBENCH_ENGINES_PYTHON``, else ``.venv-engines/bin/python`` once
    ``make engines`` has finished (its ``.installed`` stamp): a venv still being built, or one whose install
    failed half-way, is not used."""
    env = os.environ.get("WORKBENCH_ENGINES_PYTHON")
    if env:
        candidate = Path(env)
    else:
        venv = REPO / ".venv-engines"
        if not (venv / ".installed").is_file():
            return None
        candidate = venv / "bin" / "python"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def engines_missing_reason() -> str:
    """Why the engines cannot run here ("" when they can): what tests print when they skip."""
    if engines_python() is not None:
        return ""
    env = os.environ.get("WORKBENCH_ENGINES_PYTHON")
    where = (
        f"WORKBENCH_ENGINES_PYTHON={env} is not an executable"
        if env
        else ".venv-engines is absent or its install did not finish"
    )
    return f"the engines venv is not installed ({where}); run `make engines`"
