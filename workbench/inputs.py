"""Reading untrusted input files: regular files only, a size cap, strict UTF-8, bounded JSON.

Every command reads user-supplied files (messages, tools, specs, sessions, model outputs); read naively, a
FIFO with no writer hangs, ``/dev/zero`` grows until memory runs out, invalid UTF-8 on stdin is silently
accepted, and JSON nested deeper than the recursion limit or holding a 5,000-digit integer raises a
traceback.  These helpers turn each of those into one :class:`InputError` line naming the file.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO

from workbench.runtime.errors import WorkbenchError

#: Largest input file (or stdin) read, in bytes: far above any real spec, session or model output.
MAX_INPUT_BYTES = 64 * 1024 * 1024


class InputError(WorkbenchError, ValueError):
    """An input file cannot be used; the message names it and says why."""


def _read_capped(stream: BinaryIO, name: str, max_bytes: int) -> bytes:
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"{name} is larger than {max_bytes // (1024 * 1024)} MiB, the input size limit")
    return data


def read_input_bytes(ref: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file, or of stdin for ``-``; anything else (FIFO, device, folder) is refused
    before it is opened, so it can neither block nor stream forever."""
    if str(ref) == "-":
        return _read_capped(sys.stdin.buffer, f"{what} on stdin", max_bytes)
    path = Path(ref)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path} is a folder, not a {what} file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"{path} is not a regular file (a FIFO, socket or device): pass a file, or - for stdin"
        )
    if info.st_size > max_bytes:
        raise InputError(
            f"{what} file {path} is larger than {max_bytes // (1024 * 1024)} MiB, the input size limit"
        )
    try:
        with path.open("rb") as handle:
            return _read_capped(handle, f"{what} file {path}", max_bytes)
    except OSError as exc:
        raise InputError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None


def decode_utf8(data: bytes, name: str) -> str:
    """Strict UTF-8 (a BOM is dropped); the error says at which byte the text stops being UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not valid UTF-8 (byte {exc.start} is {data[exc.start]:#04x})") from None


def read_input_text(ref: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """:func:`read_input_bytes` decoded as strict UTF-8."""
    name = f"{what} on stdin" if str(ref) == "-" else f"{what} file {ref}"
    return decode_utf8(read_input_bytes(ref, what, max_bytes=max_bytes), name)


def loads_failure(exc: BaseException) -> str:
    """Words for a ``json.loads`` failure other than a syntax error (deep nesting, a huge integer)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply (past Python's recursion limit)"
    return f"holds a value that cannot be read ({exc})"


def read_json_document(path: str | os.PathLike[str], what: str) -> Any:
    """A whole JSON document from a file: the one reader of spec and session files.

    Raises :class:`InputError` naming the file: not a regular file, too large, not UTF-8, empty, truncated
    or corrupt JSON (with the position; "truncated" when the error is at the very end), or JSON too deep or
    holding a number too long to read.
    """
    p = Path(path)
    raw = read_input_bytes(p, what)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p} is not a {what} file (not UTF-8 text)") from None
    if not text.strip():
        raise InputError(f"{what} file {p} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # A string left open runs to the end of the text: the error points at its start, but the file was cut.
        ends_early = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        state = "truncated" if ends_early else "corrupt"
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise InputError(f"{what} file {p} is {state}: not valid JSON ({where})") from None
    except (RecursionError, ValueError) as exc:
        raise InputError(f"{what} file {p} cannot be read: {loads_failure(exc)}") from None


def loads_bounded(text: str, name: str) -> Any:
    """``json.loads`` whose failures are one line: invalid JSON (where), nesting past the recursion limit,
    integers past Python's 4,300-digit conversion limit."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise InputError(f"{name} is nested too deeply to read (past Python's recursion limit)") from None
    except ValueError as exc:  # int conversion limit
        raise InputError(f"{name} holds a value that cannot be read: {exc}") from None
