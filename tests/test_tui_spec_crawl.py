"""The spec fields crawl (issue 20: `e` on `tools.pattern` raised `TypeError: Object of type CallPattern is
not JSON serializable` and ended the app, losing every edit).

Every distinct row (its path and its value: all the editor is opened with) of the project and the shared
templates goes through the editor's own code: the text it opens with, the widget that text goes in, and
submitting it unchanged, which must be no edit at all.  In the running app, `e` on a row and `ctrl+s` in
the dialog, for every distinct path and every value with non-ASCII text: the app must still run, the
dialog must close, the value must be intact and the spec not even marked edited.

The app crawl took every distinct (path, value) row before (340 rows, about a second each in Textual's
rendering, 6 of the suite's 32 minutes): rows that differ only in an ASCII value open the same dialog
with other text in the same widget, which the pure test checks for every row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Input, TextArea

from tests.conftest import PROJECT_TEMPLATES, shared_templates
from tests.test_analysis_helpers import analysis_of
from tests.test_tui_app import make_app, settle
from workbench.runtime.spec import FormatSpec, to_plain
from workbench.tui.screens.analysis import AnalysisScreen
from workbench.tui.spec_fields import apply_edit, editor_kind, editor_text, spec_rows

pytestmark = pytest.mark.anyio
SIZE = (120, 36)

PROJECT = [
    *sorted(PROJECT_TEMPLATES.glob("*.jinja")),
    *sorted((PROJECT_TEMPLATES / "new-formats").glob("*.jinja")),
]


def row_value(spec: FormatSpec, key: str) -> str:
    """A row's value as text: what the dialog is opened with besides the row's path."""
    return json.dumps(to_plain(spec.value_at(key)), sort_keys=True)


async def crawl(
    paths: list[Path], only: str = "", seen: set[str] | None = None, rows: set[tuple[str, str]] | None = None
) -> int:
    """Open every row (or every row whose path starts with ``only``; with ``seen``, every row whose path no
    earlier template had, adding it; with ``rows``, the rows whose ``(template name, path)`` is in it) of
    every template's spec table and submit it unchanged; the rows crawled."""
    app = make_app(start_mode="analysis")
    crawled = 0
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for path in paths:
            spec: FormatSpec = analysis_of(str(path)).spec
            ws = app.workspace
            ws.spec = ws.base_spec = spec
            app.changed("spec")
            await pilot.pause()
            table = app.screen.query_one("#markers", DataTable)
            keys = [str(k.value) for k in table.rows]
            assert keys == [r.path for r in spec_rows(spec, spec)], path.name
            for row, key in enumerate(keys):
                if not key.startswith(only) or (seen is not None and key in seen):
                    continue
                if rows is not None and (str(path), key) not in rows:
                    continue
                if seen is not None:
                    seen.add(key)
                table = app.screen.query_one("#markers", DataTable)
                table.focus()
                table.move_cursor(row=row)
                await pilot.press("e")
                assert type(app.screen).__name__ == "EditFieldScreen", (path.name, key)
                await pilot.press("ctrl+s")  # submits a one-line or a document editor alike
                assert app.is_running, (path.name, key)
                assert isinstance(app.screen, AnalysisScreen), (path.name, key, app.errors)
                assert ws.spec == spec, (path.name, key)  # the value intact, not even marked edited
                assert to_plain(ws.spec.value_at(key)) == to_plain(spec.value_at(key))
                crawled += 1
        assert not app.errors
    return crawled


async def test_every_row_of_a_call_pattern_opens_and_submits_unchanged() -> None:
    """The quick form (every run): the call pattern's rows of a template whose pattern has argument
    variants (the full crawls below are marked slow: about a second a row on a loaded machine)."""
    typed = PROJECT_TEMPLATES / "new-formats" / "typed-attr-args.jinja"
    assert analysis_of(str(typed)).spec.tools.pattern.arguments  # nested rows to crawl
    assert await crawl([typed], only="tools.pattern") >= 15


#: The app crawl's rows in two parts, so that pytest's workers crawl them side by side.
PARTS = 2


def templates() -> list[Path]:
    """The project templates, then the shared ones (none when ../shared is absent)."""
    return [*PROJECT, *shared_templates()]


def distinct_rows() -> dict[tuple[str, str], tuple[str, str]]:
    """Each distinct row -- its path and its value, which are all the editor is opened with -- and the
    first template that has it (template path, row path)."""
    first: dict[tuple[str, str], tuple[str, str]] = {}
    for path in templates():
        spec = analysis_of(str(path)).spec
        for row in spec_rows(spec, spec):
            first.setdefault((row.path, row_value(spec, row.path)), (str(path), row.path))
    return first


def app_rows() -> set[tuple[str, str]]:
    """The rows crawled in the app: the first row of each distinct path, and each distinct row whose
    editor text is not ASCII (wide and full-width markers in the widgets)."""
    chosen: dict[str, tuple[str, str]] = {}
    for (key, value), where in distinct_rows().items():
        chosen.setdefault(key, where)
        if not editor_text(json.loads(value)).isascii():
            chosen[f"{key} {value}"] = where
    return set(chosen.values())


def part_rows(part: int) -> set[tuple[str, str]]:
    ordered = sorted(app_rows())
    return set(ordered[part::PARTS])


class Widgets(App[None]):
    """The dialog's two editor widgets, for checking what they give back."""

    def compose(self) -> ComposeResult:
        yield Input(id="line")
        yield TextArea(id="document", soft_wrap=True)


async def test_every_distinct_row_opens_and_submits_unchanged_in_the_editors_code() -> None:
    """Every distinct row of every template through the editor's code: the editor's kind and text, the
    widget's text (the dialog's `Input` for a line, its `TextArea` for a document, given the text and read
    back), and submitting the text unchanged (no edit; the text reads back as the value)."""
    rows = distinct_rows()
    assert len(rows) >= 300
    app = Widgets()
    async with app.run_test():
        line, document = app.query_one("#line", Input), app.query_one("#document", TextArea)
        for (key, _value), (name, _) in rows.items():
            spec = analysis_of(name).spec
            row = next(r for r in spec_rows(spec, spec) if r.path == key)
            value = spec.value_at(key)
            text = editor_text(value)
            where = (Path(name).name, key)
            if editor_kind(value) == "line":
                line.value = text
                assert "\n" not in text and line.value == text, where
            else:
                document.load_text(text)
                assert document.text == text, where
            assert json.loads(text) == to_plain(value), where
            assert apply_edit(spec, key, text, row.allowed) is None, where
            if row.allowed:
                assert to_plain(value) in row.allowed, where


def test_the_app_crawl_covers_every_path_and_every_non_ascii_value() -> None:
    rows = distinct_rows()
    parts = [part_rows(i) for i in range(PARTS)]
    crawled = set().union(*parts)
    assert sum(len(p) for p in parts) == len(crawled)  # no row twice
    assert {key for _, key in crawled} == {key for key, _ in rows}
    for (_key, value), where in rows.items():
        if not editor_text(json.loads(value)).isascii():
            assert where in crawled, where
    assert len({key for key, _ in rows}) >= 60


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS))
async def test_every_path_and_non_ascii_value_opens_and_submits_unchanged_in_the_app(part: int) -> None:
    rows = part_rows(part)
    paths = [p for p in templates() if any(name == str(p) for name, _ in rows)]
    crawled = await crawl(paths, rows=rows)
    assert crawled == len(rows)
