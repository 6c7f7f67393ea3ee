"""Reading untrusted input files: regular files only, a size cap, strict UTF-8, bounded JSON.

Every command reads user-supplied files (messages, tools, specs, sessions, model outputs); read naively, a
FIFO with no writer hangs, ``/dev/zero`` grows until memory runs out, invalid UTF-8 on stdin is silently
accepted, and JSON nested deeper than the recursion limit or holding a 5,000-digit integer raises a
traceback.  These helpers turn each of those into one :class:`InputError` line naming the file.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from workbench.runtime.errors import WorkbenchError

T = TypeVar("T")

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


# A lone surrogate (U+D800-U+DFFF) is not text: it cannot be written as UTF-8, so no file, terminal or
# tokenizer takes it.  Strictly decoded UTF-8 never holds one; JSON can (``"\\ud800"``), and so can a
# command-line argument or a file name (bytes that are not UTF-8 arrive as U+DC80-U+DCFF).
_SURROGATE = re.compile("[\ud800-\udfff]")
# The escape that writes one in JSON text: when the raw text has none, the decoded document has none either.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def unencodable_at(text: str) -> int | None:
    """Where ``text`` holds its first lone surrogate, or None when it is plain text."""
    found = _SURROGATE.search(text)
    return found.start() if found else None


def replace_unencodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD: for names that are only shown (a file name
    holding bytes that are not UTF-8), where refusing would stop work over a label."""
    return _SURROGATE.sub("\ufffd", text)


def find_unencodable(value: Any, where: str = "") -> str | None:
    """The path (``messages[0].content``) of the first string in a decoded JSON value holding a lone
    surrogate, or None.  Iterative: the value may be nested as deep as the JSON reader allowed."""
    todo: list[tuple[Any, str]] = [(value, where)]
    while todo:
        item, path = todo.pop()
        if isinstance(item, str):
            if unencodable_at(item) is not None:
                return path or "(the document)"
        elif isinstance(item, dict):
            for key, sub in reversed(list(item.items())):
                if unencodable_at(key) is not None:
                    return f"{path}.{key!a}" if path else f"{key!a}"
                todo.append((sub, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list):
            todo.extend((sub, f"{path}[{i}]") for i, sub in reversed(list(enumerate(item))))
    return None


def check_encodable(value: Any, name: str, raw: str | None = None) -> Any:
    """``value`` unchanged, or :class:`InputError` when a string in it holds a lone surrogate: the one policy
    for text that cannot be encoded is to refuse it where it comes in, with one line naming where (it would
    otherwise fail later, when a prompt is tokenized or a file written).  ``raw``: the JSON text ``value``
    was decoded from, to skip the walk when the text has no surrogate escape at all."""
    if raw is not None and not _SURROGATE_ESCAPE.search(raw):
        return value
    path = find_unencodable(value)
    if path is not None:
        raise InputError(
            f"{name}: {path} holds a lone surrogate (such as \\ud800), which is not text that can be encoded"
        )
    return value


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
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        # A string left open runs to the end of the text: the error points at its start, but the file was cut.
        ends_early = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        state = "truncated" if ends_early else "corrupt"
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise InputError(f"{what} file {p} is {state}: not valid JSON ({where})") from None
    except (RecursionError, ValueError) as exc:
        raise InputError(f"{what} file {p} cannot be read: {loads_failure(exc)}") from None
    return check_encodable(value, f"{what} file {p}", text)


def load_json_file_as(
    path: str | os.PathLike[str], what: str, build: Callable[[Any], T], error: type[WorkbenchError]
) -> T:
    """The document in ``path`` built by ``build``: every failure, reading the file or building from it, one
    ``error`` line naming the file (spec and session files are read this way).  Never writes."""
    p = Path(path)
    try:
        data = read_json_document(p, what)
    except InputError as exc:
        raise error(str(exc)) from None
    try:
        return build(data)
    except error as exc:
        raise error(f"{p}: {exc}") from None


def loads_bounded(text: str, name: str) -> Any:
    """``json.loads`` whose failures are one line: invalid JSON (where), nesting past the recursion limit,
    integers past Python's 4,300-digit conversion limit."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise InputError(f"{name} is nested too deeply to read (past Python's recursion limit)") from None
    except ValueError as exc:  # int conversion limit
        raise InputError(f"{name} holds a value that cannot be read: {exc}") from None
    return check_encodable(value, name, text)
