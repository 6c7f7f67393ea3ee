"""The turn layout's export side (spec v3): the response-template regions of a turn of headed messages.

The layout is not a tool-call format (``tools.format`` still names how a call's name and arguments are
written); its runtime family (:mod:`workbench.runtime.formats.layout`) wraps that format's family with what
the layout says about the turn.  :func:`workbench.formats.hooks_for` returns these hooks for a spec whose
layout is defined.
"""

from __future__ import annotations

from workbench.formats.base import FormatHooks
from workbench.formats.layout.export import response_fields
from workbench.runtime.formats.layout import FAMILY

HOOKS = FormatHooks(family=FAMILY, response_fields=response_fields)
