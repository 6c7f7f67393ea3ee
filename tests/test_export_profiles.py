"""Response-template profiles: each keeps its consumer's rules, and the portable one runs on Python's ``re``.

These need no engines: the rules are checked on the built templates, the portable patterns with Python's
``re``, and the parses with transformers in this venv (through the same harness the engines run).  The
engines' own validators and parsers are in ``tests/engines``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import SHARED
from tests.test_export_response_template import (
    EXPRESSIBLE,  # the project templates a response template can express
)
from workbench.cli import app
from workbench.engines.response_proof import Job, engine_proof, run_harness
from workbench.engines.response_rules import PROFILES, SERVING_FIELDS, patterns, portability_problems
from workbench.engines.tokenizers import tokenizer_for
from workbench.export import Unsupported, build_response_template
from workbench.formats import analyze
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template
from workbench.validate import validate

# Mistral's calls have no closing marker: only a JSON-aware end (regex-module only) tells the end of the
# output from the end of a streamed chunk, so the portable profile refuses them.
PORTABLE = [n for n in EXPRESSIBLE if n != "mistral-tool-calls"]


def spec_of(name: str) -> FormatSpec:
    return analyze(load_template(name)).spec


@pytest.mark.parametrize("profile", ["vllm", "sglang"])
@pytest.mark.parametrize("name", EXPRESSIBLE)
def test_serving_profiles_keep_the_engines_start_up_rules(name: str, profile: str) -> None:
    template = build_response_template(spec_of(name), profile)
    fields = template["fields"]
    assert set(fields) <= set(SERVING_FIELDS)
    for region in ("thinking", "content"):
        field = fields.get(region, {})
        assert "join" not in field and "transform" not in field
        assert field.get("content", "text") == "text"
    if profile != "vllm" and "tool_calls" in fields:
        assert "open" in fields["tool_calls"] or "open_pattern" in fields["tool_calls"]


@pytest.mark.parametrize("name", PORTABLE)
def test_portable_patterns_compile_with_pythons_re_and_use_only_js_features(name: str) -> None:
    template = build_response_template(spec_of(name), "portable")
    assert set(template["fields"]) <= set(SERVING_FIELDS)
    assert all("join" not in template["fields"].get(f, {}) for f in ("thinking", "content"))
    for where, pattern in patterns(template):
        re.compile(pattern)
        assert portability_problems(pattern) == [], where


@pytest.mark.parametrize(
    ("pattern", "feature"),
    [
        (r"\G(?:x)\K</a>", r"\G"),
        (r"(?(DEFINE)(?P<v>a|\[(?&v)\]))(?&v)", "DEFINE"),
        (r"a*+b", "possessive"),
        (r"(?>ab)c", "atomic"),
        (r"(?<!<think>\s*)\Z", "re refuses"),
        (r"(?s)a.b", "inline flags"),
        (r"x\Z", r"\Z"),
    ],
)
def test_portability_names_each_feature_js_or_re_lacks(pattern: str, feature: str) -> None:
    problems = portability_problems(pattern)
    assert any(feature in p for p in problems), problems


def test_calls_without_a_closing_marker_are_not_portable_and_say_why() -> None:
    with pytest.raises(Unsupported, match="no closing marker"):
        build_response_template(spec_of("mistral-tool-calls"), "portable")
    assert (
        "|\\Z"
        in build_response_template(spec_of("mistral-tool-calls"), "sglang")["fields"]["tool_calls"][
            "close_pattern"
        ]
    )


def test_ordinary_patterns_are_portable() -> None:
    for pattern in (r"<tool_call>\s*", r"(?P<name>[^\s<>]+?)", r"(?<=\})(?=\s*(?![\s\S]))", r"a?b+c*?[+*]"):
        assert portability_problems(pattern) == [], pattern


def test_the_transformers_profile_keeps_the_rich_template() -> None:
    template = build_response_template(spec_of("chatml-think-tools"))
    assert "reasoning_content" in template["fields"]
    assert template["fields"]["content"]["join"] == ""
    assert r"\K" in template["fields"]["tool_calls"]["close_pattern"]


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(Exception, match="unknown profile"):
        build_response_template(spec_of("chatml-think-tools"), "ollama")


@pytest.mark.parametrize("profile", PROFILES)
def test_an_inexpressible_format_is_named_in_every_profile(profile: str) -> None:
    with pytest.raises(Unsupported, match="pythonic calls"):
        build_response_template(spec_of("pythonic-calls"), profile)


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["transformers", "portable"])
def test_transformers_parses_every_round_trip_one_shot_and_token_streamed(profile: str) -> None:
    """Through the harness with this venv's interpreter: it needs only transformers for this consumer."""
    jobs, specs = [], {}
    for name in EXPRESSIBLE if profile == "transformers" else PORTABLE:
        source = load_template(name)
        spec = analyze(source).spec
        template = build_response_template(spec, profile)
        if not (SHARED / "tokenizers").is_dir():
            pytest.skip("../shared/tokenizers not present")
        tokenizer = tokenizer_for(name)
        jobs.append(Job(name, template, tokenizer, validate(source, spec)))
        specs[name] = spec
    answer = run_harness(jobs, ["transformers"], python=sys.executable)
    for job, got in zip(jobs, answer["jobs"], strict=True):
        proof = engine_proof(job, got, "transformers", specs[job.key], answer["versions"])
        assert proof.passed, [f"{c.id}: {c.detail}" for c in proof.cases if c.status == "fail"]


@pytest.mark.usefixtures("no_engines")  # what is written; the engines' proofs: tests/engines/
def test_the_cli_writes_the_profile_asked_for_with_provenance(tmp_path: Path) -> None:
    out = tmp_path / "rt.json"
    result = CliRunner().invoke(
        app,
        [
            "export",
            "chatml-think-tools",
            "--target",
            "response-template",
            "--profile",
            "vllm",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert "thinking" in written["response_template"]["fields"]
    provenance = written["response_template_provenance"]
    assert provenance["profile"] == "vllm" and len(provenance["template_sha256"]) == 64
    assert provenance["workbench_version"] and "transformers" in provenance["proven_with"]


@pytest.mark.usefixtures("no_engines")  # the profile is chosen from the spec alone (choose_profile)
@pytest.mark.parametrize(("name", "profile"), [("llama3-json", "portable"), ("mistral-tool-calls", "sglang")])
def test_the_cli_defaults_to_the_strictest_profile_that_expresses_the_format(
    tmp_path: Path, name: str, profile: str
) -> None:
    out = tmp_path / "rt.json"
    result = CliRunner().invoke(app, ["export", name, "--target", "response-template", "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["response_template_provenance"]["profile"] == profile


def test_the_cli_says_which_feature_a_profile_lacks_and_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "rt.json"
    result = CliRunner().invoke(
        app,
        ["export", "pythonic-calls", "--target", "response-template", "--profile", "sglang", "-o", str(out)],
    )
    assert result.exit_code == 1
    assert "pythonic calls" in result.output and not out.exists()
