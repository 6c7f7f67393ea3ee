"""The spec fields table's rows and how each is edited: every field of a spec, nested parts included.

The Analysis screen lists these rows and its edit dialog edits one at a time.  A call pattern
(``tools.pattern``) is a part of its own with parts inside it (its ``encoding``, and one ``ArgVariant`` per
way of writing an argument), so the rows are a tree: the pattern as a whole, then each of its fields, each
variant and each variant's fields.  Every row's value has a JSON form
(:func:`workbench.runtime.spec.to_plain`) that the editor shows and :meth:`FormatSpec.with_edit` takes
back, so submitting a value unchanged gives the same spec.  Pure: no Textual here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Literal

from workbench.runtime.spec import FormatSpec, to_plain
from workbench.tui.palette import visible

# The spec parts shown in the table, with the probe family (id prefix) that decides each.
PARTS: tuple[tuple[str, str], ...] = (("reasoning", "R"), ("content", "C"), ("tools", "T"), ("prompt", ""))

#: How a value is typed in the editor: one line of JSON, or a JSON document over several lines.
EditorKind = Literal["line", "document"]


@dataclass(frozen=True)
class FieldRow:
    """One row of the spec fields table: a spec field, empty or not, with what a person needs to fill it."""

    path: str  # the dotted name ``FormatSpec.with_edit`` takes (numbers index lists)
    shown: str  # the value as one visible line ("" for an empty marker)
    edited: bool  # changed by hand (differs from the analyzed spec)
    description: str = ""
    allowed: tuple[str, ...] = ()  # the closed set of an enum field (mode, format, id_position)
    is_marker: bool = False
    depth: int = 0  # 0 for a part's field; 1, 2, ... for the fields of a nested part (the call pattern)

    @property
    def is_enum(self) -> bool:
        return bool(self.allowed)

    @property
    def label(self) -> str:
        """The name shown in the table: the full path at the top, the last step indented below it."""
        if not self.depth:
            return self.path
        last = self.path.rsplit(".", 1)[-1]
        return "  " * self.depth + (f"[{last}]" if last.isdigit() else last)


def shown_value(value: object) -> str:
    """A value as one visible line (pure): text with its line breaks shown, a list joined, a call pattern
    described, anything else as compact JSON."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return ", ".join(visible(v) for v in value)
    describe = getattr(value, "describe", None)
    if callable(describe):  # a call pattern (spec v2): one readable line
        return visible(str(describe()))
    return visible(json.dumps(to_plain(value), ensure_ascii=False))


def editor_kind(value: object) -> EditorKind:
    """A part, a list of parts or an object is edited as a document; a marker, a mode, a number, a flag or
    a list of strings on one line (pure)."""
    if isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        return "line"
    if is_dataclass(value) or isinstance(value, (dict, tuple, list)):
        return "document"
    return "line"


def editor_text(value: object) -> str:
    """The text the editor starts with: the value's JSON form (indented for a document).  Pure; any spec
    value has one, so opening the editor never fails."""
    plain = to_plain(value)
    if editor_kind(value) == "document":
        return json.dumps(plain, ensure_ascii=False, indent=2)
    return json.dumps(plain, ensure_ascii=False)


def spec_rows(spec: FormatSpec, original: FormatSpec | None) -> list[FieldRow]:
    """Every field of the spec, empty markers and nested parts included, in field order (pure).

    Markers come from ``FormatSpec.marker_fields()`` (value and description); enum fields carry their
    allowed values from the dataclass field metadata, so the table can show them before anyone guesses.
    """
    markers = {m.path: m for m in spec.marker_fields()}
    rows: list[FieldRow] = []
    for part, _ in PARTS:
        rows.extend(_rows_of(getattr(spec, part), part, original, markers, depth=0))
    rows.extend(_top_level_rows(spec, original))
    return rows


def _original_at(original: FormatSpec | None, path: str) -> tuple[bool, Any]:
    if original is None:
        return False, None
    try:
        return True, original.value_at(path)
    except ValueError:  # SpecError: the original has no such item (a variant added by hand)
        return True, object()


def _rows_of(
    obj: Any, prefix: str, original: FormatSpec | None, markers: dict[str, Any], depth: int
) -> list[FieldRow]:
    """The rows of one part (a dataclass): a row per field, and below a nested part its own rows."""
    rows: list[FieldRow] = []
    for f in fields(obj):
        path = f"{prefix}.{f.name}"
        value = getattr(obj, f.name)
        known, before = _original_at(original, path)
        edited = known and value != before
        description = f.metadata.get("description", "")
        if path in markers:
            m = markers[path]
            rows.append(FieldRow(path, visible(m.value), edited, m.description, is_marker=True, depth=depth))
            continue
        allowed = tuple(f.metadata.get("values", ()))
        rows.append(FieldRow(path, shown_value(value), edited, description, allowed, depth=depth))
        if is_dataclass(value):
            rows.extend(_rows_of(value, path, original, markers, depth + 1))
        elif isinstance(value, tuple) and value and all(is_dataclass(v) for v in value):
            for i, item in enumerate(value):
                item_path = f"{path}.{i}"
                known, before = _original_at(original, item_path)
                rows.append(
                    FieldRow(
                        item_path,
                        shown_value(item),
                        known and item != before,
                        f"one of {f.name}",
                        depth=depth + 1,
                    )
                )
                rows.extend(_rows_of(item, item_path, original, markers, depth + 2))
    return rows


def _top_level_rows(spec: FormatSpec, original: FormatSpec | None) -> list[FieldRow]:
    """The spec's own fields outside the parts (``end_markers``, ``eos_token``, ...): a missed end-of-turn
    marker is as common a mistake as a wrong part marker, and it must be reachable from the same table."""
    rows: list[FieldRow] = []
    for f in fields(spec):
        if f.name in {part for part, _ in PARTS} or f.name in {"provenance", "version"}:
            continue
        value = getattr(spec, f.name)
        edited = original is not None and value != getattr(original, f.name)
        description = f.metadata.get("description", "") or f.name.replace("_", " ")
        shown = shown_value(value) if value not in ("", ()) else ""
        rows.append(FieldRow(f.name, shown, edited, description, is_marker=bool(f.metadata.get("markers"))))
    return rows


def parse_edit(text: str, allowed: tuple[str, ...] = ()) -> Any:
    """The value typed in the editor (pure): JSON, or an enum value typed without quotes.

    Raises:
        ValueError: not JSON, with where and why (strings need quotes).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if text.strip() in allowed:
            return text.strip()
        raise ValueError(
            f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno} (strings need quotes)"
        ) from None


def apply_edit(spec: FormatSpec, path: str, text: str, allowed: tuple[str, ...] = ()) -> FormatSpec | None:
    """The spec with ``text`` (the editor's JSON) at ``path``; ``None`` when the value is unchanged (pure).

    Raises:
        ValueError: the text is not JSON, or ``FormatSpec.with_edit`` refuses the value (a SpecError,
        naming the field).
    """
    value = parse_edit(text, allowed)
    if value == to_plain(spec.value_at(path)):
        return None
    return spec.with_edit(**{path: value})
