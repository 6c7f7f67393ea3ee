"""Regenerate the example sessions in ``sessions/`` with the real engine.

Each example runs the real :class:`~workbench.generation.generate.Generator` (tiny random Qwen3-style model,
the real Qwen3 tokenizer from ``../shared`` when present, grammar constraint on) and *forces* a scripted
answer token by token: the model's logits, the grammar's masks, the candidates and the parser's events are all
real, while the answer is one a person can read.  The recorded parsed message is the generator's own parse;
the tests replay every session offline and require the same message.

    .venv/bin/python scripts/make_example_sessions.py [--out sessions]

Three exchanges, one per format family the issue asks for: a Qwen3-like tool call (chatml-think-tools), a
DeepSeek-V3.1-like reasoning + call, and a Harmony (gpt-oss-like) analysis + call.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

from workbench.runtime.chat import Message, Tool  # noqa: E402
from workbench.session import ModelRecord, save_session, session_from_generation  # noqa: E402

WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Unit."},
        },
        "required": ["city"],
    },
)


@dataclass(frozen=True)
class Example:
    name: str
    template: str
    note: str
    user: str
    answer: str  # the scripted model output (stop token excluded)


EXAMPLES = (
    Example(
        name="qwen3-tool-call",
        template="chatml-think-tools",
        note="Qwen3-like: short reasoning, then one tool call (scripted answer, real engine steps).",
        user="What's the weather in Paris?",
        answer=(
            "<think>\nThe user wants the current weather in Paris, so I call get_weather.\n</think>\n\n"
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n'
            "</tool_call>"
        ),
    ),
    Example(
        name="deepseek-reasoning-call",
        template="deepseek-v31-like",
        note="DeepSeek-V3.1-like: the prompt opens <think>; reasoning, then a tool call.",
        user="Is it raining in Berlin right now?",
        answer=(
            "The user asks about rain in Berlin. I should check the weather tool.</think>"
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
            '{"city": "Berlin"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
        ),
    ),
    Example(
        name="harmony-exchange",
        template="harmony-channels",
        note="Harmony (gpt-oss-like): analysis channel, then a commentary-channel call to a function.",
        user="How warm is it in Tokyo?",
        answer=(
            "<|channel|>analysis<|message|>Need the temperature in Tokyo; call get_weather.<|end|>"
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
            '{"city": "Tokyo", "unit": "celsius"}<|call|>'
        ),
    ),
)


def record(example: Example, loaded: Any) -> Any:
    """Run the generator on the example, forcing the scripted answer; return the session."""
    from workbench.formats import analyze
    from workbench.generation.generate import ForceRefused, Generator
    from workbench.template.source import load_template

    source = load_template(example.template)
    spec = analyze(source).spec
    messages = [Message(role="user", content=example.user)]
    tools = [WEATHER]
    tokenizer = loaded.tokenizer
    ids = list(tokenizer.encode(example.answer, add_special_tokens=False))
    constrain = True
    for attempt in (True, False):
        constrain = attempt
        gen = Generator(
            loaded,
            spec,
            messages=messages,
            tools=tools,
            template=source,
            constrain=constrain,
            reasoning=True,
            max_new_tokens=len(ids) + 8,
            top_candidates=10,
        )
        try:
            for token in ids:
                gen.force(token)
            break
        except ForceRefused as exc:
            if not attempt:
                raise
            print(f"  {example.name}: a scripted token was refused ({exc}); recording unconstrained")
    stop = next((i for i in gen.stop_ids), None)
    if stop is not None and not gen.finished:
        try:
            gen.force(stop)
        except Exception as exc:  # a session without its stop step still replays
            print(f"  {example.name}: stop token not recorded ({exc})")
    result = gen.message()
    texts = fed_texts(gen, loaded)
    reasoning_opened = gen.plan.reasoning is not None and gen.plan.reasoning.starts_inside
    settings = {
        "constrain": constrain,
        "tool_choice": "auto",
        "sampling": "scripted: every token forced (the model's candidates are still recorded)",
        "enable_thinking": gen.reasoning,
        "thinking_opened": reasoning_opened,
        "parallel_tool_calls": gen.plan.parallel,
        "seed": 0,
    }
    return session_from_generation(
        template_text=source.text,
        template_name=source.name,
        spec=spec,
        model=ModelRecord(
            name=loaded.name,
            ref="tiny",
            vocab_size=int(loaded.vocab_size),
            tokenizer=str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__),
        ),
        messages=messages,
        tools=tools,
        settings=settings,
        prompt=gen.prompt,
        steps=list(gen.steps),
        parsed=result.message,
        note=example.note,
        step_texts=texts,
    )


def fed_texts(gen: Any, loaded: Any) -> list[str]:
    """The text each step gave the parser, rebuilt from the tokens' bytes as the generator does it (a
    character split across tokens completes on its last token; the stop token adds nothing).  Checked
    against the generator's own answer text, so a drift in that rule fails loudly here."""
    import codecs

    token_bytes = loaded.token_bytes()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    texts = []
    for step in gen.steps:
        stop = step.finished and step.token_id in gen.stop_ids
        texts.append(decoder.decode(b"" if stop else token_bytes[step.token_id]))
    if "".join(texts) != gen.text:
        raise SystemExit("the per-step texts do not add up to the generator's answer text")
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "sessions", help="folder to write the sessions to")
    args = parser.parse_args(argv)

    import torch

    from workbench.generation.tiny import load_tiny

    torch.set_num_threads(1)
    loaded = load_tiny(seed=0)
    args.out.mkdir(parents=True, exist_ok=True)
    for example in EXAMPLES:
        session = record(example, loaded)
        path = save_session(args.out / f"{example.name}.json", session)
        parsed = json.dumps(session.parsed, ensure_ascii=False)
        print(f"wrote {path} ({len(session.steps)} steps): {parsed[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
