"""The inspector answers "why": the chosen token marked (even outside the top candidates), the allowed
tokens by renormalised probability, the grammar and where the matcher is, "why is this token masked",
jump-forward and trial strings, live with the tiny random model; and a replay says why it cannot."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from tests.test_tui_app import make_app, settle
from tests.test_tui_stepping import live_app, start
from workbench.generation.step import Candidate
from workbench.tui.demo import demo_parser, demo_steps
from workbench.tui.inspect_views import allowed_rows, candidate_rows
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.modals import AskScreen

pytestmark = pytest.mark.anyio
SIZE = (120, 36)


def cell(table: DataTable[Any], row: int, col: int) -> str:
    return str(table.get_row_at(row)[col])


# ---------------------------------------------------------------------- pure rows
def test_the_chosen_token_is_marked_and_added_when_outside_the_top_candidates() -> None:
    step = next(s for s in demo_steps() if s.candidates and s.candidates[0].token_id != s.token_id)
    rows = candidate_rows(step)
    assert [r.chosen for r in rows].index(True) == [c.token_id for c in step.candidates].index(step.token_id)
    outside = Candidate(424242, "far", 1.5, 0.0001, True)
    hidden = replace(step, token_id=424242, token_text="far", chosen=outside)
    rows = candidate_rows(hidden)
    assert len(rows) == len(step.candidates) + 1 and rows[-1].chosen
    assert rows[-1].cells[0].plain == "»" and rows[-1].cells[3].plain == "424242"
    assert rows[-1].cells[5].plain == "0.000" and rows[-1].cells[2].plain == "chosen"


def test_the_allowed_list_is_ranked_by_renormalised_probability() -> None:
    step = next(s for s in demo_steps() if s.constrained and len(s.allowed_top) > 1)
    rows = allowed_rows(step)
    probs = [float(r.cells[3].plain) for r in rows]
    assert probs == sorted(probs, reverse=True) and sum(probs) == pytest.approx(1.0, abs=0.01)


# ---------------------------------------------------------------------- replay
async def test_the_candidates_table_highlights_the_chosen_row_not_row_one() -> None:
    app = make_app(start_mode="inspector")
    steps = demo_steps()
    at = next(i for i, s in enumerate(steps) if s.candidates[0].token_id != s.token_id)
    async with app.run_test(size=SIZE) as pilot:
        app.install_replay(steps[: at + 1], demo_parser, label="demo replay")
        await settle(app, pilot)
        app.action_run()
        await settle(app, pilot)
        table = app.screen.query_one("#candidates", DataTable)
        assert table.cursor_row == [c.token_id for c in steps[at].candidates].index(steps[at].token_id) > 0
        assert cell(table, table.cursor_row, 2) == "chosen"
        allowed = app.screen.query_one("#allowed", DataTable)
        assert str(allowed.border_title).startswith(f"allowed: {steps[at].allowed_count:,} of")


async def test_a_replay_says_it_has_no_grammar_to_ask() -> None:
    app = make_app(start_mode="inspector")
    async with app.run_test(size=SIZE) as pilot:
        app.install_replay(demo_steps()[:5], demo_parser, label="demo replay")
        await settle(app, pilot)
        app.action_step()
        await settle(app, pilot)
        for key in ("w", "t", "j"):
            before = len(app.notes)
            await pilot.press(key)
            await settle(app, pilot)
            assert "no grammar matcher" in " ".join(app.notes[before:]), key
        screen = app.screen
        assert isinstance(screen, InspectorScreen) and "a replay has no live grammar" in screen.grammar_plain


# ---------------------------------------------------------------------- live
async def test_the_grammar_pane_says_where_the_matcher_is_and_shows_the_ebnf() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app, mode="inspector")
        await start(app, pilot)
        await pilot.press("space")
        await settle(app, pilot)
        await settle(app, pilot)  # the position is asked once the step is drawn
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        assert "answer phase · answer grammar" in screen.grammar_plain
        assert "expects:" in screen.grammar_plain and "tokens allowed" in screen.grammar_plain
        await pilot.press("g")
        await settle(app, pilot)
        assert "::=" in screen.grammar_plain and screen.query_one("#insp-right").display is False
        await pilot.press("g")
        await settle(app, pilot)
        assert "::=" not in screen.grammar_plain


async def test_why_masked_names_what_the_grammar_expects_instead() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app, mode="inspector")
        await start(app, pilot)  # required: the answer opens reasoning or the call, nothing else
        await pilot.press("w")
        await settle(app, pilot)
        assert isinstance(app.screen, AskScreen)
        app.screen.query_one(Input).value = "Hello"
        await pilot.press("enter")
        await settle(app, pilot)
        answer = app.workspace.grammar_answer
        assert "'Hello'" in answer and "is masked" in answer and "rejects 'H'" in answer
        assert "It expects" in answer and "lead grammar" in answer
        assert not app.workspace.grammar_answer_ok
        assert len(app.workspace.steps) == 0  # asking moved nothing


async def test_j_applies_the_jump_forward_string_and_t_tests_a_string() -> None:
    app = make_app(model="tiny", load_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await live_app(pilot, app, mode="inspector")
        await start(app, pilot)
        app.action_force()
        await settle(app, pilot)
        app.screen.query_one(Input).value = "<tool_call>"
        await pilot.press("enter")
        await settle(app, pilot)
        await settle(app, pilot)
        jump = app.workspace.grammar_position.jump_forward
        assert jump.startswith('\n{"name": "get_weather"')
        await pilot.press("j")
        await settle(app, pilot)
        text = "".join(s.fed_text for s in app.workspace.steps.all())
        assert text.endswith("<tool_call>" + jump)
        assert all(s.forced for s in app.workspace.steps.all())
        await pilot.press("t")
        await settle(app, pilot)
        app.screen.query_one(Input).value = 'Paris"}x'
        await pilot.press("enter")
        await settle(app, pilot)
        assert "rejected at char 7" in app.workspace.grammar_answer


def test_the_grammar_pane_reads_the_live_position_else_the_steps_record() -> None:
    from workbench.generation.why import GrammarPosition
    from workbench.tui.inspect_views import grammar_text

    step = next(s for s in demo_steps() if s.constrained)
    recorded = grammar_text(step, note="the live grammar answers at the newest step (end)").plain
    assert f"{step.allowed_count:,} of {step.vocab_size:,} allowed" in recorded
    assert "the live grammar answers at the newest step" in recorded
    live = GrammarPosition(
        phase="tool",
        grammar="section",
        masked=True,
        lost=False,
        ebnf='root ::= "x"',
        inside="<tool_call>",
        jump_forward='\n{"name": ',
        allowed_count=1,
        vocab_size=10,
        first_chars=(("\n", 1),),
        free_until="",
    )
    text = grammar_text(step, live=live, answer="'a' is masked", answer_ok=False).plain
    assert "tool phase · section grammar" in text and "so far in it: <tool_call>" in text
    assert "exactly '\\n{\"name\": ' (jump-forward)" in text and "answer: 'a' is masked" in text
    assert "root ::=" not in text and "root ::=" in grammar_text(step, live=live, expanded=True).plain


def test_the_step_log_keeps_the_held_back_text_until_the_next_step_or_a_reset() -> None:
    from workbench.tui.steps import StepLog

    log = StepLog()
    steps = demo_steps()[:2]
    log.record(steps[0], None, pending="<tool_call>\n{")
    assert log.pending == "<tool_call>\n{"
    log.record(steps[1], None)
    assert log.pending == ""
    log.record(steps[1], None, pending="<tool")
    log.truncate(1, pending="")
    assert log.pending == "" and len(log) == 1
    log.record(steps[1], None, pending="x")
    log.reset()
    assert log.pending == ""
