"""llama.cpp: its generated parser keeps a truncated call, keeps all text and types values by the schema, so
its parse profile is the workbench's defaults."""

from __future__ import annotations

from workbench.engines.base import Engine

ENGINE = Engine(name="llama.cpp", display="llama.cpp", parse_profile=True)
