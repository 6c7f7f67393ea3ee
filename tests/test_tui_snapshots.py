"""Snapshot tests: every screen at a fixed size, with the real analysis of the default template and the
demo step stream.

Update after an intended visual change with ``pytest tests/test_tui_snapshots.py --snapshot-update`` and
look at the new SVGs in ``tests/__snapshots__/`` before accepting them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_tui_app import demo_done
from workbench.tui.app import WorkbenchApp
from workbench.tui.demo import demo_parser, demo_source, demo_steps

SIZE = (120, 36)
# Stop inside the tool call: a constrained step with masked candidates.
STEPS = 72


def make_app(mode: str) -> WorkbenchApp:
    source = demo_source()
    return WorkbenchApp(source, load_model=False, analyze=False, start_mode=mode, replay_delay=0.0)


def prepare(steps: int = STEPS, keys: tuple[str, ...] = ()) -> Any:
    async def run_before(pilot: Any) -> None:
        app: WorkbenchApp = pilot.app
        app.post_message(demo_done())
        app.install_replay(demo_steps()[:steps], demo_parser, label="demo replay")
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        if keys:
            await pilot.press(*keys)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("mode", ["template", "analysis", "generate", "inspector", "export"])
def test_screen_snapshot(snap_compare: Any, mode: str) -> None:
    keys = ("down",) if mode == "analysis" else ()
    assert snap_compare(make_app(mode), terminal_size=SIZE, run_before=prepare(keys=keys))


def test_help_snapshot(snap_compare: Any) -> None:
    assert snap_compare(
        make_app("inspector"), terminal_size=SIZE, run_before=prepare(keys=("question_mark",))
    )


def test_inspector_snapshot_small_terminal(snap_compare: Any) -> None:
    assert snap_compare(make_app("inspector"), terminal_size=(80, 24), run_before=prepare())


def _grammar_position() -> Any:
    """A grammar position as the live generator reports it (built by hand: a snapshot must not depend on
    a model's speed), with the real EBNF of the demo format's tool section."""
    from workbench.generation.why import GrammarPosition
    from workbench.runtime.chat import load_tools
    from workbench.runtime.grammar import build_grammar
    from workbench.testing.reference_specs import QWEN3_LIKE
    from workbench.tui.workspace import DEFAULT_TOOLS

    plan = build_grammar(QWEN3_LIKE, load_tools(DEFAULT_TOOLS), tool_choice="auto", reasoning=False)
    return GrammarPosition(
        phase="tool",
        grammar="section",
        masked=True,
        lost=False,
        ebnf=plan.ebnf("section"),
        inside='<tool_call>\n{"name": "get_weather", "arguments": {"cit',
        jump_forward='y": "',
        allowed_count=2,
        vocab_size=151936,
        first_chars=(("y", 2),),
        free_until="",
    )


def prepare_grammar(keys: tuple[str, ...] = ()) -> Any:
    async def run_before(pilot: Any) -> None:
        from workbench.tui.messages import GrammarAnswered

        await prepare()(pilot)
        app: WorkbenchApp = pilot.app
        steps = app.workspace.steps
        app.post_message(GrammarAnswered("where", len(steps), steps.epoch, position=_grammar_position()))
        app.post_message(
            GrammarAnswered(
                "why",
                len(steps),
                steps.epoch,
                text="'{' (id 90) is masked: the section grammar does not accept its text here: it takes 0 "
                "of 1 characters and rejects '{'. It expects exactly 'y\": \"' (jump-forward)",
                ok=False,
            )
        )
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
        await pilot.pause()

    return run_before


def test_inspector_grammar_pane_snapshot(snap_compare: Any) -> None:
    assert snap_compare(make_app("inspector"), terminal_size=SIZE, run_before=prepare_grammar())


def test_inspector_grammar_ebnf_snapshot(snap_compare: Any) -> None:
    assert snap_compare(make_app("inspector"), terminal_size=SIZE, run_before=prepare_grammar(("g",)))
