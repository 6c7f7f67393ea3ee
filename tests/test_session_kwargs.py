"""Sessions record the template kwargs the prompt was rendered with (issue 10's switches): ``generate --kw
... --save-session`` writes them, ``replay`` shows them and re-renders the prompt with them, and a session
written before they existed still loads (with none).

effort-switches.jinja's documented prompt: "[ASSISTANT]" and, with reasoning_effort "none",
"[ASSISTANT][THINK][/THINK]"; its system text says the effort.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import PROJECT_TEMPLATES, REPO
from workbench.cli import app
from workbench.session import SessionError, load_session, prompt_check, rerender_prompt, session_from_dict

EFFORT = PROJECT_TEMPLATES / "new-formats" / "effort-switches.jinja"
runner = CliRunner()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One generate run with the tiny random model and two switches, saved as a session."""
    folder = tmp_path_factory.mktemp("kw")
    messages = folder / "messages.json"
    messages.write_text(json.dumps([{"role": "user", "content": "Six times seven?"}]), encoding="utf-8")
    saved = folder / "run.json"
    args = ["generate", "--template", str(EFFORT), "--model", "tiny", "--messages", str(messages)]
    args += ["--max-new-tokens", "4", "--kw", "reasoning_effort=none", "--kw", "clear_thinking=false"]
    result = runner.invoke(app, [*args, "--save-session", str(saved), "--json"])
    assert result.exit_code == 0, result.output
    return saved


def test_generate_records_the_template_kwargs(recorded: Path) -> None:
    session = load_session(recorded)
    assert session.template_kwargs == {
        "enable_thinking": True,
        "reasoning_effort": "none",
        "clear_thinking": False,
    }
    assert session.prompt.endswith("[ASSISTANT][THINK][/THINK]")
    assert "Reasoning: none" in session.prompt


def test_replay_shows_the_kwargs_and_rerenders_the_same_prompt(recorded: Path) -> None:
    data = json.loads(runner.invoke(app, ["replay", str(recorded), "--json"]).stdout)
    assert data["template_kwargs"]["reasoning_effort"] == "none"
    assert data["prompt_check"] == {"status": "matches", "detail": ""}
    text = runner.invoke(app, ["replay", str(recorded)]).stdout
    assert 'template kwargs: enable_thinking=true reasoning_effort="none" clear_thinking=false' in text
    assert "prompt re-rendered with them: matches" in text


def test_without_the_kwargs_the_rerendered_prompt_differs(recorded: Path) -> None:
    """The re-render really uses them: dropped, the default effort writes another prompt."""
    session = dataclasses.replace(load_session(recorded), template_kwargs={})
    text, why = rerender_prompt(session)
    assert why == "" and text is not None and text.endswith("[ASSISTANT]")
    check = prompt_check(session)
    assert check["status"] == "differs" and "'low[/SYSTEM]" in check["detail"]


@pytest.mark.parametrize(
    "name", ["qwen3-tool-call.json", "harmony-exchange.json", "deepseek-reasoning-call.json"]
)
def test_old_sessions_load_without_kwargs_and_still_rerender(name: str) -> None:
    path = REPO / "sessions" / name
    assert "template_kwargs" not in json.loads(path.read_text(encoding="utf-8"))
    session = load_session(path)
    assert session.template_kwargs == {}
    assert prompt_check(session)["status"] == "matches"
    assert "template_kwargs" not in session.to_dict()  # saved back unchanged


def test_kwargs_must_be_an_object() -> None:
    data = json.loads((REPO / "sessions" / "qwen3-tool-call.json").read_text(encoding="utf-8"))
    data["template_kwargs"] = ["reasoning_effort=none"]
    with pytest.raises(SessionError, match="template_kwargs"):
        session_from_dict(data)


def test_a_session_without_template_text_is_not_rechecked(recorded: Path) -> None:
    session = dataclasses.replace(
        load_session(recorded), template=dataclasses.replace(load_session(recorded).template, text="")
    )
    check = prompt_check(session)
    assert check["status"] == "not checked" and "no template text" in check["detail"]
