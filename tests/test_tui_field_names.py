"""The spec table's field column is narrow: a long field name keeps its part and the end that tells it
apart."""

from __future__ import annotations

from workbench.runtime.spec import FormatSpec
from workbench.tui.screens.analysis import FIELD_WIDTH, _middle_cut
from workbench.tui.spec_fields import spec_rows


def test_fields_sharing_a_long_head_stay_apart_in_the_column() -> None:
    labels = [row.label for row in spec_rows(FormatSpec(), None)]
    shown = [_middle_cut(label, FIELD_WIDTH) for label in labels]
    assert all(len(s) <= FIELD_WIDTH for s in shown)
    assert len(set(shown)) == len(set(labels)), [s for s in shown if shown.count(s) > 1]
    assert _middle_cut("content.with_calls_start", 20) == "content.…calls_start"
    assert _middle_cut("reasoning.mode", 20) == "reasoning.mode"
