"""Typed xgrammar structural-tag elements and their small constructors, plus JSON-schema sub-grammars.

Each element is a frozen dataclass discriminated by ``type: Literal[...]``, like xgrammar's own
structural-tag models, and serialises (:meth:`to_dict`) to exactly xgrammar's structural-tag JSON
(``{"type": "sequence", "elements": [...]}``): the JSON prints as the inspectable grammar text the workbench
shows, and it is what any xgrammar user (vLLM, SGLang, web-llm) would paste.  Typed elements let the builders
and the exports inspect a grammar (``isinstance``) instead of poking at dict keys.

JSON arguments are embedded as ``grammar`` elements holding xgrammar's own EBNF for the schema compiled with
``any_whitespace=False``: a structural tag's ``json_schema`` element always allows free whitespace, and small
or random models then emit whitespace forever.  The EBNF comes from xgrammar itself, so the schema support is
exactly xgrammar's.
"""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, dataclass, field, fields
from functools import lru_cache
from typing import Any, Literal, Union

from workbench.runtime.errors import WorkbenchError


class GrammarError(WorkbenchError, ValueError):
    """A grammar cannot be built from this spec, these tools or this tool choice; the message says why."""


class _Format:
    """What every element shares: its serialisation to xgrammar's structural-tag JSON, written once.

    ``type`` comes first, then the fields in declaration order; a nested element becomes its dict and a
    tuple a list; a field left at its default (``any_text``'s optional limits) is omitted, since xgrammar
    reads a missing key as that default.  Nine hand-written ``to_dict`` bodies said the same thing.
    """

    type: str

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name != "type" and not (f.default is not MISSING and value == f.default):
                out[f.name] = _plain(value)
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, _Format):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class ConstStringFormat(_Format):
    """Exactly ``value``."""

    value: str
    type: Literal["const_string"] = field(default="const_string", init=False)


@dataclass(frozen=True)
class SequenceFormat(_Format):
    """The elements one after the other."""

    elements: tuple[Element, ...]
    type: Literal["sequence"] = field(default="sequence", init=False)


@dataclass(frozen=True)
class OrFormat(_Format):
    """Any one of the elements."""

    elements: tuple[Element, ...]
    type: Literal["or"] = field(default="or", init=False)


@dataclass(frozen=True)
class OptionalFormat(_Format):
    """``content`` or nothing."""

    content: Element
    type: Literal["optional"] = field(default="optional", init=False)


@dataclass(frozen=True)
class RepeatFormat(_Format):
    """``content`` between ``min`` and ``max`` times (``max=-1``: unbounded)."""

    min: int
    max: int
    content: Element
    type: Literal["repeat"] = field(default="repeat", init=False)


@dataclass(frozen=True)
class AnyTextFormat(_Format):
    """Free text that never contains one of ``excludes`` (and at most ``max_chars`` characters)."""

    excludes: tuple[str, ...] = ()
    max_chars: int | None = None
    type: Literal["any_text"] = field(default="any_text", init=False)


@dataclass(frozen=True)
class TagFormat(_Format):
    """``begin content end``: xgrammar ends free ``any_text`` content at ``end``."""

    begin: str
    content: Element
    end: str
    type: Literal["tag"] = field(default="tag", init=False)


@dataclass(frozen=True)
class GrammarFormat(_Format):
    """An EBNF grammar (xgrammar's dialect, ``root`` rule)."""

    grammar: str
    type: Literal["grammar"] = field(default="grammar", init=False)


@dataclass(frozen=True)
class RegexFormat(_Format):
    """Text matching ``pattern`` (xgrammar's regex dialect)."""

    pattern: str
    type: Literal["regex"] = field(default="regex", init=False)


#: Any structural-tag element (discriminated by its ``type``).
Element = Union[  # noqa: UP007 (a runtime alias: the dataclasses' string annotations refer to it)
    ConstStringFormat,
    SequenceFormat,
    OrFormat,
    OptionalFormat,
    RepeatFormat,
    AnyTextFormat,
    TagFormat,
    GrammarFormat,
    RegexFormat,
]


def const(text: str) -> Element:
    """Exactly ``text``."""
    return ConstStringFormat(text)


def seq(*elements: Element) -> Element:
    """The elements one after the other; empty constants are dropped, a single element is returned as is."""
    flat: list[Element] = []
    for e in elements:  # nested sequences read better flattened
        flat.extend(e.elements if isinstance(e, SequenceFormat) else [e])
    kept = [e for e in flat if not (isinstance(e, ConstStringFormat) and e.value == "")]
    merged: list[Element] = []
    for e in kept:  # adjacent constants read better as one string in the printed grammar
        last = merged[-1] if merged else None
        if isinstance(e, ConstStringFormat) and isinstance(last, ConstStringFormat):
            merged[-1] = ConstStringFormat(last.value + e.value)
        else:
            merged.append(e)
    if not merged:
        return const("")
    if len(merged) == 1:
        return merged[0]
    return SequenceFormat(tuple(merged))


def one_of(*elements: Element) -> Element:
    """Any one of the elements."""
    if len(elements) == 1:
        return elements[0]
    return OrFormat(tuple(elements))


def optional(element: Element) -> Element:
    return OptionalFormat(element)


def repeat(element: Element, low: int, high: int) -> Element:
    """``element`` between ``low`` and ``high`` times (``high=-1``: unbounded)."""
    return RepeatFormat(low, high, element)


def any_text(*, excludes: tuple[str, ...] = (), max_chars: int | None = None) -> Element:
    return AnyTextFormat(tuple(excludes), max_chars)


def tag(begin: str, content: Element, end: str) -> Element:
    """``begin content end``: xgrammar ends free ``any_text`` content at ``end``."""
    return TagFormat(begin, content, end)


def ebnf(text: str) -> Element:
    return GrammarFormat(text)


def regex(pattern: str) -> Element:
    return RegexFormat(pattern)


#: Optional blanks (spaces, tabs, newlines): what templates put around markers and after the last call.  The
#: one whitespace rule of every grammar where free text may follow anyway.
WHITESPACE: Element = RegexFormat(r"[ \t\n]*")
#: The blanks that may come before a block the output opens (a reasoning block, the call a request
#: requires) and after a required call: as many as templates render there (GLM's ``"\n<think>"``, a blank
#: line), and no more.  Where nothing else may follow, any amount would let a model write whitespace until
#: ``max_tokens`` (issue 19: a random model under ``tool_choice="required"`` never got to its call).
BOUNDED_WHITESPACE: Element = RegexFormat(r"[ \t\n]{0,4}")
#: Most blanks in a row inside a required call's JSON (xgrammar's ``max_whitespace_cnt``): every project
#: template's JSON fits (``json.dumps`` separators, one space).  No bound where the model may also answer
#: in free text (``auto``), so a template that indents its JSON is still read there (Command R+ writes runs
#: of 9 and more blanks; its ``required`` tag rejected its calls before this bound, on their lead).
FORCED_JSON_WHITESPACE = 2


def structural_tag(element: Element) -> str:
    """The JSON document xgrammar compiles (``Grammar.from_structural_tag``)."""
    return json.dumps({"type": "structural_tag", "format": element.to_dict()}, ensure_ascii=False, indent=1)


# --------------------------------------------------------------------------------------------- JSON schema
_XGR_PREFIX = re.compile(r"^\[[\d:]+\]\s*\S+?:\d+:\s*")


def clean_xgrammar_error(exc: BaseException) -> str:
    """xgrammar's C++ errors start with a timestamp and a source path; keep only the reason."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return _XGR_PREFIX.sub("", text)


def json_schema_ebnf(
    schema: Any, *, any_whitespace: bool = False, what: str = "schema", max_whitespace: int | None = None
) -> str:
    """xgrammar's EBNF for a JSON schema (``root`` rule), or :class:`GrammarError` naming ``what``.

    ``any_whitespace=False`` gives ``json.dumps``-style separators (``", "`` and ``": "``), which is how
    chat templates render arguments with ``tojson``; with ``any_whitespace``, ``max_whitespace`` bounds each
    run of blanks (``None``: any length).
    """
    if schema is True or schema == {}:
        schema = {}
    if not isinstance(schema, dict):
        raise GrammarError(f"{what}: a JSON schema must be an object, not {type(schema).__name__}")
    try:
        text = json.dumps(schema, sort_keys=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise GrammarError(f"{what}: not JSON-serialisable ({exc})") from None
    return _schema_ebnf_cached(text, any_whitespace, what, max_whitespace if any_whitespace else None)


@lru_cache(maxsize=256)
def _schema_ebnf_cached(schema_text: str, any_whitespace: bool, what: str, max_whitespace: int | None) -> str:
    import xgrammar as xgr

    try:
        grammar = xgr.Grammar.from_json_schema(
            schema_text, any_whitespace=any_whitespace, strict_mode=True, max_whitespace_cnt=max_whitespace
        )
    except Exception as exc:  # xgrammar raises RuntimeError/ValueError with a C++ location prefix
        raise GrammarError(f"{what} cannot be compiled by xgrammar: {clean_xgrammar_error(exc)}") from None
    text = str(grammar)
    for loose in _LOOSE_STRING_CHARS:
        text = text.replace(loose, _JSON_STRING_CHAR)
    return text


# Characters allowed inside a JSON string.  xgrammar 0.2.8 has two looser classes.  For a length-bounded
# string (minLength/maxLength): any character but quote, backslash, CR and LF, so a raw tab or another
# control character gets in (invalid JSON that strict parsers reject).  In every string: UTF-16 surrogate
# code points (U+D800-U+DFFF), which are not valid UTF-8 (a decoder turns each into three replacement
# characters, which also breaks maxLength).  Both are replaced by the strict class.
_LOOSE_STRING_CHARS = (r"[^\"\\\r\n]", r"[^\0-\x1f\"\\\r\n]")
_JSON_STRING_CHAR = r"[^\0-\x1f\"\\\uD800-\uDFFF]"


def check_structural_tag(text: str) -> None:
    """Compile the structural tag without a tokenizer, so a bad grammar fails at build time, not mid-run."""
    import xgrammar as xgr

    try:
        xgr.Grammar.from_structural_tag(text)
    except Exception as exc:
        raise GrammarError(f"xgrammar rejected the grammar: {clean_xgrammar_error(exc)}") from None
