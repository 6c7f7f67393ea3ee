"""The conformance runner against a small fake parser: loading, plans, runs, invariants, CLI.

The fake speaks a toy format (``<think>…</think>`` reasoning, ``<call>NAME ARGS</call>`` tool calls) and can
be told to misbehave, so each runner rule is shown to catch the fault it exists for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from workbench.conformance import cases as cases_mod
from workbench.conformance import targets as targets_mod
from workbench.conformance.cases import LLAMACPP, PEERS, Case, CaseFileError, cases_from_data, load_case_paths
from workbench.conformance.plan import FINAL, PARTIAL, plan_for
from workbench.conformance.runner import Runner, chunkings
from workbench.conformance.targets import SPEC, FamilyRule, SpecProvider, Target, target_for
from workbench.runtime.chat import Message, ToolCall
from workbench.runtime.events import Diagnostic, Event
from workbench.runtime.spec import FormatSpec, ReasoningSpec

MARKERS = ("<think>", "</think>", "<call>", "</call>")
TOY_SPEC = FormatSpec(reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"))


# ------------------------------------------------------------------------------------------------ the fake
@dataclass
class FakeResult:
    message: Message
    diagnostics: list[Any] = field(default_factory=list)


class FakeStream:
    """A toy streaming parser: holds back partial markers, sends a call's name once, then its arguments."""

    def __init__(self, options: dict[str, Any], bug: str = "") -> None:
        self.opened = bool(options.get("thinking_opened"))
        self.extract = options.get("extract_reasoning", True)
        self.parse_tools = options.get("parse_tools", True)
        self.state = "reasoning" if self.opened and self.extract else "content"
        self.buf = ""
        self.name = ""
        self.index = -1
        self.events: list[Event] = []
        self.bug = bug

    def feed(self, text: str) -> list[Event]:
        if self.bug == "crash" and "boom" in text:
            raise RuntimeError("boom")
        self.buf += text
        out: list[Event] = []
        while self.buf:
            hits = [(self.buf.find(m), m) for m in MARKERS if m in self.buf]
            if hits:
                at, marker = min(hits)
                self._emit(self.buf[:at], out)
                self.buf = self.buf[at + len(marker) :]
                self._marker(marker, out)
                continue
            hold = max(
                (k for k in range(1, len(self.buf) + 1) if any(m.startswith(self.buf[-k:]) for m in MARKERS)),
                default=0,
            )
            self._emit(self.buf[: len(self.buf) - hold], out)
            self.buf = self.buf[len(self.buf) - hold :]
            break
        self.events.extend(out)
        return out

    def _marker(self, marker: str, out: list[Event]) -> None:
        if marker in ("<think>", "</think>") and not self.extract:
            self._emit(marker, out)
            return
        if marker in ("<call>", "</call>") and not self.parse_tools:
            self.state = "content"  # a call start still ends reasoning; its text stays content
            self._emit(marker, out)
            return
        if marker == "</call>" and self.state == "name":
            self._send_name(out)
        out.append(Event("marker", marker))
        self.state = {"<think>": "reasoning", "</think>": "content", "<call>": "name", "</call>": "content"}[
            marker
        ]
        if marker == "<call>":
            self.index += 1
            self.name = ""

    def _send_name(self, out: list[Event]) -> None:
        out.append(Event("tool_name", self.name, self.index))

    def _emit(self, text: str, out: list[Event]) -> None:
        if not text:
            return
        if self.state == "name":
            self.name += text
            if " " in self.name:
                self.name, rest = self.name.split(" ", 1)
                self._send_name(out)
                self.state = "args"
                self._emit(rest, out)
            return
        kind = {"content": "content", "reasoning": "reasoning", "args": "tool_args"}[self.state]
        out.append(Event(kind, text, self.index if kind == "tool_args" else None))

    def current(self) -> Message:
        message = _message(self.events)
        if self.bug == "early_name" and self.state == "name" and self.name:
            early = ToolCall(name=self.name, arguments="")  # a name sent before it is complete
            message = Message(
                role="assistant", content=message.content, tool_calls=(*message.tool_calls, early)
            )
        return message

    def finish(self) -> FakeResult:
        tail, self.buf = self.buf, ""
        flushed: list[Event] = []
        self._emit(tail, flushed)
        if self.state == "name" and self.name:
            self._send_name(flushed)
        message = _message(self.events + flushed)
        if self.bug == "retract":
            message = Message(
                role="assistant", content=(message.content or "")[:-1], tool_calls=message.tool_calls
            )
        if self.bug == "internal":
            return FakeResult(message, [Diagnostic("E-INTERNAL", "internal parser error (KeyError: 3)")])
        if self.bug.startswith("drop_first_call"):
            message = Message(role="assistant", content=message.content, tool_calls=message.tool_calls[1:])
            if self.bug.endswith("with_diagnostic"):
                return FakeResult(message, [Diagnostic("E-ARGS-JSON", "dropped call 0")])
        return FakeResult(message)


def _message(events: list[Event]) -> Message:
    content = "".join(e.text for e in events if e.kind == "content")
    reasoning = "".join(e.text for e in events if e.kind == "reasoning")
    calls: dict[int, list[str]] = {}
    for e in events:
        if e.kind == "tool_name":
            calls.setdefault(e.tool_index or 0, [e.text, ""])
        elif e.kind == "tool_args":
            calls[e.tool_index or 0][1] += e.text
    return Message(
        role="assistant",
        content=content or None,
        reasoning_content=reasoning or None,
        tool_calls=tuple(ToolCall(name=n, arguments=a) for n, a in calls.values()),
    )


class FakeBackend:
    def __init__(self, bug: str = "") -> None:
        self.bug = bug
        self.streams = 0

    def make_options(self, values: dict[str, Any], profile: str, streaming: bool) -> tuple[Any, list[str]]:
        return {**values, "profile": profile, "streaming": streaming}, []

    def stream(self, spec: Any, tools: Any, options: Any) -> FakeStream:
        self.streams += 1
        return FakeStream(options, self.bug)

    def parse(self, spec: Any, text: str, tools: Any, options: Any) -> FakeResult:
        s = FakeStream(options, self.bug)
        s.feed(text)
        return s.finish()


class FixedSpecs(SpecProvider):
    def spec(self, target: Target) -> FormatSpec:
        return TOY_SPEC


def llama_case(text: str, expect: dict[str, Any], **options: Any) -> Case:
    return Case(
        suite=LLAMACPP,
        group="toy",
        name="c",
        file="toy.json",
        input=text,
        options={"reasoning_format": "deepseek", "enable_thinking": True, "partial": False, **options},
        expect=expect,
        tools=({"type": "function", "function": {"name": "f", "parameters": {}}},),
    )


def peer_case(text: str, expect: dict[str, Any], parser: str = "sglang:toy (Toy)", **options: Any) -> Case:
    return Case(
        suite=PEERS,
        group="hermes",
        name="c",
        file="toy.json",
        input=text,
        options={"mode": "oneshot", "toolset": None, **options},
        expect=expect,
        tools=None,
        parser=parser,
    )


def run(case: Case, bug: str = "") -> Any:
    return Runner(FixedSpecs(), FakeBackend(bug)).run_case(case)


# ------------------------------------------------------------------------------------------------ runs
def test_matching_case_passes_one_shot_per_char_random_and_given_chunks() -> None:
    text = '<think>hm</think>Hi <call>f {"a": 1}</call>'
    case = llama_case(
        text,
        {
            "content": "Hi",
            "reasoning_content": "hm",
            "tool_calls": [{"name": "f", "arguments": {"a": 1}, "id": ""}],
        },
    )
    case = Case(**{**case.__dict__, "chunks": ("<thi", 'nk>hm</think>Hi <call>f {"a"', ": 1}</call>")})
    result = run(case)
    assert result.passed, result.first_difference
    assert [r.run for r in result.runs] == [
        "oneshot",
        "per_char",
        "random-1",
        "random-2",
        "random-3",
        "chunks",
    ]


def test_wrong_expected_content_fails_with_the_first_difference() -> None:
    result = run(
        llama_case(
            "<think>hm</think>Hello", {"content": "Goodbye", "reasoning_content": "hm", "tool_calls": []}
        )
    )
    assert not result.passed
    assert result.first_difference is not None and result.first_difference.startswith("[oneshot] content:")


def test_reasoning_format_none_keeps_reasoning_in_content() -> None:
    expect = {"content": "<think>hm</think>Hello", "reasoning_content": "", "tool_calls": []}
    assert run(llama_case("<think>hm</think>Hello", expect, reasoning_format="none")).passed
    assert not run(llama_case("<think>hm</think>Hello", expect, reasoning_format="auto")).passed


def test_a_name_sent_before_it_is_complete_breaks_the_streaming_invariant() -> None:
    expect = {"content": "", "tool_calls": [{"name": "foo", "arguments": {}, "id": ""}]}
    case = llama_case("<call>foo {}</call>", expect)
    assert run(case).passed
    broken = run(case, bug="early_name")
    assert not broken.passed
    assert 'call 0 name changed "f" -> "fo"' in (broken.first_difference or "")


def test_text_retracted_at_finish_breaks_the_streaming_invariant() -> None:
    result = run(peer_case("Hello", {"content": "Hell"}), bug="retract")
    problems = [v for r in result.runs for v in r.violations]
    assert any(p.startswith("at finish: content changed") for p in problems)
    assert not result.passed


def test_a_parser_crash_fails_the_case_even_for_no_crash_cases() -> None:
    assert run(peer_case("fine", {"no_crash": True}), bug="crash").passed
    crashed = run(peer_case("boom", {"no_crash": True}), bug="crash")
    assert not crashed.passed
    assert "crash: RuntimeError: boom" in (crashed.first_difference or "")


def test_an_error_the_parser_caught_itself_still_fails_the_case() -> None:
    result = run(peer_case("fine", {"no_crash": True}), bug="internal")
    assert not result.passed
    assert "internal parser error (KeyError: 3)" in (result.first_difference or "")


def test_partial_case_is_judged_on_deltas_without_finishing() -> None:
    # The held-back "<" would be flushed as content by finish(); a cut-off stream is judged before that.
    expect = {
        "content": "Hi",
        "tool_calls": [{"name": "f", "arguments": None, "arguments_text": '{"a": ', "id": ""}],
    }
    case = llama_case('Hi<call>f {"a": <', expect, partial=True)
    assert plan_for(case).point == PARTIAL
    assert run(case).passed


def test_llamacpp_streamed_runs_also_judge_the_accumulated_deltas() -> None:
    # A final "<" is held back by the stream and only released by finish(): the finished message has it,
    # the deltas do not; llama.cpp's harness requires both to match.
    result = run(llama_case("a <", {"content": "a <", "reasoning_content": "", "tool_calls": []}))
    assert not result.passed
    assert "accumulated deltas: content" in (result.first_difference or "")


def test_peer_streaming_case_stands_as_after_the_last_chunk() -> None:
    case = peer_case("I think <", {"content": "I think "}, mode="streaming")
    assert run(case).passed
    assert not run(peer_case("I think <", {"content": "I think "})).passed  # one-shot flushes the "<"


def test_reasoning_parser_case_hands_tool_markup_on_as_content() -> None:
    case = peer_case(
        "<think>thinking<call>tool call data",
        {"reasoning_content": "thinking", "content": "<call>tool call data"},
        parser="sglang:reasoning toy (Toy)",
    )
    assert plan_for(case).parse_tools is False
    result = run(case)
    assert result.passed, result.first_difference
    as_tool_case = peer_case(case.input, dict(case.expect), reasoning=None)
    assert not run(as_tool_case).passed  # the same text through a tool parser gives a call, not content


def test_a_call_dropped_at_finish_needs_a_diagnostic() -> None:
    text = '<call>a {"x"</call><call>b {}</call>'
    expect = {"tool_calls": [{"name": "b", "arguments": {}}]}
    silent = run(peer_case(text, expect), bug="drop_first_call")
    assert not silent.passed and "taken back without a diagnostic" in (silent.first_difference or "")
    assert run(peer_case(text, expect), bug="drop_first_call_with_diagnostic").passed


def test_is_reasoning_end_is_probed_from_the_parser() -> None:
    ended = peer_case("<think>abc</think>", {"is_reasoning_end": True}, parser="vllm:toy reasoning (T)")
    open_ = peer_case("<think>abc", {"is_reasoning_end": False}, parser="vllm:toy reasoning (T)")
    assert run(ended).passed
    assert run(open_).passed
    assert not run(
        peer_case("<think>abc", {"is_reasoning_end": True}, parser="vllm:toy reasoning (T)")
    ).passed


class RecordingBackend(FakeBackend):
    """Remembers the engine profile each case's options were made under."""

    def __init__(self) -> None:
        super().__init__()
        self.profiles: list[tuple[str, bool]] = []

    def make_options(self, values: dict[str, Any], profile: str, streaming: bool) -> tuple[Any, list[str]]:
        self.profiles.append((profile, streaming))
        return super().make_options(values, profile, streaming)


def test_each_case_runs_under_its_engine_profile_unless_one_profile_is_forced() -> None:
    sglang = peer_case("x", {"content": "x"}, parser="sglang:hermes (H)")
    vllm_stream = peer_case("x", {"content": "x"}, parser="vllm:hermes (H)", mode="streaming")
    backend = RecordingBackend()
    results = Runner(FixedSpecs(), backend).run_all([sglang, vllm_stream])
    assert backend.profiles == [("sglang", False), ("vllm", True)]
    assert [r.profile for r in results] == ["sglang", "vllm"]
    backend = RecordingBackend()
    forced = Runner(FixedSpecs(), backend, profile="workbench").run_all([sglang, vllm_stream])
    # The streaming code path still follows the case's mode: only the engine is replaced.
    assert backend.profiles == [("workbench", False), ("workbench", True)]
    assert forced[0].to_dict()["profile"] == "workbench"


def test_options_the_backend_rejects_fail_the_case_not_the_run() -> None:
    class Rejecting(FakeBackend):
        def make_options(
            self, values: dict[str, Any], profile: str, streaming: bool
        ) -> tuple[Any, list[str]]:
            raise ValueError(f"unknown engine {profile!r}")

    result = Runner(FixedSpecs(), Rejecting(), profile="tgi").run_case(peer_case("x", {"content": "x"}))
    assert not result.passed and "unknown engine 'tgi'" in (result.first_difference or "")


def test_chunkings_are_reproducible_and_cover_the_input() -> None:
    case = llama_case("x" * 200 + "<think>é</think>", {})
    first, second = chunkings(case, seed=7), chunkings(case, seed=7)
    assert first == second
    assert chunkings(case, seed=8) != first
    for name, chunks in first[1:]:
        assert "".join(chunks or ()) == case.input, name
        assert all(chunks), name


def test_missing_template_is_reported_per_case_not_raised(tmp_path: Path) -> None:
    runner = Runner(SpecProvider(templates_dir=tmp_path), FakeBackend())
    result = runner.run_case(llama_case("x", {"content": "x"}))
    assert not result.passed and "not found" in (result.error or "")


# ------------------------------------------------------------------------------------------------ plans
def test_plan_translates_llamacpp_options() -> None:
    assert plan_for(llama_case("", {}, reasoning_format="none")).extract_reasoning is False
    for fmt in ("auto", "deepseek"):
        assert plan_for(llama_case("", {}, reasoning_format=fmt)).extract_reasoning is True
    plan = plan_for(llama_case("", {}, enable_thinking=False, parallel_tool_calls=True))
    assert (plan.enable_thinking, plan.parallel_tool_calls, plan.thinking_opened, plan.point) == (
        False,
        True,
        None,
        FINAL,
    )
    assert plan_for(llama_case("", {}, json_schema={"type": "object"})).ignored
    no_tools = Case(**{**llama_case("", {}).__dict__, "tools": ()})
    assert plan_for(no_tools).parse_tools is False  # llama.cpp builds no tool parser without tools
    with pytest.raises(CaseFileError):
        plan_for(llama_case("", {}, reasoning_format="bogus"))


def test_plan_translates_peer_options() -> None:
    assert plan_for(peer_case("", {}, force_reasoning=True)).thinking_opened is True
    assert plan_for(peer_case("", {}, parser="RFC", output_stage="REASONING_STAGE")).thinking_opened is True
    assert plan_for(peer_case("", {}, parser="RFC", output_stage="CONTENT_STAGE")).thinking_opened is False
    assert (
        plan_for(peer_case("", {}, chat_template_kwargs={"enable_thinking": False})).enable_thinking is False
    )
    assert plan_for(peer_case("", {}, chat_template_kwargs={"thinking": False})).enable_thinking is False
    assert plan_for(peer_case("", {}, parser="RFC", thinking=False)).enable_thinking is False
    # A tool-parser test ran without a reasoning parser; a reasoning-parser test with one.
    assert plan_for(peer_case("", {}, parser="vllm:glm45 (X)")).extract_reasoning is False
    assert plan_for(peer_case("", {}, parser="vllm:glm45 (X)", reasoning=True)).parse_tools is False
    reasoning_only = plan_for(peer_case("", {}, parser="sglang:reasoning qwen3 (X)"))
    assert (reasoning_only.extract_reasoning, reasoning_only.parse_tools) == (True, False)
    rfc = plan_for(peer_case("", {}, parser="DeepSeek-V3.1 (reasoning + tool parser, RFC rules)"))
    assert (rfc.extract_reasoning, rfc.parse_tools, rfc.exclusive_tool_calls) == (True, True, True)
    assert plan_for(peer_case("", {}, parser="vllm:hermes (H)")).exclusive_tool_calls is False
    # Each case runs under the policies of the engine its test targeted (the parser defines the profiles).
    vllm_stream = plan_for(peer_case("", {}, parser="vllm:glm45 (X)", mode="streaming"))
    assert (vllm_stream.profile, vllm_stream.profile_streaming) == ("vllm", True)
    assert plan_for(peer_case("", {}, parser="sglang:glm45 (X)")).profile == "sglang"
    assert plan_for(peer_case("", {}, parser="DeepSeek-V3.1 (RFC rules)")).profile == "workbench"
    assert plan_for(llama_case("", {})).profile == "llama.cpp"


def test_family_table_picks_engine_and_option_specific_rows() -> None:
    def label(case: Case) -> str | None:
        t = target_for(case, plan_for(case))
        return t.label if t else None

    def fam(family: str, **kw: Any) -> Case:
        c = peer_case("", {}, **kw)
        return Case(**{**c.__dict__, "group": family})

    assert label(fam("qwen3", parser="vllm:reasoning qwen3 (Q)")) == "specs/qwen3_thinking.json"
    assert label(fam("qwen3", parser="sglang:reasoning qwen3 (Q)")) == "Qwen-Qwen3-0.6B.jinja"
    assert (
        label(fam("mistral", parser="vllm:mistral (M)", tokenizer_version="v11+")) == "specs/mistral_v11.json"
    )
    assert label(fam("mistral", parser="vllm:mistral (M)", tokenizer_version="pre-v11")) == (
        "mistralai-Mistral-Nemo-Instruct-2407.jinja"
    )
    assert label(fam("no_such_family")) is None


def test_mistral_cases_without_a_tokenizer_version_are_told_apart_by_their_wire_form() -> None:
    # The README: pre-v11 writes [TOOL_CALLS] then a JSON array; v11+ writes [TOOL_CALLS]NAME{…} or
    # [TOOL_CALLS]NAME[ARGS]{…}.  Without a tokenizer_version the output's form decides; with one, it wins.
    def label(text: str, **options: Any) -> str | None:
        c = peer_case(text, {}, parser="sglang:mistral (M)", **options)
        case = Case(**{**c.__dict__, "group": "mistral"})
        t = target_for(case, plan_for(case))
        return t.label if t else None

    nemo = "mistralai-Mistral-Nemo-Instruct-2407.jinja"
    assert label('[TOOL_CALLS]f[ARGS]{"a": 1}') == "specs/mistral_v11.json"
    assert label('Sure.[TOOL_CALLS]get_weather{"city": "Paris"}') == "specs/mistral_v11.json"
    assert label('[TOOL_CALLS] [{"name": "f", "arguments": {}}]') == nemo
    assert label('[TOOL_CALLS][{"name": "f", "arguments": {}}]') == nemo
    assert label("plain text, no call") == nemo
    assert label('[TOOL_CALLS]f{"a": 1}', tokenizer_version="pre-v11") == nemo


def test_every_family_spec_file_named_in_the_table_exists_and_loads() -> None:
    provider = SpecProvider()
    for rule in targets_mod.FAMILY_RULES:
        if rule.target.kind == SPEC:
            assert isinstance(provider.spec(rule.target), FormatSpec), rule.target.label


def test_docs_list_every_family_rule_target() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "conformance.md").read_text(encoding="utf-8")
    for rule in targets_mod.FAMILY_RULES:
        assert f"| `{rule.family}` |" in doc, rule.family
        assert f"`{rule.target.label}`" in doc, rule.target.label


# ------------------------------------------------------------------------------------------------ loading
LLAMA_FILE = {
    "template": "Toy.jinja",
    "defaults": {"reasoning_format": "none", "enable_thinking": True, "tools": [], "partial": False},
    "tools": {"f": {"type": "function", "function": {"name": "f", "parameters": {}}}},
    "cases": [{"name": "Toy#01", "input": "x", "options": {"tools": ["f"]}, "expect": {"content": "x"}}],
}
PEER_FILE = {
    "family": "toy",
    "tools": {"ts": [{"type": "function", "function": {"name": "g", "parameters": {}}}]},
    "cases": [
        {"name": "a", "input": "x", "options": {"mode": "oneshot", "toolset": "ts"}, "expect": {}},
        {
            "name": "b",
            "input": "y",
            "options": {"mode": "streaming", "toolset": None},
            "expect": {},
            "chunks": ["y"],
        },
    ],
}


def test_loads_both_shapes_and_resolves_tools() -> None:
    (llama,) = cases_from_data(LLAMA_FILE, "toy.json")
    assert (llama.suite, llama.group, llama.template) == (LLAMACPP, "Toy", "Toy.jinja")
    assert llama.options["reasoning_format"] == "none"  # default filled in
    assert [t["function"]["name"] for t in llama.tools or ()] == ["f"]
    a, b = cases_from_data(PEER_FILE, "peer.json")
    assert a.tools is not None and a.tools[0]["function"]["name"] == "g"
    assert b.tools is None and b.chunks == ("y",)


def test_bad_case_files_name_the_file_and_field(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(LLAMA_FILE))
    bad["cases"][0]["options"]["tools"] = ["missing_tool"]
    with pytest.raises(CaseFileError, match="missing_tool"):
        cases_from_data(bad, "toy.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"broken\.json"):
        load_case_paths([broken])
    with pytest.raises(CaseFileError, match=r"no such"):
        load_case_paths([tmp_path / "absent"])


def test_folder_loading_skips_helper_and_non_case_files(tmp_path: Path) -> None:
    (tmp_path / "_helpers.json").write_text(json.dumps({"cases": "not a list"}), encoding="utf-8")
    (tmp_path / "summary.json").write_text(json.dumps({"x": 1}), encoding="utf-8")
    (tmp_path / "toy.json").write_text(json.dumps(PEER_FILE), encoding="utf-8")
    assert [c.name for c in load_case_paths([tmp_path])] == ["a", "b"]


# ------------------------------------------------------------------------------------------------ CLI
@pytest.fixture
def toy_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A peer-shaped case folder whose family maps to a spec file, run by the fake backend."""
    cases = tmp_path / "cases"
    specs = tmp_path / "specs"
    cases.mkdir()
    specs.mkdir()
    (specs / "toy.json").write_text(TOY_SPEC.to_json(), encoding="utf-8")
    data = {
        "family": "toy",
        "tools": {},
        "cases": [
            {
                "name": "ok",
                "input": "<think>a</think>b",
                "parser": "DeepSeek (RFC)",
                "options": {"mode": "oneshot", "toolset": None},
                "expect": {"content": "b", "reasoning_content": "a"},
            },
            {
                "name": "bad",
                "input": "hello",
                "parser": "DeepSeek (RFC)",
                "options": {"mode": "oneshot", "toolset": None},
                "expect": {"content": "[TOOL_CALLS] nope"},
            },
        ],
    }
    (cases / "toy.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(targets_mod, "FAMILY_RULES", (FamilyRule("toy", Target(SPEC, "toy")),))
    monkeypatch.setattr("workbench.conformance.runner.ParsingBackend", FakeBackend)
    assert cases_mod.PEERS == PEERS
    return tmp_path


def _app() -> Any:
    import typer

    from workbench.commands import conformance

    app = typer.Typer()
    conformance.register(app)

    @app.command("noop")
    def _noop() -> None:  # a second command keeps typer from collapsing the app into one command
        pass

    return app


def test_cli_prints_rates_and_failing_cases(toy_suite: Path) -> None:
    out = CliRunner().invoke(
        _app(), ["conformance", str(toy_suite / "cases"), "--specs", str(toy_suite / "specs")]
    )
    assert out.exit_code == 0, out.output
    assert "peers/toy/bad" in out.output and "[TOOL_CALLS] nope" in out.output
    assert "1/2 passed (50.0%)" in out.output


def test_cli_json_is_one_object_per_case(toy_suite: Path) -> None:
    out = CliRunner().invoke(
        _app(), ["conformance", str(toy_suite / "cases"), "--specs", str(toy_suite / "specs"), "--json"]
    )
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["name"], r["passed"]) for r in rows] == [("ok", True), ("bad", False)]
    assert rows[1]["observed"]["content"] == "hello"


def test_cli_profile_runs_every_case_under_one_engine_profile(toy_suite: Path) -> None:
    args = ["conformance", str(toy_suite / "cases"), "--specs", str(toy_suite / "specs"), "--json"]
    default = [json.loads(line) for line in CliRunner().invoke(_app(), args).stdout.splitlines()]
    assert {r["profile"] for r in default} == {"workbench"}  # the toy cases name no engine
    forced = CliRunner().invoke(_app(), [*args, "--profile", "sglang"])
    assert {json.loads(line)["profile"] for line in forced.stdout.splitlines()} == {"sglang"}
    bad = CliRunner().invoke(_app(), [*args, "--profile", "tgi"])
    assert bad.exit_code == 2


def test_cli_fail_under_and_bad_input_exit_codes(toy_suite: Path) -> None:
    args = ["conformance", str(toy_suite / "cases"), "--specs", str(toy_suite / "specs")]
    assert CliRunner().invoke(_app(), [*args, "--fail-under", "50"]).exit_code == 0
    assert CliRunner().invoke(_app(), [*args, "--fail-under", "95"]).exit_code == 3
    missing = CliRunner().invoke(_app(), ["conformance", str(toy_suite / "nowhere")])
    assert missing.exit_code == 1 and "no such case file or folder" in missing.output
