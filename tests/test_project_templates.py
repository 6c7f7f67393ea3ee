"""The project's own templates (templates/*.jinja): one per format family, each rendering exactly the format
its header describes.  Expected strings are written out by hand from the formats' descriptions.
"""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path
from typing import Any

import pytest

import workbench.template.render as wb_render
from tests.conftest import PROJECT_TEMPLATES
from workbench.template.render import TemplateError, render
from workbench.template.source import BUILTIN_ALIASES, DEFAULT_TEMPLATE

FAMILIES = {
    "chatml-think-tools": "Qwen3",
    "deepseek-v31-like": "DeepSeek-V3.1",
    "mistral-tool-calls": "Mistral",
    "llama3-json": "Llama 3",
    "xml-tagged-args": "Qwen3-Coder",
    "harmony-channels": "Harmony",
    "pythonic-calls": "LFM2",
}

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
                "days": {"type": "integer"},
                "hours": {"type": "array", "items": {"type": "integer"}},
                "opts": {"type": "object", "properties": {"fast": {"type": "boolean"}}, "required": ["fast"]},
            },
            "required": ["city"],
        },
    },
}
CLOCK = {"type": "function", "function": {"name": "get_time", "description": "Time now.", "parameters": {}}}
CALL_WEATHER = {
    "id": "call00001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
}
CALL_TIME = {"id": "call00002", "type": "function", "function": {"name": "get_time", "arguments": {}}}
USER = {"role": "user", "content": "Weather in Paris and the time?"}
CONVERSATION = [
    USER,
    {
        "role": "assistant",
        "reasoning_content": "Two lookups.",
        "content": "",
        "tool_calls": [CALL_WEATHER, CALL_TIME],
    },
    {"role": "tool", "tool_call_id": "call00001", "content": "21 C"},
    {"role": "tool", "tool_call_id": "call00002", "content": "noon"},
    {"role": "assistant", "content": "It is 21 C at noon."},
]
TOKENS = {
    "chatml-think-tools": {"eos_token": "<|im_end|>"},
    "deepseek-v31-like": {"bos_token": "<BOS>", "eos_token": "<EOS>"},
    "mistral-tool-calls": {"bos_token": "<s>", "eos_token": "</s>"},
    "llama3-json": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "xml-tagged-args": {"eos_token": "<|im_end|>"},
    "harmony-channels": {"bos_token": "<|startoftext|>", "eos_token": "<|return|>"},
    "pythonic-calls": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
}

# The whole conversation above, with a generation prompt, no tools list, no system message.
EXPECTED: dict[str, str] = {
    "chatml-think-tools": (
        "<|im_start|>user\nWeather in Paris and the time?<|im_end|>\n"
        "<|im_start|>assistant\n<think>\nTwo lookups.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call><|im_end|>\n'
        "<|im_start|>user\n<tool_response>\n21 C\n</tool_response>\n<tool_response>\nnoon\n</tool_response>"
        "<|im_end|>\n"
        "<|im_start|>assistant\nIt is 21 C at noon.<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "deepseek-v31-like": (
        "<BOS><｜User｜>Weather in Paris and the time?<｜Assistant｜><think>Two lookups.</think>"
        "<｜tool▁calls▁begin｜>"
        '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris", "days": 2}<｜tool▁call▁end｜>'
        "<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
        "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>"
        "<｜tool▁output▁begin｜>21 C<｜tool▁output▁end｜><｜tool▁output▁begin｜>noon<｜tool▁output▁end｜>"
        "It is 21 C at noon.<｜end▁of▁sentence｜>"
        "<｜Assistant｜></think>"
    ),
    "mistral-tool-calls": (
        "<s>[INST]Weather in Paris and the time?[/INST]"
        '[TOOL_CALLS]get_weather[CALL_ID]call00001[ARGS]{"city": "Paris", "days": 2}'
        "[TOOL_CALLS]get_time[CALL_ID]call00002[ARGS]{}</s>"
        "[TOOL_RESULTS]call00001[TOOL_CONTENT]21 C[/TOOL_RESULTS]"
        "[TOOL_RESULTS]call00002[TOOL_CONTENT]noon[/TOOL_RESULTS]"
        "It is 21 C at noon.</s>"
    ),
    "llama3-json": (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nWeather in Paris and the time?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
        '{"name": "get_weather", "parameters": {"city": "Paris", "days": 2}}\n'
        '{"name": "get_time", "parameters": {}}<|eot_id|>'
        "<|start_header_id|>ipython<|end_header_id|>\n\n21 C<|eot_id|>"
        "<|start_header_id|>ipython<|end_header_id|>\n\nnoon<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nIt is 21 C at noon.<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    ),
    "xml-tagged-args": (
        "<|im_start|>user\nWeather in Paris and the time?<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=get_time>\n</function>\n</tool_call><|im_end|>\n"
        "<|im_start|>user\n<tool_response>\n21 C\n</tool_response>\n<tool_response>\nnoon\n</tool_response>"
        "<|im_end|>\n"
        "<|im_start|>assistant\nIt is 21 C at noon.<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "harmony-channels": (
        "<|start|>system<|message|>You are a helpful assistant.\nKnowledge cutoff: 2024-06\n\n"
        "Reasoning: medium\n\n"
        "# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>"
        "<|start|>user<|message|>Weather in Paris and the time?<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Two lookups.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city": "Paris", "days": 2}<|call|>'
        "<|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>"
        "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>21 C<|end|>"
        "<|start|>functions.get_time to=assistant<|channel|>commentary<|message|>noon<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is 21 C at noon.<|end|>"
        "<|start|>assistant"
    ),
    "pythonic-calls": (
        "<|startoftext|><|im_start|>user\nWeather in Paris and the time?<|im_end|>\n"
        "<|im_start|>assistant\n"
        '<|tool_call_start|>[get_weather(city="Paris", days=2), get_time()]<|tool_call_end|><|im_end|>\n'
        "<|im_start|>tool\n<|tool_response_start|>21 C<|tool_response_end|><|im_end|>\n"
        "<|im_start|>tool\n<|tool_response_start|>noon<|tool_response_end|><|im_end|>\n"
        "<|im_start|>assistant\nIt is 21 C at noon.<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
}


def _source(name: str) -> str:
    return (PROJECT_TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8")


def _render(name: str, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    return render(_source(name), messages, **{**TOKENS[name], **kwargs})


def test_one_template_per_family_and_the_default_is_among_them() -> None:
    assert {p.stem for p in PROJECT_TEMPLATES.glob("*.jinja")} == set(FAMILIES)
    assert DEFAULT_TEMPLATE == "chatml-think-tools"
    assert set(FAMILIES) <= set(BUILTIN_ALIASES)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_header_comment_names_the_family(name: str) -> None:
    text = _source(name)
    assert text.startswith("{#- " + name + ":")
    header = text[: text.index("-#}")]
    assert FAMILIES[name] in header
    assert "Exercises" in header


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_full_conversation_renders_in_the_documented_format(name: str) -> None:
    assert _render(name, CONVERSATION, add_generation_prompt=True) == EXPECTED[name]


class _Clock(_dt.datetime):
    value = _dt.datetime(2020, 1, 1)

    @classmethod
    def now(cls, tz: Any = None) -> _dt.datetime:
        return cls.value


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_renders_do_not_depend_on_the_clock(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Differential analysis compares renders: a date in the output would show up as a spurious diff."""
    monkeypatch.setattr(wb_render, "datetime", _Clock)
    first = _render(name, CONVERSATION, tools=[WEATHER, CLOCK], add_generation_prompt=True)
    _Clock.value = _dt.datetime(2031, 12, 31, 23, 59)
    second = _render(name, CONVERSATION, tools=[WEATHER, CLOCK], add_generation_prompt=True)
    assert first == second
    assert "strftime_now" not in _source(name)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_tools_are_listed_and_content_parts_are_accepted(name: str) -> None:
    parts = [
        {"role": "user", "content": [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]}
    ]
    out = _render(name, parts, tools=[WEATHER, CLOCK], add_generation_prompt=True)
    assert "Hello there" in out
    assert "get_weather" in out and "get_time" in out and "Weather for a city." in out


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_unknown_roles_are_refused_with_a_clear_message(name: str) -> None:
    if name == "harmony-channels":  # Harmony has a developer role; use one no family knows
        role = "narrator"
    else:
        role = "developer"
    with pytest.raises(TemplateError, match=f'unsupported role "{role}"') as info:
        _render(name, [USER, {"role": role, "content": "x"}])
    assert info.value.kind == "raised" and info.value.line is not None


# --- family-specific behaviour ----------------------------------------------------------------------------


def test_chatml_thinking_toggle_and_reasoning_only_on_the_latest_turn() -> None:
    base = [USER]
    assert _render("chatml-think-tools", base, add_generation_prompt=True).endswith("<|im_start|>assistant\n")
    off = _render("chatml-think-tools", base, add_generation_prompt=True, enable_thinking=False)
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    on = _render("chatml-think-tools", base, add_generation_prompt=True, enable_thinking=True)
    assert on.endswith("<|im_start|>assistant\n")
    history = [
        USER,
        {"role": "assistant", "reasoning_content": "old thoughts", "content": "A"},
        {"role": "user", "content": "Q2"},
    ]
    assert "old thoughts" not in _render("chatml-think-tools", history)


def test_chatml_system_turn_lists_tools_as_json_lines() -> None:
    out = _render("chatml-think-tools", [{"role": "system", "content": "Be brief."}, USER], tools=[CLOCK])
    assert out.startswith(
        "<|im_start|>system\nBe brief.\n\n# Tools\n\n"
        "You can call the functions described below to help with the request. Each one is given as a JSON "
        "schema inside <tools></tools>:\n<tools>\n"
        '{"type": "function", "function": {"name": "get_time", "description": "Time now.", "parameters": {}}}'
        "\n</tools>\n\n"
    )


def test_deepseek_thinking_prompt_and_open_turn_after_tool_results() -> None:
    assert _render("deepseek-v31-like", [USER], add_generation_prompt=True, thinking=True).endswith(
        "<｜User｜>Weather in Paris and the time?<｜Assistant｜><think>"
    )
    assert _render("deepseek-v31-like", [USER], add_generation_prompt=True, enable_thinking=True).endswith(
        "<｜Assistant｜><think>"
    )
    after_tools = _render("deepseek-v31-like", CONVERSATION[:4], add_generation_prompt=True, thinking=True)
    assert after_tools.endswith("<｜tool▁output▁begin｜>noon<｜tool▁output▁end｜>")


def test_mistral_tools_before_the_last_user_turn_and_calls_without_ids() -> None:
    msgs = [USER, {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Again?"}]
    out = _render("mistral-tool-calls", msgs, tools=[CLOCK])
    assert out == (
        "<s>[INST]Weather in Paris and the time?[/INST]Hello.</s>"
        '[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_time", "description": "Time now.", '
        '"parameters": {}}}][/AVAILABLE_TOOLS][INST]Again?[/INST]'
    )
    no_id = [
        USER,
        {"role": "assistant", "tool_calls": [{"function": {"name": "get_time", "arguments": "{}"}}]},
    ]
    assert _render("mistral-tool-calls", no_id).endswith("[/INST][TOOL_CALLS]get_time[ARGS]{}</s>")


def test_llama3_tools_date_and_results_as_json() -> None:
    out = _render(
        "llama3-json",
        [USER, *CONVERSATION[1:2], {"role": "tool", "tool_call_id": "call00001", "content": [{"temp": 21}]}],
        tools=[CLOCK],
        date_string="02 Feb 2025",
    )
    assert out.startswith(
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 02 Feb 2025\n\n"
        "You can call the functions below. To call one, reply with only a JSON object of the form "
        '{"name": function name, "parameters": object of argument names and values}; for several calls, put '
        'one object per line. Do not use variables.\n\n{\n    "type": "function",\n'
    )
    assert out.endswith('<|start_header_id|>ipython<|end_header_id|>\n\n[{"temp": 21}]<|eot_id|>')


def test_xml_arguments_strings_raw_everything_else_json_and_json_strings_refused() -> None:
    call = {"function": {"name": "f", "arguments": {"s": "two\nlines", "b": True, "n": None, "l": [1, "x"]}}}
    out = _render("xml-tagged-args", [USER, {"role": "assistant", "content": "Sure.", "tool_calls": [call]}])
    assert out.endswith(
        "<|im_start|>assistant\nSure.\n\n<tool_call>\n<function=f>\n"
        "<parameter=s>\ntwo\nlines\n</parameter>\n<parameter=b>\ntrue\n</parameter>\n"
        '<parameter=n>\nnull\n</parameter>\n<parameter=l>\n[1, "x"]\n</parameter>\n'
        "</function>\n</tool_call><|im_end|>\n"
    )
    wire = {"function": {"name": "f", "arguments": '{"s": "x"}'}}
    with pytest.raises(TemplateError, match="must be an object, not a JSON string"):
        _render("xml-tagged-args", [USER, {"role": "assistant", "tool_calls": [wire]}])


def test_xml_tool_listing() -> None:
    out = _render("xml-tagged-args", [USER], tools=[WEATHER])
    assert (
        "<tools>\n<function>\n<name>get_weather</name>\n<description>Weather for a city.</description>\n"
        "<parameters>\n<parameter>\n<name>city</name>\n<type>string</type>\n"
        "<description>City name</description>\n"
        '</parameter>\n<parameter>\n<name>unit</name>\n<type>string</type>\n<enum>["c", "f"]</enum>\n'
        "</parameter>\n<parameter>\n<name>days</name>\n<type>integer</type>\n</parameter>\n"
        "<parameter>\n<name>hours</name>\n<type>array</type>\n</parameter>\n"
        "<parameter>\n<name>opts</name>\n<type>object</type>\n</parameter>\n"
        '<required>["city"]</required>\n</parameters>\n</function>\n</tools>'
    ) in out


def test_harmony_developer_message_renders_tools_as_typescript() -> None:
    out = _render(
        "harmony-channels",
        [{"role": "system", "content": "Be brief."}, USER],
        tools=[WEATHER, CLOCK],
        reasoning_effort="high",
        current_date="2025-08-08",
    )
    assert out.startswith(
        "<|start|>system<|message|>You are a helpful assistant.\nKnowledge cutoff: 2024-06\n"
        "Current date: 2025-08-08\n\nReasoning: high\n\n"
        "# Valid channels: analysis, commentary, final. Channel must be included for every message.\n"
        "Calls to these tools must go to the commentary channel: 'functions'.<|end|>"
        "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n# Tools\n\n## functions\n\n"
        "namespace functions {\n\n"
        "// Weather for a city.\n"
        "type get_weather = (_: {\n"
        "// City name\n"
        "city: string,\n"
        'unit?: "c" | "f", // default: "c"\n'
        "days?: number,\n"
        "hours?: number[],\n"
        "opts?: {\n"
        "  fast: boolean,\n"
        "},\n"
        "}) => any;\n\n"
        "// Time now.\n"
        "type get_time = () => any;\n\n"
        "} // namespace functions<|end|>"
        "<|start|>user<|message|>Weather in Paris and the time?<|end|>"
    )


def test_harmony_final_message_ends_with_return_when_it_is_last() -> None:
    convo = [USER, {"role": "assistant", "content": "Sunny."}]
    assert _render("harmony-channels", convo).endswith("<|channel|>final<|message|>Sunny.<|return|>")
    assert _render("harmony-channels", convo, add_generation_prompt=True).endswith(
        "<|channel|>final<|message|>Sunny.<|end|><|start|>assistant"
    )


def test_pythonic_arguments_are_python_literals() -> None:
    args = {"s": 'say "hi"\n', "t": True, "f": False, "n": None, "x": 1.5, "l": [1, {"k": "v"}]}
    convo = [
        USER,
        {
            "role": "assistant",
            "content": "Ok.",
            "tool_calls": [{"function": {"name": "f", "arguments": args}}],
        },
    ]
    out = _render("pythonic-calls", convo)
    call = re.search(r"<\|tool_call_start\|>(.*)<\|tool_call_end\|>", out)
    assert call is not None
    assert call.group(1) == '[f(s="say \\"hi\\"\\n", t=True, f=False, n=None, x=1.5, l=[1, {"k": "v"}])]'
    assert out.endswith(
        "<|im_start|>assistant\nOk.<|tool_call_start|>" + call.group(1) + "<|tool_call_end|><|im_end|>\n"
    )
    python_ast = pytest.importorskip("ast")
    parsed = python_ast.parse(call.group(1), mode="eval").body
    assert isinstance(parsed, python_ast.List)
    assert python_ast.literal_eval(parsed.elts[0].keywords[5].value) == [1, {"k": "v"}]


def test_every_template_file_is_referenced_by_path() -> None:
    for name in FAMILIES:
        assert Path(BUILTIN_ALIASES[name]) == PROJECT_TEMPLATES / f"{name}.jinja"
