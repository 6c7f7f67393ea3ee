"""llama.cpp's parse expectations (../shared/conformance/llamacpp) against the fixture specs.

The fixture specs in ``specs/_parser_fixtures`` are what a correct analysis of each shared template should
give; they isolate the parser from the analyzer (the conformance runner measures both together).  The
comparison follows the suite's README: content and reasoning trimmed, names and ids exact, arguments
compared as JSON with key order, cut-off arguments equal when both fail to parse.  Every case runs one-shot
and per character; partial cases are judged before ``finish``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SHARED
from workbench.runtime.chat import Tool
from workbench.runtime.parsing import ParseOptions, StreamParser, parse
from workbench.runtime.spec import FormatSpec

FIXTURES = REPO / "specs" / "_parser_fixtures"
CASES_DIR = SHARED / "conformance" / "llamacpp"
KNOWN = {
    "LFM2-8B-A1B#07": "llama.cpp keeps the backslash of \\n inside a Python string literal; Python semantics "
    "(and vLLM's pythonic parser) decode it to a newline",
    "mistralai-Ministral-3-14B-Reasoning-2512#07": "a structured-output request (json_schema) whose ```json "
    "fence llama.cpp strips; the parser has no response_format option",
}
SPACE = " \t\n\v\f\r"


def load_cases() -> list[Any]:
    if not CASES_DIR.is_dir():
        return []
    out = []
    for path in sorted(CASES_DIR.glob("*.json")):
        if path.name.startswith("_"):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        stem = data["template"].removesuffix(".jinja")
        for case in data["cases"]:
            marks = (
                [pytest.mark.xfail(reason=KNOWN[case["name"].split(" ")[0]], strict=True)]
                if case["name"].split(" ")[0] in KNOWN
                else []
            )
            out.append(pytest.param(stem, data["tools"], case, id=case["name"].split(" ")[0], marks=marks))
    return out


def ordered(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=list)
    except ValueError:
        return None


def differences(expect: dict[str, Any], message: Any) -> list[str]:
    out = []
    for key in ("content", "reasoning_content"):
        got = (getattr(message, key) or "").strip(SPACE)
        if got != (expect.get(key) or "").strip(SPACE):
            out.append(f"{key}: {got!r} != {expect.get(key)!r}")
    got_calls = list(message.tool_calls)
    want_calls = expect.get("tool_calls", [])
    if len(got_calls) != len(want_calls):
        return [*out, f"{len(got_calls)} calls != {len(want_calls)}"]
    for got, want in zip(got_calls, want_calls, strict=True):
        if (got.name, got.id) != (want["name"], want.get("id", "")):
            out.append(f"call {(got.name, got.id)} != {(want['name'], want.get('id', ''))}")
        wanted = (
            ordered(want["arguments_text"])
            if want.get("arguments") is None
            else ordered(json.dumps(want["arguments"]))
        )
        if ordered(got.arguments) != wanted:
            out.append(
                f"arguments {got.arguments!r} != {want.get('arguments', want.get('arguments_text'))!r}"
            )
    return out


@pytest.mark.shared
@pytest.mark.parametrize(("stem", "tool_defs", "case"), load_cases())
def test_llamacpp_case(stem: str, tool_defs: dict[str, Any], case: dict[str, Any]) -> None:
    spec = FormatSpec.from_json((FIXTURES / f"{stem}.json").read_text(encoding="utf-8"))
    o = case["options"]
    tools = [Tool.from_openai(tool_defs[n]) for n in o.get("tools", [])]
    options = ParseOptions(
        enable_thinking=o.get("enable_thinking", True),
        extract_reasoning=o.get("reasoning_format", "none") != "none",
        parallel_tool_calls=o.get("parallel_tool_calls", False),
        parse_tools=bool(tools),
    )
    text = case["input"]
    streamed = StreamParser(spec, tools, options=options)
    for ch in text:
        streamed.feed(ch)
    if o.get("partial"):
        assert differences(case["expect"], streamed.current()) == []
        return
    assert differences(case["expect"], parse(spec, text, tools, options).message) == []
    assert differences(case["expect"], streamed.finish().message) == []


def test_every_shared_template_has_a_fixture_spec() -> None:
    if not (SHARED / "templates").is_dir():
        pytest.skip("../shared not present")
    stems = {p.stem for p in (SHARED / "templates").glob("*.jinja")}
    assert stems <= {p.stem for p in Path(FIXTURES).glob("*.json")}
