"""The spec fields crawl: `e` on every row of the spec table, the editor submitted unchanged, for every
distinct row (path and value) of the project templates (and, marked slow, every field of the shared
templates).  The app must still run, the dialog must close,
the value must be intact and the spec not even marked edited (issue 20: `e` on `tools.pattern` raised
`TypeError: Object of type CallPattern is not JSON serializable` and ended the app, losing every edit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from tests.conftest import PROJECT_TEMPLATES, shared_templates
from tests.test_analysis_helpers import analysis_of
from tests.test_tui_app import make_app, settle
from workbench.runtime.spec import FormatSpec, to_plain
from workbench.tui.screens.analysis import AnalysisScreen
from workbench.tui.spec_fields import spec_rows

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


#: The project templates' rows in three parts, so that pytest's workers crawl them side by side (about a
#: second a row on a loaded machine).
PARTS = 3


def first_rows() -> dict[tuple[str, str], tuple[str, str]]:
    """Each distinct row of the project templates -- its path and its value, which are all the dialog is
    opened with -- and the first template that has it (template name, path).  A row another template has
    with the same value opens the same dialog with the same text and is submitted the same way: crawled
    once, not 28 times (1,792 rows, 340 distinct; every row of every template took 25 minutes)."""
    first: dict[tuple[str, str], tuple[str, str]] = {}
    for path in PROJECT:
        spec = analysis_of(str(path)).spec
        for row in spec_rows(spec, spec):
            first.setdefault((row.path, row_value(spec, row.path)), (str(path), row.path))
    return first


def part_rows(part: int) -> set[tuple[str, str]]:
    ordered = sorted(set(first_rows().values()))
    return set(ordered[part::PARTS])


def test_the_parts_cover_every_distinct_row_of_every_project_template() -> None:
    assert len(PROJECT) >= 17
    distinct = first_rows()
    assert len(distinct) >= 300  # paths x values: every field, the call pattern's nested parts included
    parts = [part_rows(i) for i in range(PARTS)]
    assert set().union(*parts) == set(distinct.values())
    assert sum(len(p) for p in parts) == len(distinct)  # no row twice


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS))
async def test_every_distinct_row_of_the_project_templates_opens_and_submits_unchanged(part: int) -> None:
    rows = part_rows(part)
    templates = [p for p in PROJECT if any(name == str(p) for name, _ in rows)]
    crawled = await crawl(templates, rows=rows)
    assert crawled == len(rows)


@pytest.mark.slow
@pytest.mark.shared
async def test_every_field_of_the_shared_templates_opens_and_submits_unchanged() -> None:
    """Every row path any shared template's spec has, crawled on the first template that has it (about a
    second a row: every row of all 36 templates, 2,200 rows, was what made CI run past its 90 minutes; the
    project templates above are crawled whole)."""
    paths = shared_templates()
    if not paths:
        pytest.skip("../shared not present")
    seen: set[str] = set()
    crawled = await crawl(paths, seen=seen)
    assert crawled == len(seen) >= 60
