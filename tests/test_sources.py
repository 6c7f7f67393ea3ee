"""Template sources: .jinja, tokenizer_config.json (string or named list), model folders, GGUF, hub ids.

What matters is that a source yields the template text *and* the special tokens transformers would pass,
so the last group of tests renders through real tokenizers from ../shared and compares with transformers.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_path
from workbench.template import source as source_mod
from workbench.template.render import render
from workbench.template.source import (
    BUILTIN_ALIASES,
    DEFAULT_TEMPLATE,
    SourceError,
    TemplateSource,
    load_template,
)

TEMPLATE = "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}{{ eos_token }}"
TOOL_TEMPLATE = "TOOLS {{ tools | length }}{% for m in messages %}[{{ m.role }}]{% endfor %}"
USER = [{"role": "user", "content": "Hi"}]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _config(path: Path, **fields: Any) -> Path:
    return _write(path, json.dumps(fields))


# --- .jinja files -----------------------------------------------------------------------------------------


def test_bare_jinja_file_falls_back_to_empty_bos_and_eos(tmp_path: Path) -> None:
    src = load_template(_write(tmp_path / "my-model.jinja", TEMPLATE))
    assert src.text == TEMPLATE
    assert src.name == "my-model"
    assert src.special_tokens is None
    assert src.render_kwargs() == {"bos_token": "", "eos_token": ""}


def test_jinja_file_takes_special_tokens_from_a_config_beside_it(tmp_path: Path) -> None:
    _config(
        tmp_path / "tokenizer_config.json",
        bos_token={"content": "<B>", "__type": "AddedToken"},
        eos_token="<E>",
        unk_token=None,
        pad_token="<P>",
    )
    src = load_template(_write(tmp_path / "chat_template.jinja", TEMPLATE))
    assert src.render_kwargs() == {"bos_token": "<B>", "eos_token": "<E>", "pad_token": "<P>"}
    assert render(src.text, USER, **src.render_kwargs()) == "<B>[user]Hi<E>"


def test_empty_or_binary_template_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="empty"):
        load_template(_write(tmp_path / "blank.jinja", "  \n"))
    binary = tmp_path / "weights.jinja"
    binary.write_bytes(b"\x80\x81\xfe")
    with pytest.raises(SourceError, match="not UTF-8"):
        load_template(binary)


def test_builtin_names_resolve_to_the_project_templates() -> None:
    assert DEFAULT_TEMPLATE in BUILTIN_ALIASES
    src = load_template(DEFAULT_TEMPLATE)
    assert src.name == DEFAULT_TEMPLATE
    assert "<|im_start|>" in src.text


# --- tokenizer_config.json --------------------------------------------------------------------------------


def test_config_with_a_string_template_and_null_bos(tmp_path: Path) -> None:
    cfg = _config(
        tmp_path / "qwen" / "tokenizer_config.json",
        chat_template=TEMPLATE,
        bos_token=None,
        eos_token="<|im_end|>",
    )
    src = load_template(cfg)
    assert src.name == "qwen"
    # transformers leaves unset tokens out of special_tokens_map, so the template sees no bos_token at all
    assert src.render_kwargs() == {"eos_token": "<|im_end|>"}
    assert render(src.text, USER, **src.render_kwargs()) == "[user]Hi<|im_end|>"


def test_config_with_named_templates_picks_default_then_tool_use(tmp_path: Path) -> None:
    cfg = _config(
        tmp_path / "tokenizer_config.json",
        eos_token="</s>",
        chat_template=[
            {"name": "default", "template": TEMPLATE},
            {"name": "tool_use", "template": TOOL_TEMPLATE},
        ],
    )
    src = load_template(cfg)
    assert (src.selected, src.text) == ("default", TEMPLATE)
    with_tools = src.for_tools(True)
    assert (with_tools.selected, with_tools.text) == ("tool_use", TOOL_TEMPLATE)
    assert with_tools.for_tools(False).text == TEMPLATE
    assert with_tools.render_kwargs() == {"eos_token": "</s>"}


def test_a_picked_template_name_is_kept_even_with_tools(tmp_path: Path) -> None:
    cfg = _config(
        tmp_path / "tokenizer_config.json",
        chat_template=[
            {"name": "default", "template": TEMPLATE},
            {"name": "tool_use", "template": TOOL_TEMPLATE},
        ],
    )
    pinned = load_template(cfg, template_name="default")
    assert pinned.pinned
    assert pinned.for_tools(True).text == TEMPLATE
    assert load_template(cfg, template_name="tool_use").text == TOOL_TEMPLATE
    with pytest.raises(SourceError, match=r"no template named 'rag'.*default, tool_use"):
        load_template(cfg, template_name="rag")


def test_named_templates_without_default_need_a_pick(tmp_path: Path) -> None:
    cfg = _config(
        tmp_path / "tokenizer_config.json",
        chat_template=[
            {"name": "rag", "template": TEMPLATE},
            {"name": "tool_use", "template": TOOL_TEMPLATE},
        ],
    )
    with pytest.raises(SourceError, match="--template-name"):
        load_template(cfg)
    assert load_template(cfg, template_name="rag").text == TEMPLATE


def test_named_template_choice_matches_transformers(tmp_path: Path) -> None:
    """transformers' get_chat_template: tool_use when tools are given, default otherwise."""
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    named = {"default": TEMPLATE, "tool_use": TOOL_TEMPLATE}
    cfg = _config(
        tmp_path / "tokenizer_config.json",
        bos_token="<s>",
        eos_token="</s>",
        chat_template=[{"name": k, "template": v} for k, v in named.items()],
    )
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=model, bos_token="<s>", eos_token="</s>")
    tok.chat_template = named
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    src = load_template(cfg)
    for given in (None, tools):
        chosen = src.for_tools(given is not None)
        ours = render(chosen.text, USER, tools=given, **chosen.render_kwargs())
        assert ours == tok.apply_chat_template(USER, tools=given, tokenize=False)


def test_config_errors_say_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no chat_template"):
        load_template(_config(tmp_path / "a" / "tokenizer_config.json", eos_token="</s>"))
    with pytest.raises(SourceError, match="not valid JSON"):
        load_template(_write(tmp_path / "b" / "tokenizer_config.json", "{oops"))
    with pytest.raises(SourceError, match="string or a list"):
        load_template(_config(tmp_path / "c" / "tokenizer_config.json", chat_template=42))
    with pytest.raises(SourceError, match="single chat template"):
        load_template(
            _config(tmp_path / "d" / "tokenizer_config.json", chat_template=TEMPLATE), template_name="x"
        )


# --- model folders ----------------------------------------------------------------------------------------


def test_folder_with_chat_template_jinja_and_named_templates(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    _config(folder / "tokenizer_config.json", bos_token="<s>", eos_token="</s>")
    _write(folder / "chat_template.jinja", TEMPLATE)
    _write(folder / "chat_templates" / "tool_use.jinja", TOOL_TEMPLATE)
    src = load_template(folder)
    assert (src.name, src.selected, src.text) == ("model", "default", TEMPLATE)
    assert set(src.named) == {"default", "tool_use"}
    assert src.for_tools(True).text == TOOL_TEMPLATE
    assert src.render_kwargs() == {"bos_token": "<s>", "eos_token": "</s>"}


def test_folder_with_only_a_config_or_only_a_gguf(tmp_path: Path) -> None:
    cfg_folder = tmp_path / "cfg"
    _config(cfg_folder / "tokenizer_config.json", chat_template=TEMPLATE, eos_token="</s>")
    assert load_template(cfg_folder).text == TEMPLATE
    gguf_folder = tmp_path / "gguf"
    gguf_folder.mkdir()
    _make_gguf(gguf_folder / "model-Q4.gguf", template=TEMPLATE)
    assert load_template(gguf_folder).text == TEMPLATE
    with pytest.raises(SourceError, match="holds no chat template"):
        load_template(_empty_dir(tmp_path / "empty"))


def _empty_dir(path: Path) -> Path:
    path.mkdir()
    return path


# --- GGUF -------------------------------------------------------------------------------------------------


def _make_gguf(path: Path, *, template: str | list[dict[str, str]] | None, with_tensor: bool = False) -> Path:
    gguf = pytest.importorskip("gguf")
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_token_list(["<unk>", "<|begin|>", "<|end|>", "hello"])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    if template is not None:
        writer.add_chat_template(template)
    if with_tensor:
        writer.add_tensor("blk.0.weight", np.arange(64, dtype=np.float32).reshape(8, 8))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_gguf_template_and_special_tokens_from_metadata(tmp_path: Path) -> None:
    path = _make_gguf(tmp_path / "model.gguf", template=TEMPLATE, with_tensor=True)
    src = load_template(path)
    assert src.text == TEMPLATE
    assert src.render_kwargs() == {"bos_token": "<|begin|>", "eos_token": "<|end|>", "unk_token": "<unk>"}
    assert render(src.text, USER, **src.render_kwargs()) == "<|begin|>[user]Hi<|end|>"


def test_gguf_named_templates(tmp_path: Path) -> None:
    named = [{"name": "default", "template": TEMPLATE}, {"name": "tool_use", "template": TOOL_TEMPLATE}]
    src = load_template(_make_gguf(tmp_path / "named.gguf", template=named))
    assert src.text == TEMPLATE
    assert src.for_tools(True).text == TOOL_TEMPLATE
    assert load_template(tmp_path / "named.gguf", template_name="tool_use").text == TOOL_TEMPLATE


def test_gguf_without_template_or_not_gguf_at_all(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"no tokenizer\.chat_template"):
        load_template(_make_gguf(tmp_path / "bare.gguf", template=None))
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"GGUF" + b"\x00" * 5)
    with pytest.raises(SourceError, match="not a readable GGUF"):
        load_template(fake)


# --- Hugging Face ids -------------------------------------------------------------------------------------


@pytest.fixture
def empty_hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    hub = pytest.importorskip("huggingface_hub")
    cache = tmp_path / "hub-cache"
    cache.mkdir()
    monkeypatch.setattr(hub.constants, "HF_HUB_CACHE", str(cache))
    return cache


def test_hub_id_offline_says_what_to_pass(empty_hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError) as info:
        load_template("acme/chat-model")
    message = str(info.value)
    assert "HF_HUB_OFFLINE" in message and "pass a local .jinja" in message
    assert "\n" not in message


def test_hub_id_unreachable_fails_fast(empty_hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setattr(source_mod, "HUB_TIMEOUT", 1.0)
    started = time.monotonic()
    with pytest.raises(SourceError, match="unreachable"):
        load_template("acme/chat-model")
    # (not a timing assertion on speed, only that huggingface_hub's retry loop was never entered)
    assert time.monotonic() - started < 20


def test_hub_id_served_from_the_local_cache_while_offline(
    empty_hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshot = empty_hub_cache / "models--acme--chat-model" / "snapshots" / "0123abcd"
    _write(empty_hub_cache / "models--acme--chat-model" / "refs" / "main", "0123abcd")
    _write(snapshot / "chat_template.jinja", TEMPLATE)
    _config(snapshot / "tokenizer_config.json", bos_token="<s>", eos_token="</s>")
    src = load_template("acme/chat-model")
    assert (src.name, src.text) == ("acme/chat-model", TEMPLATE)
    assert src.render_kwargs() == {"bos_token": "<s>", "eos_token": "</s>"}


def test_a_missing_relative_path_is_not_mistaken_for_something_that_exists(
    empty_hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError, match="not a local file or folder"):
        load_template("models/nothere")
    with pytest.raises(SourceError, match="template not found"):
        load_template("models/nothere.jinja")


# --- real tokenizers from ../shared: our source + render == transformers ---------------------------------

_CONVERSATIONS = [
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call00001",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call00001", "content": "cold"},
        {"role": "assistant", "content": "It is cold."},
    ],
]


def _real_tokenizer(folder: Path) -> Any:
    transformers = pytest.importorskip("transformers")
    return transformers.PreTrainedTokenizerFast.from_pretrained(str(folder))


@pytest.mark.parametrize("name", ["qwen3", "llama-3.1", "deepseek-v3"])
def test_config_folder_renders_like_the_real_tokenizer(name: str) -> None:
    folder = shared_path("tokenizers", name)
    src = load_template(folder)
    tok = _real_tokenizer(folder)
    assert src.render_kwargs() == tok.special_tokens_map
    for conv in _CONVERSATIONS:
        for gen in (False, True):
            expected = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=gen)
            assert render(src.text, conv, add_generation_prompt=gen, **src.render_kwargs()) == expected


def test_folder_with_chat_template_jinja_renders_like_the_real_tokenizer(tmp_path: Path) -> None:
    """gpt-oss ships its template as chat_template.jinja beside a config without one (the newer layout)."""
    tokenizer_dir = shared_path("tokenizers", "gpt-oss")
    template = shared_path("templates", "openai-gpt-oss-120b.jinja")
    folder = tmp_path / "gpt-oss"
    folder.mkdir()
    shutil.copy(tokenizer_dir / "tokenizer_config.json", folder / "tokenizer_config.json")
    shutil.copy(template, folder / "chat_template.jinja")
    try:
        os.symlink(tokenizer_dir / "tokenizer.json", folder / "tokenizer.json")
    except OSError:
        shutil.copy(tokenizer_dir / "tokenizer.json", folder / "tokenizer.json")
    src = load_template(folder)
    tok = _real_tokenizer(folder)
    assert src.text == template.read_text(encoding="utf-8")
    assert src.render_kwargs() == tok.special_tokens_map
    conv = _CONVERSATIONS[1]
    kwargs = {"add_generation_prompt": True, "reasoning_effort": "low"}
    assert render(src.text, conv, **kwargs, **src.render_kwargs()) == tok.apply_chat_template(
        conv, tokenize=False, **kwargs
    )


def test_template_source_is_a_value(tmp_path: Path) -> None:
    """Frozen: the TUI and the analyzer share sources across threads."""
    src = TemplateSource(text=TEMPLATE, name="x", origin="y")
    with pytest.raises(AttributeError):
        src.text = "other"  # type: ignore[misc]
    assert src.sha256 == load_template(_write(tmp_path / "x.jinja", TEMPLATE)).sha256
