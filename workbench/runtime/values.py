"""The one value encoding: how an argument value is written as text, and how it is read back.

Tagged formats (``<parameter=city>\\nParis\\n</parameter>``) write string values unquoted and everything
else as JSON, so the value's type comes from the tool's JSON schema: a ``string`` parameter keeps its raw
text (minus the template's own line breaks: one leading newline when the marker before the value ends with
one, one trailing newline when the closing marker starts with one), numbers, booleans, objects and arrays
are decoded as JSON, and ``null`` stands for null when the schema allows it.  A value with no schema type
is the caller's choice (``ParseOptions.untyped_values``): it arrives here either as ``{"type": "string"}``
or as no schema, whose rule is "JSON if it parses, else a string".  Models also write Python spellings
(``True``, ``None``), which are accepted where JSON is expected.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.runtime.chat import Tool

_PY_WORDS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}


class NotJsonError(ValueError):
    """A value that cannot be represented as JSON (bytes, NaN, unknown names)."""


def json_type(value: Any) -> str:
    """The JSON type name of a Python value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def schema_types(schema: Any) -> frozenset[str]:
    """The JSON types a (sub)schema allows; empty when it does not say (no schema, ``{}``)."""
    if not isinstance(schema, Mapping):
        return frozenset()
    out: set[str] = set()
    t = schema.get("type")
    if isinstance(t, str):
        out.add(t)
    elif isinstance(t, list):
        out.update(x for x in t if isinstance(x, str))
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            out |= schema_types(sub)
    if "enum" in schema and not out:
        values = schema.get("enum") or []
        out.update("string" if isinstance(v, str) else "number" for v in values)
    if "const" in schema and not out:
        out.add("string" if isinstance(schema["const"], str) else "number")
    return frozenset(out)


def is_plain_string(schema: Any) -> bool:
    """True when the value is a string and nothing else (it can be streamed as it arrives)."""
    return schema_types(schema) == {"string"}


def strip_one_newline(text: str, lead: bool = True, trail: bool = True) -> str:
    """Remove one leading (``lead``) and one trailing (``trail``) newline; ``\\r\\n`` counts as one."""
    if lead:
        if text.startswith("\r\n"):
            text = text[2:]
        elif text.startswith("\n"):
            text = text[1:]
    if trail:
        if text.endswith("\r\n"):
            text = text[:-2]
        elif text.endswith("\n"):
            text = text[:-1]
    return text


def _json_or_python(text: str) -> tuple[bool, Any]:
    s = text.strip()
    if not s:
        return False, None
    try:
        return True, to_jsonable(json.loads(s))
    except (ValueError, RecursionError):
        pass
    try:
        return True, python_literal(s)
    except NotJsonError:
        return False, None


def convert_tagged(raw: str, schema: Any, lead_nl: bool = True, trail_nl: bool = True) -> Any:
    """The JSON value of a tagged argument's raw text, typed by its schema (see the module docstring).

    ``lead_nl`` / ``trail_nl``: whether the markers around the value carry a line break of their own, which
    is then not part of a string value.
    """
    types = schema_types(schema)
    text = strip_one_newline(raw, lead_nl, trail_nl)
    stripped = text.strip()
    if types == {"string"}:
        return text
    if "null" in types and stripped in ("null", "None"):
        return None
    if "boolean" in types and stripped in ("true", "false", "True", "False"):
        return stripped in ("true", "True")
    if types & {"integer", "number"}:
        ok, value = _json_or_python(stripped)
        if ok and isinstance(value, (int, float)) and not isinstance(value, bool):
            if (
                "integer" in types
                and "number" not in types
                and isinstance(value, float)
                and value.is_integer()
            ):
                return int(value)
            return value
    if types & {"object", "array"} or not types:
        ok, value = _json_or_python(stripped)
        if not ok and '\\"' in stripped:
            ok, value = _json_or_python(_unescape(stripped))
        if ok and (not types or isinstance(value, (dict, list)) or _type_ok(value, types)):
            return value
    if not types:
        return text
    if "string" in types:
        return text
    # The schema asked for a non-string type the text is not: keep the model's text rather than guess.
    ok, value = _json_or_python(stripped)
    return value if ok else text


def _unescape(text: str) -> str:
    """Undo one level of JSON string escaping (models sometimes write ``[{\\"id\\": 1}]``)."""
    try:
        value = json.loads('"' + text + '"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _type_ok(value: Any, types: frozenset[str]) -> bool:
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    return any(checks[t](value) for t in types if t in checks)


#: A UTF-16 surrogate pair as two characters (what Python's ``"\ud83d\ude42"`` reads as).
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _joined_pairs(text: str) -> str:
    """``text`` with each surrogate pair as the one character it stands for: a string a template wrote with
    JSON's ``ensure_ascii`` escapes (``"\ud83d\ude42"`` for 🙂) reads in Python as two lone surrogates,
    which no JSON text, and no UTF-8 output, can hold."""
    if not _SURROGATE_PAIR.search(text):
        return text
    return _SURROGATE_PAIR.sub(lambda m: m.group(0).encode("utf-16", "surrogatepass").decode("utf-16"), text)


def to_jsonable(value: Any) -> Any:
    """A Python literal's value as JSON data; raises :class:`NotJsonError` for what JSON cannot hold."""
    if isinstance(value, str):
        return _joined_pairs(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotJsonError("non-finite number")
        return value
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, (str, int, float, bool)) or k is None:
                raise NotJsonError("dictionary key is not a string")
            out[_joined_pairs(k) if isinstance(k, str) else json.dumps(k)] = to_jsonable(v)
        return out
    raise NotJsonError(f"{type(value).__name__} is not a JSON value")


#: Bounds of a Python literal read back (:func:`python_literal`): longer or deeper text is refused before
#: ``ast`` sees it (a model's value is never that big; a hostile one must not cost the parser).
MAX_LITERAL_CHARS = 1_000_000
MAX_LITERAL_DEPTH = 64


def python_literal(text: str) -> Any:
    """The JSON value of a Python (or JSON) literal written by the model; raises :class:`NotJsonError`.

    Python spellings (``True``, ``None``, ``'single quoted'`` with its escapes, ``['a', 'b']``,
    ``{'k': 1}``, tuples) are read with :func:`ast.literal_eval`, never ``eval``; JSON spellings
    (``true``, ``null``, ``{"k": 1}``) with :mod:`json`.  Text over :data:`MAX_LITERAL_CHARS` or nested
    deeper than :data:`MAX_LITERAL_DEPTH` is refused.
    """
    s = text.strip()
    if s in _PY_WORDS:
        return _PY_WORDS[s]
    if len(s) > MAX_LITERAL_CHARS or literal_depth(s) > MAX_LITERAL_DEPTH:
        raise NotJsonError(f"literal too large or too deep: {s[:40]!r}")
    try:
        value = ast.literal_eval(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        try:
            return json.loads(s)
        except (ValueError, RecursionError):
            pass
        # a line break written raw inside quotes (CogAgent's 'Line one<newline>Line two'): Python refuses it,
        # the model meant it as text
        escaped = _line_breaks_escaped_in_strings(s)
        if escaped == s:
            raise NotJsonError(f"not a literal: {s[:40]!r}") from None
        try:
            value = ast.literal_eval(escaped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise NotJsonError(f"not a literal: {s[:40]!r}") from None
    return to_jsonable(value)


def _line_breaks_escaped_in_strings(text: str) -> str:
    """``text`` with each raw line break inside a quoted string written as its escape."""
    return "".join(
        ("\\r" if ch == "\r" else "\\n") if inside and ch in "\r\n" else ch for ch, inside in _quoted(text)
    )


def literal_depth(text: str) -> int:
    """The deepest bracket nesting of a Python or JSON literal, brackets inside strings not counted."""
    depth = deepest = 0
    for ch, inside in _quoted(text):
        if inside:
            continue
        if ch in "[({":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "])}":
            depth -= 1
    return deepest


def _quoted(text: str) -> Iterator[tuple[str, bool]]:
    """Each character of a Python or JSON literal, and whether a quoted string holds it (its quotes aside:
    an opening quote is outside, a closing one inside), backslash escapes followed."""
    quote = ""
    escaped = False
    for ch in text:
        yield ch, bool(quote)
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch


_PY_SCALAR_RX = re.compile(r"[\w.+\-]+")


class PythonExtent:
    """Finds where one Python (or JSON) literal ends, fed the text incrementally (each character once).

    ``advance(buf, i, final) -> (j, done)``: resumes at ``i``; ``done`` when the literal ended at ``j``: a
    top-level string closed, a top-level container closed, or a scalar (``True``, ``-3.25``, ``None``)
    ended.  Quotes (either kind, with backslash escapes) are skipped whole, so brackets, commas and markup
    inside strings do not count.  The literal is self-delimiting: what follows it (a separator, a closing
    parenthesis, a closing tag) is never looked at, so no terminator can be mistaken inside a value.
    """

    __slots__ = ("depth", "escaped", "quote", "started")

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""
        self.escaped = False
        self.started = False

    def advance(self, buf: str, i: int, final: bool) -> tuple[int, bool]:
        n = len(buf)
        while i < n:
            ch = buf[i]
            if self.quote:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == self.quote:
                    self.quote = ""
                    if self.depth == 0:
                        return i + 1, True
                i += 1
                continue
            if not self.started and ch in " \t\r\n":
                i += 1
                continue
            self.started = True
            if ch in "'\"":
                self.quote = ch
            elif ch in "[({":
                self.depth += 1
            elif ch in "])}":
                self.depth -= 1
                if self.depth <= 0:
                    return i + 1, True
            elif self.depth == 0:
                m = _PY_SCALAR_RX.match(buf, i)
                if m is None:
                    return i, True  # no literal starts here: nothing to consume
                if m.end() < n or final:
                    return m.end(), True
                return i, False  # the scalar may go on in the next chunk
            i += 1
        return i, final and not self.started


def dumps(value: Any) -> str:
    """JSON text with the separators OpenAI-style servers use (``", "`` and ``": "``), non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


# --------------------------------------------------------------------------------------------- writing
# The one rule for "how is a value written" in formats that write argument values as text between markers
# (tagged arguments) and in Python-literal calls.  The parser (:func:`convert_tagged`), the grammar
# (``formats/tag_with_tagged/grammar.py``), the sample writers and the exports all use these functions.


def written_raw(schema: Any, *, untyped: str = "string") -> bool:
    """True when a string value for ``schema`` is written as raw text between the markers, not as JSON.

    Templates write ``value if value is string else value|tojson``: a string is raw wherever the schema
    allows a string (``{"type": "string"}``, ``{"type": ["string", "null"]}``, a string ``enum``), and,
    under the ``untyped="string"`` policy (:class:`~workbench.runtime.parsing.options.ParseOptions`
    ``untyped_values``, the default), where the schema says nothing about the type.  Every other value is
    written as JSON, and :func:`convert_tagged` reads both back, trying the schema's non-string types first.
    """
    types = schema_types(schema)
    if not types:
        return untyped == "string"
    return "string" in types


def write_value(value: Any, schema: Any = None, *, untyped: str = "string") -> str:
    """The text of a tagged argument value (the inverse of :func:`convert_tagged`).

    A string is written as is where the schema allows a string (see :func:`written_raw`); anything else
    as JSON.  Without a schema a string is written raw (the template's own rule).
    """
    if isinstance(value, str) and written_raw(schema, untyped=untyped):
        return value
    return dumps(value)


def write_python(value: Any) -> str:
    """A keyword value of a pythonic call (``f(a=True, b="x", c=[1, 2])``); :func:`python_literal` reads it.

    Booleans and null take their Python spelling (``True``, ``False``, ``None``); strings, numbers, arrays
    and objects are written as JSON writes them (a JSON string or number is a valid Python literal, and
    nested values keep JSON syntax, which every pythonic parser accepts).  The grammar allows exactly this.
    """
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    return dumps(value)


def parameter_schema(tools: Sequence[Tool] | None, name: str, key: str) -> Any:
    """The schema of parameter ``key`` of tool ``name`` among ``tools``; None when it is not known."""
    for tool in tools or ():
        if tool.name == name and isinstance(tool.parameters, Mapping):
            props = tool.parameters.get("properties")
            if isinstance(props, Mapping):
                return props.get(key)
    return None


#: Every Python or JSON literal a model may write for a value (xgrammar EBNF, ``root`` rule): what
#: :func:`python_literal` reads.  Grammars in *reading* mode (``ToolGrammar(lenient=True)``: the exported
#: structural tag, which must accept what templates write) allow it beside the schema's canonical spelling,
#: since templates print nested values with Python's spellings (``{'a': None}``).
PYTHON_LITERAL_EBNF = r"""root ::= value
value ::= "None" | "True" | "False" | "null" | "true" | "false" | number | string | list | dict
list ::= "[" ws (value (ws "," ws value)* (ws ",")?)? ws "]"
dict ::= "{" ws (value ws ":" ws value (ws "," ws value ws ":" ws value)* (ws ",")?)? ws "}"
string ::= "\"" ([^"\\\n] | "\\" [^\n])* "\"" | "'" ([^'\\\n] | "\\" [^\n])* "'"
number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
ws ::= [ \t\n]*
"""
#: A Python string literal in single quotes (``'Paris'``, ``'it\\'s'``), as templates that print values
#: the way Python's ``repr`` does write a string argument; pythonic grammars in reading mode allow it
#: where the schema allows a string (:func:`python_literal` reads it).
PYTHON_STRING_EBNF = r"""root ::= "'" ([^'\\\n] | "\\" [^\n])* "'"
"""
