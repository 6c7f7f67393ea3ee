"""PYTHONIC: calls are a Python list of function calls (``[get_weather(city='Paris')]``, Llama 4, Granite
variants); values are Python literals."""

from __future__ import annotations

from workbench.formats.base import FormatFamily
from workbench.formats.pythonic.detect import detect
from workbench.formats.pythonic.grammar import PythonicGrammar
from workbench.formats.pythonic.parser import PythonicParser
from workbench.formats.pythonic.samples import write_calls

FAMILY = FormatFamily(
    name="pythonic",
    grammar=PythonicGrammar,
    write_calls=write_calls,
    parser=PythonicParser,
    detect=detect,
    response_template_gap="pythonic calls (f(a=1)) cannot be read by any response_template content parser",
)
