"""Crafted specs (issue 22, item 3): size limits at load, and parsers linear on every format's worst shapes.

A spec is a file people share.  A 1 MB marker ended ``parse`` in ``MemoryError`` (the partial-marker table
holds every prefix of every marker); a call pattern with a 1 MB literal or 5,000 parts kept ``generate``,
``export -t lark``/``structural-tag`` and ``validate`` busy past 120 s.  Now the spec is refused where it is
read, with the path of what is too large.  The timing of the worst shapes is measured by
``benchmarks/stream_parse.py --only shapes`` (delimited soup, object calls, long markers); the tests here pin
the results at sizes a quadratic parser could not finish quickly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from workbench.runtime.parsing import parse, parse_events
from workbench.runtime.spec import MAX_SPEC_ITEMS, MAX_SPEC_TEXT, FormatSpec, SpecError
from workbench.spec_io import load_spec

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import stream_parse as shapes  # noqa: E402


@pytest.fixture(scope="module")
def delimited() -> dict[str, Any]:
    return json.loads(shapes.DELIMITED.to_json())


def _changed(data: dict[str, Any], path: list[str | int], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(data))
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


PATTERN = ["tools", "pattern"]
CRAFTED = {
    "1MB-marker": (["reasoning", "end"], "</think>" + "x" * 1_000_000, "reasoning.end: 1,000,008 characters"),
    "1MB-literal": ([*PATTERN, "call"], ["$name", "L" * 1_000_000, "$args"], "call[1]: 1,000,000"),
    "5000-parts": ([*PATTERN, "call"], ["$name"] * 5000 + ["$args"], "call: 5,001 items"),
    "huge-delimiter": ([*PATTERN, "encoding", "string_open"], "<q>" * 100_000, "string_open: 300,000"),
    "many-end-markers": (["end_markers"], [f"<e{i}>" for i in range(10_000)], "end_markers: 10,000 items"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_spec_is_refused_where_it_is_read(
    name: str, delimited: dict[str, Any], tmp_path: Path
) -> None:
    path, value, words = CRAFTED[name]
    data = _changed(delimited, path, value)
    with pytest.raises(SpecError, match=words.replace("[", r"\[")):
        FormatSpec.from_dict(data)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SpecError, match=words.replace("[", r"\[")):
        load_spec(spec_file)


@pytest.mark.parametrize(
    "command",
    [
        ["parse", "--spec", "{s}", "{o}"],
        ["validate", "--spec", "{s}"],
        ["export", "--spec", "{s}", "-t", "lark", "-o", "{x}"],
        ["export", "--spec", "{s}", "-t", "structural-tag", "--tools", "{t}", "-o", "{x}"],
        ["generate", "--spec", "{s}", "--messages", "{m}", "--model", "tiny"],
    ],
    ids=["parse", "validate", "lark", "structural-tag", "generate"],
)
def test_every_command_refuses_a_1mb_marker_with_one_line(
    command: list[str], delimited: dict[str, Any], tmp_path: Path
) -> None:
    spec_file = tmp_path / "spec.json"
    crafted = _changed(delimited, ["end_markers"], ["<" * 1_000_000])
    spec_file.write_text(json.dumps(crafted), encoding="utf-8")
    (tmp_path / "out.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "m.json").write_text(json.dumps([{"role": "user", "content": "Hi"}]), encoding="utf-8")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    (tmp_path / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    names = {"s": spec_file, "o": tmp_path / "out.txt", "x": tmp_path / "x", "t": tmp_path / "tools.json"}
    args = [a.format(**names, m=tmp_path / "m.json") for a in command]
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "spec.end_markers[0]: 1,000,000 characters" in lines[0], done.stderr
    assert not (tmp_path / "x").exists()


def test_the_limits_leave_room_for_every_real_spec() -> None:
    """The longest string of any spec analysed from ../shared and the project templates is 43 characters
    (outside the prompt facts); the shipped spec files load."""
    for path in sorted((REPO / "specs").glob("*.json")):
        load_spec(path)
    assert MAX_SPEC_TEXT >= 4 * 43 and MAX_SPEC_ITEMS >= 64


# --- linear on the worst shapes (issue 22: 256 KB of object-encoded arguments took 0.7 s, 1 MB 8.1 s) ----


def test_a_megabyte_of_object_encoded_arguments_is_one_call() -> None:
    text = shapes.shape_object_calls(1 << 20)
    result = parse(shapes.DELIMITED, text)
    (call,) = result.message.tool_calls
    args = call.arguments_value()
    assert len(args) == text.count("<|q|>") // 2 and args["k0"].startswith("v ")
    assert result.diagnostics == []


def test_arguments_with_thousands_of_repeated_keys_say_so_once() -> None:
    """The duplicate-key check counted every key's occurrences with ``list.count``: quadratic in the keys."""
    members = ", ".join(f'"k{i % 1000}": {i}' for i in range(50_000))
    text = '<tool_call>\n{"name": "f", "arguments": {' + members + "}}\n</tool_call>"
    result = parse(shapes.SPEC, text)
    assert result.message.tool_calls[0].arguments_value()["k0"] == 49_000
    assert [d.code for d in result.diagnostics] == ["W-ARGS-DUPLICATE-KEY"]


@pytest.mark.parametrize("shape", ["delimited soup", "long markers"])
def test_the_worst_shapes_parse_the_same_one_shot_and_streamed(shape: str) -> None:
    make, spec = shapes.SHAPES[shape]
    text = make(1 << 16)
    one = parse(spec, text)
    events, streamed = parse_events(spec, [text[i : i + 4] for i in range(0, len(text), 4)])
    assert streamed.message == one.message
    assert "".join(e.text for e in events) == text
