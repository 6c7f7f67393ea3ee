"""``workbench render``: the prompt transformers would build, byte for byte, from files on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from workbench.cli import app
from workbench.commands.render import parse_kw

runner = CliRunner()

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
CALL = {
    "id": "call00001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
}
MESSAGES = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call00001", "content": "sunny"},
]


def _json(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _invoke(*args: str) -> Any:
    return runner.invoke(app, ["render", *args])


def test_render_is_byte_for_byte_what_transformers_builds(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from workbench.template.source import load_template

    template = load_template("chatml-think-tools").text
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=model, eos_token="<|im_end|>", chat_template=template
    )
    expected = tok.apply_chat_template(
        MESSAGES, tools=TOOLS, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    result = _invoke(
        "chatml-think-tools",
        "--messages",
        _json(tmp_path / "m.json", MESSAGES),
        "--tools",
        _json(tmp_path / "t.json", TOOLS),
        "--kw",
        "enable_thinking=false",
        "--add-generation-prompt",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected  # nothing added, not even a newline
    assert result.stdout.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_tools_can_come_with_the_messages(tmp_path: Path) -> None:
    both = _json(tmp_path / "request.json", {"messages": MESSAGES, "tools": TOOLS})
    result = _invoke("chatml-think-tools", "-m", both)
    assert result.exit_code == 0, result.stderr
    assert '"name": "get_weather", "description": "Weather for a city."' in result.stdout  # the tools section
    assert (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in result.stdout
    )


def test_argument_objects_reach_the_template_as_objects(tmp_path: Path) -> None:
    """XML-tagged templates iterate the arguments; a JSON string there would be an error."""
    result = _invoke("xml-tagged-args", "-m", _json(tmp_path / "m.json", MESSAGES))
    assert result.exit_code == 0, result.stderr
    assert "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>" in result.stdout


def test_kw_values_are_json_when_they_parse() -> None:
    assert parse_kw(["enable_thinking=false", "n=3", "effort=high", 'obj={"a": [1]}', "empty="]) == {
        "enable_thinking": False,
        "n": 3,
        "effort": "high",
        "obj": {"a": [1]},
        "empty": "",
    }
    assert parse_kw(["date_string=26 Jul 2024"]) == {"date_string": "26 Jul 2024"}
    with pytest.raises(typer.BadParameter):
        parse_kw(["no-equals-sign"])


def test_kw_overrides_the_special_tokens_and_reaches_the_template(tmp_path: Path) -> None:
    msgs = _json(tmp_path / "m.json", [{"role": "user", "content": "Hi"}])
    result = _invoke("llama3-json", "-m", msgs, "--kw", "bos_token=<BOS>", "--kw", "date_string=1 Jan 2030")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("<BOS><|start_header_id|>system<|end_header_id|>\n\n")
    assert "Today Date: 1 Jan 2030\n" in result.stdout
    effort = _invoke("harmony-channels", "-m", msgs, "--kw", "reasoning_effort=high")
    assert "\n\nReasoning: high\n\n" in effort.stdout


def test_template_name_picks_a_named_template(tmp_path: Path) -> None:
    cfg = tmp_path / "tokenizer_config.json"
    cfg.write_text(
        json.dumps(
            {
                "eos_token": "</s>",
                "chat_template": [
                    {"name": "default", "template": "D{{ messages | length }}{{ eos_token }}"},
                    {"name": "rag", "template": "R{{ messages | length }}{{ eos_token }}"},
                ],
            }
        ),
        encoding="utf-8",
    )
    msgs = _json(tmp_path / "m.json", [{"role": "user", "content": "Hi"}])
    assert _invoke(str(cfg), "-m", msgs).stdout == "D1</s>"
    assert _invoke(str(cfg), "-m", msgs, "--template-name", "rag").stdout == "R1</s>"
    wrong = _invoke(str(cfg), "-m", msgs, "--template-name", "nope")
    assert wrong.exit_code == 1
    assert "no template named 'nope'" in wrong.stderr


def test_json_output_reports_what_was_used(tmp_path: Path) -> None:
    msgs = _json(tmp_path / "m.json", [{"role": "user", "content": "Hi"}])
    result = _invoke(
        "mistral-tool-calls", "-m", msgs, "--kw", "bos_token=<s>", "--kw", "eos_token=</s>", "--json"
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["text"] == "<s>[INST]Hi[/INST]"
    assert data["template"] == "mistral-tool-calls"
    assert data["selected"] == "default"
    assert data["kwargs"] == {"bos_token": "<s>", "eos_token": "</s>"}


def test_messages_from_stdin(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["render", "pythonic-calls", "-m", "-"], input=json.dumps([{"role": "user", "content": "Hi"}])
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "<|im_start|>user\nHi<|im_end|>\n"


def test_usage_errors_exit_with_code_2(tmp_path: Path) -> None:
    assert _invoke("chatml-think-tools").exit_code == 2  # no --messages
    msgs = _json(tmp_path / "m.json", [{"role": "user", "content": "Hi"}])
    assert _invoke("chatml-think-tools", "-m", msgs, "--kw", "oops").exit_code == 2
    assert _invoke("chatml-think-tools", "-m", msgs, "--time-limit", "0").exit_code == 2


@pytest.mark.parametrize("given", ["reasoning_content", "thinking", "reasoning"])
def test_reasoning_reaches_the_template_under_each_name_it_reads(given: str) -> None:
    """Templates read reasoning as ``reasoning_content`` (Qwen, DeepSeek), ``thinking`` (gpt-oss) or
    ``reasoning`` (vLLM's responses, Nemotron 3): whichever field a message carries, each name holds it."""
    from workbench.template.render import render

    template = (
        "{% for m in messages %}{{ m.reasoning_content }}|{{ m.thinking }}|{{ m.reasoning }}|"
        "{{ m.content }}{% endfor %}"
    )
    text = render(template, [{"role": "assistant", "content": "C", given: "R"}])
    assert text == "R|R|R|C"
