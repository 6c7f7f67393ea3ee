"""Access to core stages that may not exist yet, or may fail to import.

The core packages are built alongside the TUI; a missing one must give a screen that says so, never a crash.
Every screen asks for a stage through :func:`core`, which turns the import failure into :class:`Unavailable`
carrying one line a person can read.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class Unavailable(RuntimeError):
    """A core stage cannot be used (not built yet, or its import failed); ``str()`` says which and why."""


def core(module: str, *names: str) -> ModuleType:
    """Import ``workbench.<module>`` and check that it exports ``names``.

    Raises:
        Unavailable: the module is missing, fails to import, or lacks one of ``names``.
    """
    full = f"workbench.{module}"
    try:
        mod = importlib.import_module(full)
    except ImportError as exc:
        raise Unavailable(f"{full} is not available yet ({exc})") from None
    except Exception as exc:  # a half-written module under construction must not take the UI down
        raise Unavailable(f"{full} failed to import: {type(exc).__name__}: {exc}") from None
    missing = [n for n in names if not hasattr(mod, n)]
    if missing:
        raise Unavailable(f"{full} is not available yet (no {', '.join(missing)})")
    return mod


def available(module: str, *names: str) -> bool:
    """True when :func:`core` would succeed (does not raise)."""
    try:
        core(module, *names)
    except Unavailable:
        return False
    return True


def one_line(exc: BaseException) -> str:
    """An exception as the one line a notification shows (type name only when the message is empty)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
