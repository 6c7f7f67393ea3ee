"""GGUF metadata with hostile lengths is refused at once (issue 13); real files read as gguf reads them."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest

from workbench.template.gguf_meta import GGUFFormatError, read_metadata
from workbench.template.source import SourceError, load_template


def _header(kv_count: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, kv_count)


def _key(name: str) -> bytes:
    raw = name.encode()
    return struct.pack("<Q", len(raw)) + raw


def _pad(data: bytes, size: int = 73) -> bytes:
    return data + b"\0" * max(0, size - len(data))


BOMBS = {
    # the file from the adversarial pass: 73 bytes declaring an array of 2^40 strings
    "array_2_40": _pad(_header(1) + _key("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 1 << 40)),
    "numeric_array_2_40": _pad(
        _header(1) + _key("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 1 << 40)
    ),
    "string_2_40": _pad(_header(1) + _key("tokenizer.chat_template") + struct.pack("<IQ", 8, 1 << 40)),
    "key_2_40": _pad(_header(1) + struct.pack("<Q", 1 << 40)),
    "kv_count_2_60": _pad(_header(1 << 60)),
    "nested_arrays": _pad(
        _header(1)
        + _key("x")
        + struct.pack("<I", 9)
        + struct.pack("<IQ", 9, 1) * 5
        + struct.pack("<IQ", 0, 1)
    ),
    "unknown_type": _pad(_header(1) + _key("x") + struct.pack("<I", 99)),
    "truncated": _header(2) + _key("tokenizer.chat_template") + struct.pack("<IQ", 8, 10) + b"abc",
    "version_1": _pad(b"GGUF" + struct.pack("<IQQ", 1, 0, 0)),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_hostile_gguf_is_refused_at_once(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(BOMBS[name])
    started = time.monotonic()
    with pytest.raises(SourceError, match="not a readable GGUF"):
        load_template(path)
    with pytest.raises(GGUFFormatError):
        read_metadata(path, lambda key: True)
    assert time.monotonic() - started < 1.0


def test_a_template_string_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "big.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_string("tokenizer.chat_template", "x" * ((1 << 20) + 1))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    with pytest.raises(SourceError, match="limit"):
        load_template(path)


def test_metadata_matches_gguf_reader(tmp_path: Path) -> None:
    """Every value type reads as ``gguf.GGUFReader`` reads it (the reader it replaces)."""
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "types.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_string("tokenizer.chat_template", "{{ messages[0].content }} é")
    writer.add_array("tokenizer.chat_templates", ["tool_use"])
    writer.add_string("tokenizer.chat_template.tool_use", "T")
    writer.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "a", "ü"])
    writer.add_array("tokenizer.ggml.scores", [0.5, 1.5, -2.0, 3.25])
    writer.add_array("tokenizer.ggml.token_type", [1, 2, 3, 4])
    writer.add_uint32("tokenizer.ggml.bos_token_id", 0)
    writer.add_uint32("tokenizer.ggml.eos_token_id", 1)
    writer.add_bool("general.flag", True)
    writer.add_float64("general.f64", 2.5)
    writer.add_int64("general.i64", -7)
    writer.add_uint8("general.u8", 255)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    ours = read_metadata(path, lambda key: True)
    reader = gguf.GGUFReader(str(path), "r")
    theirs = {key: field.contents() for key, field in reader.fields.items() if not key.startswith("GGUF.")}
    assert ours == theirs
    src = load_template(path)
    assert src.text == "{{ messages[0].content }} é"
    assert src.named["tool_use"] == "T"
    assert src.render_kwargs() == {"bos_token": "<s>", "eos_token": "</s>"}
