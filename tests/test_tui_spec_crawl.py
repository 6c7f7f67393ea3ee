"""The spec fields crawl: `e` on every row of the spec table, the editor submitted unchanged, for every
project template (and, marked slow, every shared template).  The app must still run, the dialog must close,
the value must be intact and the spec not even marked edited (issue 20: `e` on `tools.pattern` raised
`TypeError: Object of type CallPattern is not JSON serializable` and ended the app, losing every edit)."""

from __future__ import annotations

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


async def crawl(paths: list[Path], only: str = "", seen: set[str] | None = None) -> int:
    """Open every row (or every row whose path starts with ``only``; with ``seen``, every row whose path no
    earlier template had, adding it) of every template's spec table and submit it unchanged; the rows
    crawled."""
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


#: The project templates in three parts, so that pytest's workers crawl them side by side (about a second
#: a row on a loaded machine, 25 templates of 60 rows and more).
PARTS = 3


def test_the_parts_cover_every_project_template() -> None:
    parts = [PROJECT[i::PARTS] for i in range(PARTS)]
    assert len(PROJECT) >= 17
    assert sorted(p for part in parts for p in part) == sorted(PROJECT)


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS))
async def test_every_row_of_every_project_template_opens_and_submits_unchanged(part: int) -> None:
    templates = PROJECT[part::PARTS]
    crawled = await crawl(templates)
    assert crawled >= len(templates) * 60  # every field, the call pattern's nested parts included


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
