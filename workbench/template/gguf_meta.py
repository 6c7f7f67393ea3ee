"""GGUF metadata, read with a size check on every declared length.

``gguf.GGUFReader`` trusts the lengths a file declares: a 73-byte file that declares an array of 2^40
items makes it allocate until the machine runs out of memory.  This reader walks the metadata (never the
tensors) through a memory map and refuses any string or array that claims more bytes than the file has
left, so a hostile header fails at once.  Only the values asked for are decoded; the rest (merges, scores,
token types: hundreds of thousands of items in a real model) are skipped by arithmetic where possible.

Format (little- or big-endian, versions 2 and 3): ``GGUF``, version u32, tensor count u64, key-value count
u64, then per key: string key (u64 length + UTF-8), value type u32, value.  Arrays are item type u32 +
count u64 + items.  See https://github.com/ggml-org/ggml/blob/master/docs/gguf.md.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

# value type -> struct code of fixed-size scalars
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
# Deepest array nesting accepted (real files use one level).
_MAX_DEPTH = 4


class GGUFFormatError(ValueError):
    """The file is not GGUF, or declares more data than it holds."""


class _Cursor:
    def __init__(self, data: mmap.mmap | bytes, order: str, max_string: int) -> None:
        self.data = data
        self.max_string = max_string
        self.pos = 0
        self.order = order

    def left(self) -> int:
        return len(self.data) - self.pos

    def need(self, size: int, what: str) -> None:
        if size < 0 or size > self.left():
            raise GGUFFormatError(
                f"{what} declares {size:,} bytes at offset {self.pos:,} but only {self.left():,} are left"
            )

    def scalar(self, code: str) -> Any:
        size = struct.calcsize(code)
        self.need(size, "a value")
        (value,) = struct.unpack_from(self.order + code, self.data, self.pos)
        self.pos += size
        return value

    def string(self, decode: bool) -> str | None:
        size = self.scalar("Q")
        self.need(size, "a string")
        start, self.pos = self.pos, self.pos + size
        if not decode:
            return None
        if size > self.max_string:
            raise GGUFFormatError(f"a {size:,}-byte string is longer than the {self.max_string:,}-byte limit")
        try:
            return bytes(self.data[start : self.pos]).decode("utf-8")
        except UnicodeDecodeError:
            return None


def _value(cur: _Cursor, vtype: int, decode: bool, depth: int = 0) -> Any:
    if vtype in _SCALARS:
        return cur.scalar(_SCALARS[vtype])
    if vtype == _STRING:
        return cur.string(decode)
    if vtype != _ARRAY:
        raise GGUFFormatError(f"unknown value type {vtype} at offset {cur.pos:,}")
    if depth >= _MAX_DEPTH:
        raise GGUFFormatError("arrays nested too deeply")
    item_type = cur.scalar("I")
    count = cur.scalar("Q")
    if item_type in _SCALARS:
        size = struct.calcsize(_SCALARS[item_type])
        cur.need(count * size, f"an array of {count:,} items")
        if not decode:
            cur.pos += count * size
            return None
        values = struct.unpack_from(f"{cur.order}{count}{_SCALARS[item_type]}", cur.data, cur.pos)
        cur.pos += count * size
        return list(values)
    # Strings take at least 8 bytes (their length), nested arrays at least 12: check before looping.
    cur.need(count * (8 if item_type == _STRING else 12), f"an array of {count:,} items")
    items = [_value(cur, item_type, decode, depth + 1) for _ in range(count)]
    return items if decode else None


def read_metadata(
    path: str | Path, wanted: Callable[[str], bool], *, max_string: int = 1 << 20
) -> dict[str, Any]:
    """The metadata values whose key satisfies ``wanted`` (strings that are not UTF-8 become ``None``).

    A wanted string longer than ``max_string`` bytes is an error (a template larger than the template
    size limit); unwanted values are skipped whatever their size, as long as the file holds them.

    Raises:
        GGUFFormatError: not a GGUF file, an unsupported version, or a length larger than the file.
        OSError: the file cannot be opened.
    """
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        if size < 24:
            raise GGUFFormatError(f"{size} bytes is too short for a GGUF header")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _parse(data, wanted, max_string)


def _parse(data: mmap.mmap | bytes, wanted: Callable[[str], bool], max_string: int) -> dict[str, Any]:
    if bytes(data[:4]) != b"GGUF":
        raise GGUFFormatError("no GGUF magic")
    (version,) = struct.unpack_from("<I", data, 4)
    order = "<"
    if version & 0xFFFF == 0 and version != 0:  # written on a big-endian machine
        order = ">"
        (version,) = struct.unpack_from(">I", data, 4)
    if version not in (2, 3):
        raise GGUFFormatError(f"unsupported GGUF version {version}")
    cur = _Cursor(data, order, max_string)
    cur.pos = 8
    cur.scalar("Q")  # tensor count: tensors are never read
    kv_count = cur.scalar("Q")
    # Each key-value takes at least 8 (key length) + 4 (type) + 1 (smallest value) bytes.
    cur.need(kv_count * 13, f"{kv_count:,} metadata entries")
    out: dict[str, Any] = {}
    for _ in range(kv_count):
        key = cur.string(True)
        if key is None:
            raise GGUFFormatError(f"a metadata key is not UTF-8 (offset {cur.pos:,})")
        vtype = cur.scalar("I")
        decode = wanted(key)
        value = _value(cur, vtype, decode)
        if decode:
            out[key] = value
    return out
