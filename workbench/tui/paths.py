"""Where the TUI writes files of its own: sessions and recovery copies, in the user's data directory.

Never into the working folder or the repository (its tracked ``sessions/`` holds example sessions): a person
running the TUI from a checkout must not find their sessions mixed into it.  ``--session-dir`` (sessions)
and ``WORKBENCH_DATA_DIR`` (everything) override the platform's user data directory (platformdirs).
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "template-workbench"


def data_root() -> Path:
    """The user data directory (``WORKBENCH_DATA_DIR`` overrides it); not created here."""
    override = os.environ.get("WORKBENCH_DATA_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME))


def sessions_dir(override: str | Path | None = None) -> Path:
    """Where ``ctrl+s`` saves sessions: ``override`` (``--session-dir``) or ``<data>/sessions``."""
    return Path(override).expanduser() if override else data_root() / "sessions"


def recovery_dir() -> Path:
    """Where unsaved edits are copied when something goes wrong (``<data>/recovery``)."""
    return data_root() / "recovery"
