"""The limits every template compile and render runs under, and the validators for user-given values.

One place for the numbers so the docs (docs/hostile.md), the CLI and the tests agree.  The memory cap and
the kill grace can be tuned with environment variables for machines (or tests) that need other values.
"""

from __future__ import annotations

import math
import os
from typing import Any

from workbench.template.errors import TemplateTooLarge, TimeLimitError

DEFAULT_TIME_LIMIT = 2.0
# Longest time limit accepted: a render that needs more than an hour is a bomb, and faulthandler's
# watchdog (the worker's own wall clock) refuses absurd timeouts.
MAX_TIME_LIMIT = 3600.0
# Compiling a template runs under this limit when the caller gives none (real templates take < 0.2 s).
DEFAULT_COMPILE_LIMIT = DEFAULT_TIME_LIMIT
# Largest template source, in UTF-8 bytes: the biggest real chat templates are ~30 KB, and compiling
# Jinja costs ~50 us per byte, so 1 MiB is refused before it can cost seconds of compile time.
MAX_SOURCE_BYTES = 1 << 20
# Most characters one render may return (a whole command's renders together: ``budget.MAX_TOTAL_OUTPUT``).
# Real prompts are far smaller (a 1M-token context is ~4M characters); the worker refuses to send more.
MAX_RENDER_OUTPUT = 64 << 20
# Address-space cap (RLIMIT_AS) of the render worker process, in bytes.  The worker idles at ~60 MB.
DEFAULT_MEMORY_LIMIT = int(os.environ.get("WORKBENCH_RENDER_MEMORY_MB", "1024")) << 20
# How long after its deadline the parent waits for the worker before killing it.
KILL_GRACE = float(os.environ.get("WORKBENCH_RENDER_KILL_GRACE", "0.5"))

# In-process guards (the first line; the worker's limits are the guarantee).
# Largest str/list a single operation (``*``, ``+``, ``~``, a filter, a str method) may build.
MAX_STRING_ITEMS = 10_000_000
MAX_REPEAT_ITEMS = MAX_STRING_ITEMS
# Largest integer (in bits) ``*`` or ``**`` may build.
MAX_INT_BITS = 1 << 20
# Most items a collection filter (sort, map, groupby, ...) may take: jinja's own MAX_RANGE.
MAX_FILTER_ITEMS = 100_000
# Longest text ``wordwrap`` may wrap (textwrap is quadratic on long words).
MAX_WRAP_CHARS = 100_000
# Most words ``lipsum`` may generate (n paragraphs x max words).
MAX_LIPSUM_WORDS = 100_000
# Widest field a ``%`` or ``str.format`` spec may ask for.
MAX_FORMAT_WIDTH = 100_000


def check_time_limit(value: Any) -> float:
    """The time limit as seconds, or :class:`TimeLimitError` for anything but a finite positive number.

    ``inf`` would let a bomb run forever and ``nan`` compares false with every clock reading (it turned
    the deadline off), so both are refused here, the one place every caller (CLI, TUI, API) goes through.
    """
    if isinstance(value, bool):
        raise TimeLimitError(f"time limit must be a number of seconds, not {value!r}", kind="usage")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise TimeLimitError(f"time limit must be a number of seconds, not {value!r}", kind="usage") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise TimeLimitError(
            f"time limit must be a finite number of seconds greater than 0, not {value!r}", kind="usage"
        )
    if seconds > MAX_TIME_LIMIT:
        raise TimeLimitError(
            f"time limit must be at most {MAX_TIME_LIMIT:g} seconds, not {value!r}", kind="usage"
        )
    return seconds


def check_source_size(source: str) -> None:
    """Refuse a template source larger than :data:`MAX_SOURCE_BYTES` before anything compiles it."""
    # len() is O(1); the UTF-8 size is at most 4x the length, so the encode only runs near the limit.
    if len(source) * 4 <= MAX_SOURCE_BYTES:
        return
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise TemplateTooLarge(
            f"template too large: {size:,} bytes (limit {MAX_SOURCE_BYTES:,} bytes; real chat templates "
            "are under 100 KB)",
            kind="limit",
        )
