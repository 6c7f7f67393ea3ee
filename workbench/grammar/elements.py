"""Small constructors for xgrammar structural-tag formats, plus JSON-schema sub-grammars.

Grammars are assembled as plain dicts in xgrammar's structural-tag JSON shape (``{"type": "sequence",
"elements": [...]}``) rather than with xgrammar's pydantic classes: the dicts print as the inspectable grammar
text the workbench shows, and they are what any xgrammar user (vLLM, SGLang, web-llm) would paste.

JSON arguments are embedded as ``grammar`` elements holding xgrammar's own EBNF for the schema compiled with
``any_whitespace=False``: a structural tag's ``json_schema`` element always allows free whitespace, and small
or random models then emit whitespace forever.  The EBNF comes from xgrammar itself, so the schema support is
exactly xgrammar's.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from workbench.errors import WorkbenchError

Element = dict[str, Any]


class GrammarError(WorkbenchError, ValueError):
    """A grammar cannot be built from this spec, these tools or this tool choice; the message says why."""


def const(text: str) -> Element:
    """Exactly ``text``."""
    return {"type": "const_string", "value": text}


def seq(*elements: Element) -> Element:
    """The elements one after the other; empty constants are dropped, a single element is returned as is."""
    flat: list[Element] = []
    for e in elements:  # nested sequences read better flattened
        flat.extend(e["elements"] if e.get("type") == "sequence" else [e])
    kept = [e for e in flat if not (e.get("type") == "const_string" and e.get("value") == "")]
    merged: list[Element] = []
    for e in kept:  # adjacent constants read better as one string in the printed grammar
        if merged and e.get("type") == "const_string" and merged[-1].get("type") == "const_string":
            merged[-1] = const(merged[-1]["value"] + e["value"])
        else:
            merged.append(e)
    if not merged:
        return const("")
    if len(merged) == 1:
        return merged[0]
    return {"type": "sequence", "elements": merged}


def one_of(*elements: Element) -> Element:
    """Any one of the elements."""
    if len(elements) == 1:
        return elements[0]
    return {"type": "or", "elements": list(elements)}


def optional(element: Element) -> Element:
    return {"type": "optional", "content": element}


def repeat(element: Element, low: int, high: int) -> Element:
    """``element`` between ``low`` and ``high`` times (``high=-1``: unbounded)."""
    return {"type": "repeat", "min": low, "max": high, "content": element}


def any_text(*, excludes: tuple[str, ...] = (), max_chars: int | None = None) -> Element:
    out: Element = {"type": "any_text"}
    if excludes:
        out["excludes"] = list(excludes)
    if max_chars is not None:
        out["max_chars"] = max_chars
    return out


def tag(begin: str, content: Element, end: str) -> Element:
    """``begin content end``: xgrammar ends free ``any_text`` content at ``end``."""
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def ebnf(text: str) -> Element:
    return {"type": "grammar", "grammar": text}


def structural_tag(element: Element) -> str:
    """The JSON document xgrammar compiles (``Grammar.from_structural_tag``)."""
    return json.dumps({"type": "structural_tag", "format": element}, ensure_ascii=False, indent=1)


# --------------------------------------------------------------------------------------------- JSON schema
_XGR_PREFIX = re.compile(r"^\[[\d:]+\]\s*\S+?:\d+:\s*")


def clean_xgrammar_error(exc: BaseException) -> str:
    """xgrammar's C++ errors start with a timestamp and a source path; keep only the reason."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return _XGR_PREFIX.sub("", text)


def json_schema_ebnf(schema: Any, *, any_whitespace: bool = False, what: str = "schema") -> str:
    """xgrammar's EBNF for a JSON schema (``root`` rule), or :class:`GrammarError` naming ``what``.

    ``any_whitespace=False`` gives ``json.dumps``-style separators (``", "`` and ``": "``), which is how
    chat templates render arguments with ``tojson``.
    """
    if schema is True or schema == {}:
        schema = {}
    if not isinstance(schema, dict):
        raise GrammarError(f"{what}: a JSON schema must be an object, not {type(schema).__name__}")
    try:
        text = json.dumps(schema, sort_keys=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise GrammarError(f"{what}: not JSON-serialisable ({exc})") from None
    return _schema_ebnf_cached(text, any_whitespace, what)


@lru_cache(maxsize=256)
def _schema_ebnf_cached(schema_text: str, any_whitespace: bool, what: str) -> str:
    import xgrammar as xgr

    try:
        grammar = xgr.Grammar.from_json_schema(schema_text, any_whitespace=any_whitespace, strict_mode=True)
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
