"""Formats of recent model families the analysis was not written against (templates/recent-shapes/).

Each template writes one family's output format from its public description (not the model's template):
roles as bar-bracket words, ``<role>`` elements, numbered rounds, plain-text roles, an answer wrapper with
the calls inside it, calls behind a plugin header, python calls in a code fence; and (session 12) DSML
markup with typed parameters, steptml, a bare JSON array, ``[CALL_ID]``, Command A's action list, Kimi's
numbered ids, OLMo's pythonic lines, Jamba's ``<tool_calls>``.  They were written as unseen material
(issue 18: the analysis must read formats it was never told about); all but one passed when first run
(deepseekv32-like: its prompt's ``</think>`` against ``<think>`` was cut inside the marker, so the thinking
switch read as no change and reasoning as none); kept here so that a change to the analysis that loses
one of them fails.  Each must validate
(every case it renders round-trips, one-shot and streamed) and must render exactly the features its
header names, so a verdict cannot pass by calling a feature unsupported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import PROJECT_TEMPLATES
from workbench.formats import analyze
from workbench.template.source import load_template
from workbench.validate import validate

SHAPES = PROJECT_TEMPLATES / "recent-shapes"

#: The templates that write reasoning (the rest drop it): checked against the report, by hand from the
#: templates' headers.
WITH_REASONING = {
    "commanda-like",
    "deepseekv32-like",
    "kimik2thinking-like",
    "magistral-like",
    "step3-like",
    "ernie45-like",
    "exaone4-like",
    "hunyuan-like",
    "interns1-like",
    "ring-like",
    "smollm3-like",
}
#: The templates that drop an answer's text when the message has calls (a call turn holds only calls).
CALLS_WITHOUT_TEXT = {"commanda-like", "xlam2-like"}


def _paths() -> list[Path]:
    return sorted(SHAPES.glob("*.jinja"))


def test_the_set_is_there() -> None:
    assert len(_paths()) == 19
    assert {p.stem for p in _paths()} >= WITH_REASONING | CALLS_WITHOUT_TEXT


@pytest.mark.parametrize("path", _paths(), ids=lambda p: p.stem)
def test_recent_shape_validates(path: Path) -> None:
    source = load_template(path)
    report = validate(source, analyze(source).spec)
    assert report.validated, (path.stem, report.verdict)
    features = report.features()
    for feature in ("content", "tool_call", "parallel_calls", "nested", "continuation"):
        assert features[feature]["status"] == "pass", (path.stem, feature, features[feature])
    want = "unsupported" if path.stem in CALLS_WITHOUT_TEXT else "pass"
    assert features["content_with_call"]["status"] == want, (path.stem, features["content_with_call"])
    want = "pass" if path.stem in WITH_REASONING else "unsupported"
    assert features["reasoning"]["status"] == want, (path.stem, features["reasoning"])
