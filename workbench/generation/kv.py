"""Passing the KV cache to a transformers forward under the name the installed version expects.

transformers 5.x renamed the forward's ``past_key_values`` argument (and the output field) to ``cache``; the
old name still works but emits a ``FutureWarning`` on every forward and a logger warning on every read of
``out.past_key_values``, which landed on the TUI's stderr at each step.  Older versions (the project allows
``transformers>=4.46``) only know ``past_key_values``.  So the name is read off the model's own forward
signature once, and the same name is used for the argument and for the output field.
"""

from __future__ import annotations

import inspect
from typing import Any

NEW_NAME = "cache"
OLD_NAME = "past_key_values"


def cache_name(model: Any) -> str:
    """``"cache"`` when ``model.forward`` takes it (transformers >= 5.2x), else ``"past_key_values"``."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # a C-implemented or wrapped forward: assume the long-standing name
        return OLD_NAME
    return NEW_NAME if NEW_NAME in params else OLD_NAME


def forward_with_cache(model: Any, name: str, input_ids: Any, cache: Any, **kwargs: Any) -> tuple[Any, Any]:
    """One forward with the KV cache passed as ``name``; returns (logits, the updated cache)."""
    out = model(input_ids=input_ids, use_cache=True, **{name: cache}, **kwargs)
    return out.logits, getattr(out, name)
