"""``Step.text``: what each step fed the parser, which is not always the token's own text.

A character split across two byte-level tokens has no text of its own on either token (each decodes to a
replacement character); the generator feeds "" and then the whole character.  A stop token feeds nothing.
Sessions replay by feeding exactly this text, so the generator must record it and old step dicts (written
before the field existed) must still load.
"""

from __future__ import annotations

import pytest

from workbench.generation.generate import Generator
from workbench.generation.loaded import LoadedModel
from workbench.generation.step import Step
from workbench.generation.tiny import load_tiny
from workbench.runtime.chat import Message
from workbench.template.source import load_template
from workbench.testing.reference_specs import QWEN3_LIKE

E_ACUTE = "é".encode()  # two bytes: b"\xc3\xa9"


@pytest.fixture(scope="module")
def tiny() -> LoadedModel:
    return load_tiny()


def _byte_token(tiny: LoadedModel, data: bytes) -> int:
    ids = [i for i, b in enumerate(tiny.token_bytes()) if b == data]
    if not ids:
        pytest.skip(f"the tiny tokenizer has no single-byte token for {data!r}")
    return ids[0]


def _plain_generator(tiny: LoadedModel) -> Generator:
    return Generator(
        tiny,
        QWEN3_LIKE,
        messages=[Message("user", "Say café.")],
        template=load_template("chatml-think-tools"),
        tool_choice="none",
        reasoning=False,
        max_new_tokens=20,
    )


def test_a_character_split_across_tokens_is_fed_once_on_its_last_byte(tiny: LoadedModel) -> None:
    gen = _plain_generator(tiny)
    first = gen.force(_byte_token(tiny, E_ACUTE[:1]))
    second = gen.force(_byte_token(tiny, E_ACUTE[1:]))
    assert first.token_text == second.token_text == "\ufffd"  # neither byte is a character on its own
    assert (first.text, second.text) == ("", "é")
    assert first.fed_text + second.fed_text == gen.text == "é"


def test_a_stop_token_feeds_the_parser_nothing(tiny: LoadedModel) -> None:
    gen = _plain_generator(tiny)
    stop = tiny.single_token_id("<|im_end|>")
    assert stop is not None and stop in gen.stop_ids
    step = gen.force(stop)
    assert step.finished and step.token_text == "<|im_end|>"
    assert step.text == "" and gen.text == ""


def test_every_generated_step_records_its_text(tiny: LoadedModel) -> None:
    gen = _plain_generator(tiny)
    steps = gen.run(5)
    assert steps and all(s.text is not None for s in steps)
    assert "".join(s.fed_text for s in steps) == gen.text


def test_step_dicts_without_text_still_load_and_fall_back_to_the_token_text() -> None:
    old = {"index": 0, "token_id": 7, "token_text": "hi", "allowed_count": 3, "vocab_size": 10}
    step = Step.from_dict(old)
    assert step.text is None and step.fed_text == "hi"
    assert "text" not in step.to_dict()  # unknown text is not written as null


def test_recorded_text_round_trips_through_to_dict() -> None:
    step = Step(index=1, token_id=9, token_text="\ufffd", allowed_count=1, vocab_size=10, text="é")
    data = step.to_dict()
    assert data["text"] == "é"
    assert Step.from_dict(data) == step
    empty = Step(index=2, token_id=3, token_text="<|im_end|>", allowed_count=1, vocab_size=10, text="")
    assert Step.from_dict(empty.to_dict()).fed_text == ""  # "" is a recorded text, not a missing one
