"""The checking rules of both suites and the streaming invariants, written from the READMEs and the issue."""

from __future__ import annotations

from workbench.conformance.checks import c_trim, check_llamacpp, check_peer, typed_equal
from workbench.streaming.invariants import continuity_violations, nameless_calls
from workbench.streaming.observed import Observed, ObservedCall


def msg(content: str | None = None, reasoning: str | None = None, *calls: ObservedCall) -> Observed:
    return Observed(content=content, reasoning_content=reasoning, tool_calls=tuple(calls))


LLAMA_EXPECT = {"content": "Hello, world!\nWhat's up?", "reasoning_content": "", "tool_calls": []}


# ------------------------------------------------------------------------------------------------ llama.cpp
def test_llamacpp_identical_message_passes() -> None:
    assert check_llamacpp(LLAMA_EXPECT, msg("Hello, world!\nWhat's up?")) == []


def test_llamacpp_different_content_fails_and_names_the_field() -> None:
    diffs = check_llamacpp(LLAMA_EXPECT, msg("Hello, world!\nWhat is up?"))
    assert len(diffs) == 1 and diffs[0].startswith("content:")


def test_llamacpp_trims_c_whitespace_on_both_sides_but_not_inside() -> None:
    assert check_llamacpp(LLAMA_EXPECT, msg("\n  Hello, world!\nWhat's up?\t\r\n")) == []
    assert check_llamacpp(LLAMA_EXPECT, msg("Hello, world!\n\nWhat's up?")) != []


def test_llamacpp_trim_is_c_isspace_only() -> None:
    # U+3000 (ideographic space) is whitespace for Python's str.strip but not for C isspace.
    assert c_trim("\u3000x\v\f") == "\u3000x"
    assert check_llamacpp({"content": "x"}, msg("\u3000x")) != []


def test_llamacpp_missing_reasoning_equals_empty_expected_reasoning() -> None:
    assert check_llamacpp({"reasoning_content": ""}, msg("x", None)) == []


def test_llamacpp_argument_key_order_matters() -> None:
    expect = {"tool_calls": [{"name": "f", "arguments": {"a": 1, "b": 2}, "id": ""}]}
    assert check_llamacpp(expect, msg("", "", ObservedCall("f", '{"a":1,  "b": 2}'))) == []
    diffs = check_llamacpp(expect, msg("", "", ObservedCall("f", '{"b": 2, "a": 1}')))
    assert len(diffs) == 1 and "key order" in diffs[0]


def test_llamacpp_expected_empty_id_means_no_invented_id() -> None:
    expect = {"tool_calls": [{"name": "f", "arguments": {}, "id": ""}]}
    diffs = check_llamacpp(expect, msg("", "", ObservedCall("f", "{}", id="call_1")))
    assert diffs and "id" in diffs[0]


def test_llamacpp_tool_call_count_must_match() -> None:
    expect = {"tool_calls": [{"name": "f", "arguments": {}, "id": ""}]}
    assert check_llamacpp(expect, msg("", "")) != []
    two = msg("", "", ObservedCall("f", "{}"), ObservedCall("f", "{}"))
    assert check_llamacpp(expect, two) != []


def test_llamacpp_cut_off_arguments_compare_equal_when_both_unparsable() -> None:
    expect = {"tool_calls": [{"name": "f", "arguments": None, "arguments_text": '{"arg1": ', "id": ""}]}
    assert check_llamacpp(expect, msg("", "", ObservedCall("f", '{"arg1": '))) == []
    assert check_llamacpp(expect, msg("", "", ObservedCall("f", '{"arg1'))) == []  # both not JSON
    assert check_llamacpp(expect, msg("", "", ObservedCall("f", '{"arg1": 1}'))) != []  # complete JSON


def test_llamacpp_numbers_keep_their_type() -> None:
    expect = {"tool_calls": [{"name": "f", "arguments": {"x": 1}, "id": ""}]}
    assert check_llamacpp(expect, msg("", "", ObservedCall("f", '{"x": 1.0}'))) != []
    assert check_llamacpp(expect, msg("", "", ObservedCall("f", '{"x": true}'))) != []
    assert check_llamacpp(expect, msg("", "", ObservedCall("f", '{"x": "1"}'))) != []


def test_llamacpp_unknown_expectation_key_is_a_difference_not_a_silent_pass() -> None:
    assert check_llamacpp({"content_contains": ["x"]}, msg("x")) != []


# ------------------------------------------------------------------------------------------------ peers
def test_peer_content_is_exact_without_trimming() -> None:
    assert check_peer({"content": "Let me look that up. "}, msg("Let me look that up. ")) == []
    assert check_peer({"content": "Let me look that up. "}, msg("Let me look that up.")) != []


def test_peer_null_and_empty_string_are_alike() -> None:
    assert check_peer({"content": None}, msg("")) == []
    assert check_peer({"content": ""}, msg(None)) == []
    assert check_peer({"reasoning_content": None}, msg("x", "")) == []
    assert check_peer({"content": None}, msg("x")) != []


def test_peer_missing_key_is_not_checked() -> None:
    assert check_peer({"tool_calls": []}, msg("anything at all", "and reasoning")) == []


def test_peer_partial_content_checks() -> None:
    got = msg("  Some intro. more")
    assert check_peer({"content_contains": ["intro", "more"]}, got) == []
    assert check_peer({"content_contains": ["absent"]}, got) != []
    assert check_peer({"content_excludes": ["<|tool_call_begin|>"]}, got) == []
    assert check_peer({"content_excludes": ["intro"]}, got) != []
    assert check_peer({"content_startswith": "Some"}, got) != []  # leading spaces count
    assert check_peer({"content_strip_startswith": "Some intro."}, got) == []
    assert check_peer({"content_strip": "Some intro. more"}, got) == []
    assert check_peer({"content_or_empty": ""}, msg(None)) == []
    assert check_peer({"reasoning_contains": ["think"]}, msg("", "I think")) == []
    assert check_peer({"reasoning_contains": ["think"]}, msg("think", "")) != []


def test_peer_arguments_compare_decoded_values_in_any_key_order() -> None:
    expect = {"tool_calls": [{"name": "f", "arguments": {"a": 1, "b": [True, None]}}]}
    assert check_peer(expect, msg("", None, ObservedCall("f", '{"b": [true, null], "a": 1}'))) == []
    assert check_peer(expect, msg("", None, ObservedCall("f", '{"b": [1, null], "a": 1}'))) != []


def test_peer_arguments_text_is_exact() -> None:
    expect = {"tool_calls": [{"name": "f", "arguments_text": '{"city": "Paris"}'}]}
    assert check_peer(expect, msg("", None, ObservedCall("f", '{"city": "Paris"}'))) == []
    assert check_peer(expect, msg("", None, ObservedCall("f", '{"city":"Paris"}'))) != []


def test_peer_string_arguments_value() -> None:
    expect = {"tool_calls": [{"name": "do_thing", "arguments": "hello", "arguments_text": '"hello"'}]}
    assert check_peer(expect, msg("", None, ObservedCall("do_thing", '"hello"'))) == []
    assert check_peer(expect, msg("", None, ObservedCall("do_thing", "hello"))) != []


def test_peer_arguments_text_variants() -> None:
    got = msg("", None, ObservedCall("f", '{"city": "Bei'))
    assert check_peer({"tool_calls": [{"name": "f", "arguments_text_in": ["x", '{"city": "Bei']}]}, got) == []
    assert check_peer({"tool_calls": [{"name": "f", "arguments_text_in": ["x"]}]}, got) != []
    assert check_peer({"tool_calls": [{"name": "f", "arguments_text_startswith": '{"city"'}]}, got) == []
    assert check_peer({"tool_calls": [{"name": "f", "arguments_text_not_endswith": "}"}]}, got) == []
    assert check_peer({"tool_calls": [{"name": "f", "arguments_text_not_endswith": "Bei"}]}, got) != []


def test_peer_name_only_entry_checks_only_the_name_and_the_count() -> None:
    got = msg("", None, ObservedCall("a", "{}"), ObservedCall("b", "{not json"))
    assert check_peer({"tool_calls": [{"name": "a"}, {"name": "b"}]}, got) == []
    assert check_peer({"tool_calls": [{"name": "a"}]}, got) != []


def test_peer_id_checked_only_when_given() -> None:
    call = ObservedCall("get_weather", "{}", id="functions.get_weather:0")
    assert check_peer({"tool_calls": [{"name": "get_weather"}]}, msg("", None, call)) == []
    assert (
        check_peer(
            {"tool_calls": [{"name": "get_weather", "id": "functions.get_weather:0"}]}, msg("", None, call)
        )
        == []
    )
    assert check_peer({"tool_calls": [{"name": "get_weather", "id": "0"}]}, msg("", None, call)) != []


def test_peer_tool_calls_any_of_passes_when_one_option_matches() -> None:
    expect = {
        "tool_calls_any_of": [
            [{"name": "w", "arguments": {"c": "SH"}}],
            [{"name": "w", "arguments_text": "{c: BJ}"}, {"name": "w", "arguments": {"c": "SH"}}],
        ]
    }
    dropped = msg("", None, ObservedCall("w", '{"c": "SH"}'))
    passed_through = msg("", None, ObservedCall("w", "{c: BJ}"), ObservedCall("w", '{"c": "SH"}'))
    neither = msg("", None, ObservedCall("w", '{"c": "BJ"}'))
    assert check_peer(expect, dropped) == []
    assert check_peer(expect, passed_through) == []
    diffs = check_peer(expect, neither)
    assert len(diffs) == 1 and diffs[0].startswith("tool_calls_any_of")


def test_peer_is_reasoning_end() -> None:
    ended = Observed(reasoning_ended=True)
    assert check_peer({"is_reasoning_end": True}, ended) == []
    assert check_peer({"is_reasoning_end": False}, ended) != []
    assert check_peer({"is_reasoning_end": False}, Observed()) != []  # not computed is not "false"


def test_peer_no_crash_alone_passes_for_any_parse() -> None:
    assert check_peer({"no_crash": True}, msg("whatever")) == []


def test_typed_equal_keeps_json_types_apart() -> None:
    assert typed_equal({"a": [1, 2.5, "x", None, False]}, {"a": [1, 2.5, "x", None, False]}, ordered=True)
    assert not typed_equal(True, 1, ordered=False)
    assert not typed_equal(0, False, ordered=False)
    assert not typed_equal(42, 42.0, ordered=False)
    assert not typed_equal({"a": 1, "b": 2}, {"b": 2, "a": 1}, ordered=True)
    assert typed_equal({"a": 1, "b": 2}, {"b": 2, "a": 1}, ordered=False)


# ------------------------------------------------------------------------------------------------ invariants
def test_growing_partial_parses_are_continuous() -> None:
    before = msg("Hel", "th", ObservedCall("f", '{"a"'))
    after = msg("Hello", "think", ObservedCall("f", '{"a": 1}'), ObservedCall("g", ""))
    assert continuity_violations(before, after, where="w", drops_allowed=False) == []


def test_changed_text_name_or_id_breaks_continuity() -> None:
    def broken(before: Observed, after: Observed) -> list[str]:
        return continuity_violations(before, after, where="w", drops_allowed=False)

    assert broken(msg("Hello"), msg("Help"))[0].startswith("w: content changed")
    assert broken(msg(None, "abc"), msg(None, "ab"))[0].startswith("w: reasoning_content changed")
    assert (
        "name changed"
        in broken(msg("", None, ObservedCall("get", "")), msg("", None, ObservedCall("get_weather", "")))[0]
    )
    assert (
        "id changed"
        in broken(msg("", None, ObservedCall("f", "", "1")), msg("", None, ObservedCall("f", "", "2")))[0]
    )
    assert (
        "arguments changed"
        in broken(msg("", None, ObservedCall("f", '{"a": 1')), msg("", None, ObservedCall("f", '{"a": 2}')))[
            0
        ]
    )


def test_a_dropped_call_is_tolerated_only_with_a_diagnostic() -> None:
    before = msg("", None, ObservedCall("bad", '{"x"'), ObservedCall("good", "{}"))
    after = msg("", None, ObservedCall("good", "{}"))
    assert continuity_violations(before, after, where="w", drops_allowed=True) == []
    problems = continuity_violations(before, after, where="w", drops_allowed=False)
    assert problems and 'call 0 ("bad") taken back' in problems[0]


def test_arguments_before_a_name_are_reported() -> None:
    assert nameless_calls(msg("", None, ObservedCall("", '{"a"')), where="w") != []
    assert nameless_calls(msg("", None, ObservedCall("f", '{"a"'), ObservedCall("", "")), where="w") == []
