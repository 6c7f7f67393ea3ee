"""Must-show: a random tiny model under ``tool_choice=required`` always produces a valid call.

Whatever a random model picks, the grammar keeps it on the format: for each of five format families, every
seed's output parses into tool calls whose arguments validate against the tool's JSON schema.  The hand-
written reference specs make this independent of the analyzer; the analysed project templates are checked
too (fewer seeds), so a grammar/parser mismatch on an analysed spec shows up here.
"""

from __future__ import annotations

import jsonschema
import pytest

from workbench.formats import analyze
from workbench.generation.generate import Generator
from workbench.generation.loaded import LoadedModel
from workbench.generation.sampling import SamplingConfig
from workbench.generation.tiny import load_tiny
from workbench.runtime.chat import Message, Tool
from workbench.runtime.spec import FormatSpec
from workbench.template.source import TemplateSource, load_template
from workbench.testing.reference_specs import REFERENCE_SPECS

SEEDS = 50
# Bounded strings, enums and ranged integers keep a random model's arguments short; every one of these
# constraints is enforced by the grammar and checked again by jsonschema.
WEATHER = Tool(
    "get_weather",
    "Get the weather for a city",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1, "maxLength": 12},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "alerts": {"type": "boolean"},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
)
SEARCH = Tool(
    "search",
    "Search the web",
    {"type": "object", "properties": {"q": {"type": "string", "maxLength": 10}}, "required": ["q"]},
)
TOOLS = [WEATHER, SEARCH]
SCHEMAS = {t.name: t.parameters for t in TOOLS}
MESSAGES = [Message("user", "What is the weather in Paris?")]


@pytest.fixture(scope="module")
def tiny() -> LoadedModel:
    return load_tiny(hidden=16)  # the output layer dominates a step at 151k: keep it thin


def failures(tiny: LoadedModel, spec: FormatSpec, template: TemplateSource, seeds: range) -> list[str]:
    out = []
    for seed in seeds:
        gen = Generator(
            tiny,
            spec,
            messages=MESSAGES,
            tools=TOOLS,
            tool_choice="required",
            template=template,
            reasoning=False,
            parallel=False,
            sampling=SamplingConfig(temperature=1.0, seed=seed),
            max_new_tokens=200,
        )
        gen.run_to_end()
        calls = gen.message().message.tool_calls
        problem = "" if calls else "no tool call"
        for call in calls:
            args = call.arguments_value()
            if call.name not in SCHEMAS:
                problem = f"unknown tool {call.name!r}"
            else:
                try:
                    jsonschema.validate(args, SCHEMAS[call.name])
                except jsonschema.ValidationError as exc:
                    problem = f"arguments {args!r} invalid: {exc.message}"
        if problem:
            out.append(f"seed {seed} ({gen.finish_reason}): {problem}: {gen.text!r}")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("family", list(REFERENCE_SPECS))
def test_every_seed_yields_a_schema_valid_call(tiny: LoadedModel, family: str) -> None:
    bad = failures(tiny, REFERENCE_SPECS[family], load_template("chatml-think-tools"), range(SEEDS))
    assert not bad, f"{len(bad)}/{SEEDS} outputs failed:\n" + "\n".join(bad[:5])


@pytest.mark.parametrize(
    "template",
    [
        "chatml-think-tools",
        "deepseek-v31-like",
        "mistral-tool-calls",
        "xml-tagged-args",
        "harmony-channels",
        "llama3-json",
        "pythonic-calls",
    ],
)
def test_analysed_project_templates_yield_schema_valid_calls(tiny: LoadedModel, template: str) -> None:
    source = load_template(template)
    spec = analyze(source).spec
    bad = failures(tiny, spec, source, range(3))
    assert not bad, "\n".join(bad)
