"""Helpers (no tests) shared by the analysis tests: cached analyses of the project and shared templates."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from tests.conftest import PROJECT_TEMPLATES, SHARED
from workbench.analysis import Analysis
from workbench.formats import analyze
from workbench.template.source import load_template

SHARED_TEMPLATES = SHARED / "templates"


@cache
def analysis_of(path: str) -> Analysis:
    return analyze(load_template(path))


def project(name: str) -> Analysis:
    """The analysis of ``templates/NAME.jinja``; skips while the template does not exist yet."""
    path = PROJECT_TEMPLATES / f"{name}.jinja"
    if not path.is_file():
        pytest.skip(f"project template {name} not written yet")
    return analysis_of(str(path))


def shared(name: str) -> Analysis:
    """The analysis of ``../shared/templates/NAME.jinja``; skips without ../shared."""
    path = SHARED_TEMPLATES / f"{name}.jinja"
    if not path.is_file():
        pytest.skip("../shared not present")
    return analysis_of(str(path))


def shared_names() -> list[str]:
    return sorted(p.stem for p in SHARED_TEMPLATES.glob("*.jinja")) if SHARED_TEMPLATES.is_dir() else []


def template_text(name: str) -> str:
    path = SHARED_TEMPLATES / f"{name}.jinja"
    if not path.is_file():
        pytest.skip("../shared not present")
    return Path(path).read_text(encoding="utf-8")
