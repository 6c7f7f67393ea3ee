"""One torch thread policy for the CLI and the TUI.

Small models spend a step in many short kernels; extra intra-op threads then spin against each other and
against anything else on the machine.  Measured on the 2-core development machine with SmolLM2-135M: one
thread 116 ms per forward, torch's default (2 threads) 727 ms under load.  So the default is half the usable
cores (at least 1, at most 4): one thread on a 2-core machine, leaving the other core to the TUI's event loop
or a competing process.  ``WORKBENCH_TORCH_THREADS`` overrides it (a positive integer).
"""

from __future__ import annotations

import contextlib
import os

from workbench.runtime.errors import WorkbenchError

ENV_VAR = "WORKBENCH_TORCH_THREADS"
MAX_DEFAULT_THREADS = 4


class ThreadPolicyError(WorkbenchError, ValueError):
    """``WORKBENCH_TORCH_THREADS`` holds something that is not a positive integer."""


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def torch_threads(environ: dict[str, str] | None = None) -> int:
    """The intra-op thread count the policy picks (pure: reads the environment, changes nothing).

    Raises:
        ThreadPolicyError: ``WORKBENCH_TORCH_THREADS`` is set but not a positive integer.
    """
    env = os.environ if environ is None else environ
    raw = env.get(ENV_VAR, "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ThreadPolicyError(f"{ENV_VAR} must be a positive integer, not {raw!r}")
        return int(raw)
    return max(1, min(MAX_DEFAULT_THREADS, usable_cores() // 2))


def apply_thread_policy() -> int:
    """Set torch's intra-op threads to :func:`torch_threads` (and one inter-op thread); returns the count.

    Call it before the first forward pass: torch fixes its inter-op pool on first use, after which only the
    intra-op count can still change (that failure is ignored).
    """
    import torch

    n = torch_threads()
    torch.set_num_threads(n)
    with contextlib.suppress(RuntimeError):  # the inter-op pool was already started
        torch.set_num_interop_threads(1)
    return n
