"""PYTHONIC: calls are a Python list of function calls (``[get_weather(city='Paris')]``, Llama 4, Granite
variants); values are Python literals."""

from __future__ import annotations

from workbench.runtime.formats.base import FormatFamily
from workbench.runtime.formats.pythonic.grammar import PythonicGrammar
from workbench.runtime.formats.pythonic.parser import PythonicParser
from workbench.runtime.formats.pythonic.samples import write_calls

FAMILY = FormatFamily(
    name="pythonic",
    grammar=PythonicGrammar,
    write_calls=write_calls,
    parser=PythonicParser,
)
