"""Checking call arguments against a tool's JSON schema without trusting the schema (issue 13).

A tool schema comes with the request, so it is untrusted input like the model output:

- **regexes** (``pattern``, ``patternProperties``) run through the ``regex`` module with a time bound per
  match.  jsonschema runs them with ``re``, a backtracking engine whose single C call cannot be interrupted:
  ``^(a+)+$`` against 30 ``a`` and a ``!`` takes minutes.  A match that runs out of time raises
  :class:`PatternTimeout`, and the caller gives up on that tool's schema (no verdict) instead of hanging;
- **references** (``$ref``) are resolved only inside the schema itself and against the JSON Schema
  meta-schemas, never fetched over the network; :func:`unresolved_refs` lists the ones that do not resolve,
  so the caller can say so instead of the validator failing half-way through a parse;
- **size**: walks over the schema are iterative and stop after :data:`MAX_SCHEMA_NODES` nodes.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Iterator
from typing import Any

import regex

#: Seconds one schema regex may take on one value (a normal pattern takes microseconds).
PATTERN_TIMEOUT = 0.05
#: Schema nodes a walk looks at before it stops (a real tool schema has tens).
MAX_SCHEMA_NODES = 100_000


class PatternTimeout(Exception):
    """A schema regex ran out of time on a value (catastrophic backtracking)."""

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.pattern = pattern


def search(pattern: str, text: str) -> bool:
    """``re.search(pattern, text)`` semantics, bounded by :data:`PATTERN_TIMEOUT`.

    Raises:
        PatternTimeout: the match ran out of time.
        regex.error: the pattern is not a valid regular expression.
    """
    try:
        return regex.search(pattern, text, timeout=PATTERN_TIMEOUT) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None


def walk(schema: Any) -> Iterator[dict[str, Any]]:
    """Every object node of a schema (iteratively: a deeply nested schema cannot exhaust the stack)."""
    stack = [schema]
    seen = 0
    while stack and seen < MAX_SCHEMA_NODES:
        node = stack.pop()
        seen += 1
        if isinstance(node, dict):
            yield node
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend(node)


def unresolved_refs(schema: Any) -> list[str]:
    """The ``$ref`` values of ``schema`` that resolve neither inside it nor to a JSON Schema meta-schema.

    A ``$ref`` under a nested ``$id`` is resolved by the validator against that id; it is not judged here.
    """
    if not isinstance(schema, dict):
        return []
    refs = [n["$ref"] for n in walk(schema) if isinstance(n.get("$ref"), str)]
    if not refs:
        return []
    resolver = _registry(schema).resolver()
    bad: list[str] = []
    for ref in dict.fromkeys(refs):
        try:
            resolver.lookup(ref)
        except Exception:  # referencing's Unresolvable and its subclasses, or a malformed pointer
            bad.append(ref)
    return bad


def _registry(schema: dict[str, Any]) -> Any:
    from jsonschema_specifications import REGISTRY
    from referencing.jsonschema import DRAFT202012, specification_with

    spec = specification_with(str(schema.get("$schema", "")), default=DRAFT202012)
    return REGISTRY.with_resource(uri=str(schema.get("$id", "")), resource=spec.create_resource(schema))


_MAX_VALIDATORS = 256
#: Arguments texts longer than this are checked afresh every time (never kept).
_MAX_KEPT_TEXT = 8192
#: Verdicts kept (:func:`first_error`).
_MAX_VERDICTS = 1024
_VERDICTS: dict[tuple[int, str], tuple[Any, str | None]] = {}
_VERDICTS_LOCK = threading.Lock()


def forget_verdicts() -> None:
    """Drop the kept verdicts (:func:`first_error`).  The corpus benchmarks call it before every timed
    analysis: a warm analysis reuses what it checked itself, never what an earlier run of the same template
    checked."""
    with _VERDICTS_LOCK:
        _VERDICTS.clear()


def first_error(validator: Any, text: str, value: Any) -> str | None:
    """The message of jsonschema's best match among ``value``'s errors under ``validator`` (None: valid);
    ``value`` is the arguments ``text`` decoded.

    Kept per (validator, text): a validator holds no state between instances and the value is a function of
    its text, while validation and the layout read-back parse the same calls again and again (two checks in
    three repeat one made earlier in the same analysis and self-check; checking took about 3 of its 64 ms,
    in-process, on the ../shared corpus).  The entry holds its validator, so an id stays its own; a lock
    keeps the table whole when a server parses on several threads.  Nothing raised is kept: a pattern that
    ran out of time (:class:`PatternTimeout`) or a schema jsonschema cannot read is met again, and reported
    again.
    """
    import jsonschema

    key = (id(validator), text) if len(text) <= _MAX_KEPT_TEXT else None
    if key is not None:
        kept = _VERDICTS.get(key)
        if kept is not None and kept[0] is validator:
            return kept[1]
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    message = None if error is None else str(error.message)
    if key is not None:
        with _VERDICTS_LOCK:
            _VERDICTS[key] = (validator, message)
            while len(_VERDICTS) > _MAX_VERDICTS:
                _VERDICTS.pop(next(iter(_VERDICTS)))
    return message


def checked_validator(schema: dict[str, Any]) -> tuple[list[str], Any]:
    """The ``$ref`` values of ``schema`` that do not resolve (:func:`unresolved_refs`), and, when they all
    do, a jsonschema validator for it whose regexes are time-bounded and whose refs stay local (None when
    jsonschema cannot load it).

    One answer per schema's content, kept (a validator holds no state between instances): every parse
    builds a parser, and validation parses dozens of cases with the same tools.  Keyed by the schema pickled
    (cheaper than its JSON, and exact); the answer is made from the unpickled private copy, so a caller
    changing its schema afterwards changes nothing here.
    """
    try:
        key = pickle.dumps(schema, protocol=5)
    except Exception:  # a schema pickle refuses: no sharing
        return _checked(schema)
    found = _CHECKED.get(key)
    if found is None:
        found = _CHECKED[key] = _checked(pickle.loads(key))
        while len(_CHECKED) > _MAX_VALIDATORS:
            _CHECKED.pop(next(iter(_CHECKED)))
    return found


def _checked(schema: dict[str, Any]) -> tuple[list[str], Any]:
    bad = unresolved_refs(schema)
    if bad:
        return bad, None
    try:
        return [], _build_validator(schema)
    except Exception:  # a schema jsonschema cannot even load: no verdict
        return [], None


_CHECKED: dict[bytes, tuple[list[str], Any]] = {}


def _build_validator(schema: dict[str, Any]) -> Any:
    import jsonschema

    base = jsonschema.validators.validator_for(schema)
    cls = _bounded_class(base)
    return cls(schema, registry=_registry(schema))


_CLASSES: dict[Any, Any] = {}


def _bounded_class(base: Any) -> Any:
    cls = _CLASSES.get(base)
    if cls is None:
        import jsonschema

        keywords = {"pattern": _pattern, "patternProperties": _pattern_properties}
        if "additionalProperties" in base.VALIDATORS:
            keywords["additionalProperties"] = _additional_properties
        if "unevaluatedProperties" in base.VALIDATORS:
            keywords["unevaluatedProperties"] = _unevaluated(base.VALIDATORS["unevaluatedProperties"])
        cls = _CLASSES[base] = jsonschema.validators.extend(base, keywords)
    return cls


# The keyword functions follow jsonschema's calling convention: (validator, value, instance, schema) and
# yield ValidationErrors.  Only the regex calls differ from jsonschema's own versions.
def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and isinstance(pattern, str) and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra_schema: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties") or {}
    patterns = list(schema.get("patternProperties") or {})
    extras = [key for key in instance if key not in properties and not any(search(p, key) for p in patterns)]
    if validator.is_type(extra_schema, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra_schema, path=key)
    elif extra_schema is False and extras:
        names = ", ".join(repr(k) for k in sorted(extras))
        yield ValidationError(f"additional properties are not allowed ({names} unexpected)")


def _unevaluated(original: Any) -> Any:
    """jsonschema's ``unevaluatedProperties`` matches ``patternProperties`` with ``re``: without them it is
    safe to keep; with them, no verdict (rare in tool schemas, and unbounded otherwise)."""

    def check(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if any("patternProperties" in node for node in walk(validator.schema)):
            return
        yield from original(validator, value, instance, schema)

    return check


__all__ = [
    "MAX_SCHEMA_NODES",
    "PATTERN_TIMEOUT",
    "PatternTimeout",
    "checked_validator",
    "search",
    "unresolved_refs",
    "walk",
]
