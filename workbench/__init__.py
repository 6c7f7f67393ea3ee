"""Template Workbench: analyse chat templates, parse model output, step through constrained generation."""

from __future__ import annotations

__version__ = "0.1.0"
