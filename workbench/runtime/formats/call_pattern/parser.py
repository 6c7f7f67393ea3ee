"""``call_pattern``: read calls described as literal text and typed slots (``ToolsSpec.pattern``).

The call between ``call_start`` and ``call_end`` is a list of parts: literals and the slots ``$name``,
``$id``, ``$index`` and ``$args``.  Everything up to the arguments is the call's *header*, read by a pure
lookahead before anything is emitted (so text that merely starts like a call stays content); the
arguments are then read as the pattern says:

- ``json``: streamed through as the model writes them, as ``tag_with_json`` does;
- ``object``: a value in the pattern's own encoding (bare keys, a string delimiter token...), held until
  its extent is known and converted to JSON then (:mod:`~workbench.runtime.formats.call_pattern.encoding`);
- ``tagged``: one element per argument; the element's literals say which way the value is written (a
  per-type attribute such as ``text="no"`` picks the JSON reading), so no schema is needed to type it.
  A value written as a Python literal (``city='Paris', on=True``) is held until the literal ends
  (:class:`~workbench.runtime.values.PythonExtent`) and read with ``ast.literal_eval``.

A slot's text runs up to the literal that follows it.  Literals match exactly, except that whitespace in
front of a literal is free (models vary it).  The section and call-separator handling is the tag formats'
(:class:`~workbench.runtime.parsing.tool_tag.TagParser`), so a call pattern nests in the same turn machine.
"""

from __future__ import annotations

import functools
import html
import json
import re
from dataclasses import replace

from workbench.runtime.formats.call_pattern.encoding import EncodingError, ExtentScanner, read
from workbench.runtime.parsing.builder import CallLog
from workbench.runtime.parsing.core import MORE, Gen
from workbench.runtime.parsing.lookahead import Fail, Look
from workbench.runtime.parsing.markers import core_of, marker_set
from workbench.runtime.parsing.tool_tag import TagParser
from workbench.runtime.spec import ArgVariant, ToolsSpec, ValueEncoding, literal_part, pattern_literal
from workbench.runtime.values import (
    NotJsonError,
    PythonExtent,
    convert_tagged,
    dumps,
    json_type,
    python_literal,
    schema_types,
)

_DIGITS = re.compile(r"\d+")
#: Characters a function name or an argument key never holds: a slot read up to the wrong literal (one
#: that only comes later) would swallow markup, and this refuses it.
_NOT_IN_NAMES = frozenset('"<>{}\n')


def _core(part: str) -> str:
    return core_of(pattern_literal(part))


def _is_slot(part: str) -> bool:
    return part.startswith("$") and not part.startswith("$$")


def _without_closing_blanks(text: str, rest: tuple[str, ...]) -> str:
    """A raw value without the blanks its element's closing literal begins with (``\n[/ARG]``: the
    template writes the newline; it is not part of the value)."""
    for part in rest:
        if _is_slot(part):
            break
        literal = pattern_literal(part)
        blanks = literal[: len(literal) - len(literal.lstrip())]
        if literal.strip() or blanks:  # a line's end closes the value: ``KEY=VALUE\n``
            return text[: -len(blanks)] if blanks and text.endswith(blanks) else text
    return text


def _closing_blanks(rest: tuple[str, ...]) -> str:
    """The blanks that close a value when the literal after it is nothing else (``KEY=VALUE\n``)."""
    for part in rest:
        if _is_slot(part):
            return ""
        literal = pattern_literal(part)
        if literal:
            return "" if literal.strip() else literal
    return ""


def _next_literal(parts: tuple[str, ...] | list[str], k: int, after: str = "") -> str:
    """The core of the first literal after position ``k`` (``after`` when none follows)."""
    for part in parts[k + 1 :]:
        if not _is_slot(part) and _core(part):
            return _core(part)
    return after


def _blank_before_slot(parts: tuple[str, ...] | list[str], k: int) -> str:
    """The blanks alone between the header slot at ``k`` and the next one (``call NAME ID``: a space), which
    end the slot: no literal with a core comes before the next slot's text ("" otherwise)."""
    if k + 2 >= len(parts) or parts[k + 2] not in ("$name", "$id", "$index"):
        return ""
    nxt = parts[k + 1]
    return "" if _is_slot(nxt) or _core(nxt) else pattern_literal(nxt)


class CallPatternParser(TagParser):
    name = "call_pattern"

    def setup(self, t: ToolsSpec) -> None:
        super().setup(t)
        p = t.pattern
        self.p = p
        parts = list(p.call)
        k = parts.index("$args") if "$args" in parts else len(parts)
        self.head = tuple(parts[:k])
        self.tail = tuple(parts[k + 1 :]) if k < len(parts) else ()
        self.has_args = k < len(parts)
        after_call = self.call_end or self.sep or self.sec_end
        self.args_end = _next_literal(self.tail, -1, after_call)
        self.closers = [c for c in (self.call_end,) if c]
        # The literal after the arguments ends them before another argument is tried where an argument's
        # opening could read it as one (``</parameters>`` after ``<city>...</city>``: ``<`` then the key
        # ``/parameters``); not where the arguments' own opening starts with it (no sign of their end then).
        heads = [pattern_literal(v.parts[0]) for v in p.arguments if v.parts and not _is_slot(v.parts[0])]
        self.ends_args_first = bool(self.args_end) and not any(h.startswith(self.args_end) for h in heads)
        self.next_call = core_of(self.call_start)

    @property
    def has_closing_markers(self) -> bool:
        return bool(self.call_end or self.sec_end or any(not _is_slot(x) for x in self.tail))

    def trigger_cores(self) -> list[str]:
        for core in (self.sec_start, self.call_start):
            if core:
                return [core]
        first = next((_core(x) for x in self.head if not _is_slot(x) and _core(x)), "")
        return [first] if first else []

    # --------------------------------------------------------------------------- header
    def _call_header(self, look: Look) -> tuple[str, str]:
        if self.call_start:
            look.ws()
            look.lit(self.call_start)
        name, call_id = "", ""
        for k, part in enumerate(self.head):
            if not _is_slot(part):
                _lit(look, part)
                continue
            stop = _blank_before_slot(self.head, k) or _next_literal(self.head, k, self._after_head())
            nxt = self.head[k + 1] if k + 1 < len(self.head) else ""
            if self.p.args == "tagged" and nxt and not _is_slot(nxt) and not _core(nxt):
                # Only whitespace between the slot and the arguments (``NAME\ncity: "Paris"``): the
                # arguments open with a key, not a literal, so the slot ends where a name's characters do.
                stop = ""
            # A literal that opens with whitespace (``NAME #0``) is matched from its core, so the slot
            # read up to that core holds the whitespace too: names and ids never end in it.
            spaced = k + 1 < len(self.head) and pattern_literal(self.head[k + 1])[:1].isspace()
            if part in ("$name", "$id"):
                look.ws()  # names and ids never start with whitespace; a marker before them may end in it
            if part == "$name" and not nxt and self.p.args == "tagged" and self.has_args:
                # The arguments follow the name at once (``NAME<key>city</key>...``): the name ends where
                # an argument's first literal, or the call's end (no arguments), begins.
                firsts = [_first_literal(v.parts) for v in self.p.arguments]
                keyed_after_blank = [
                    not f and _opens_with_blank(v.parts)
                    for f, v in zip(firsts, self.p.arguments, strict=True)
                ]
                if any(keyed_after_blank):
                    # blanks, then a key (``NAME city="Paris"``): the name is a word, up to the blank
                    name = look.name("tool_name")
                    continue
                stops = [stop, *firsts]
                name = look.until_first(stops, "tool_name", 256)
                # (an argument that opens with blanks, `` --city=``, is matched from its core too)
                spaced = spaced or any(_opens_with_blank(v.parts) for v in self.p.arguments)
                name = name.rstrip() if spaced else name
                if not name.strip() or any(c in name for c in _NOT_IN_NAMES):
                    raise Fail
            elif part == "$name":
                again = _slot_text(look, stop, "tool_name")
                again = again.rstrip() if spaced else again
                if not again.strip() or len(again) > 256 or any(c in again for c in _NOT_IN_NAMES):
                    raise Fail
                if name and again != name:  # a call that names its function twice names one function
                    raise Fail
                name = again
            elif part == "$id":
                call_id = _slot_text(look, stop, "tool_id")
                call_id = call_id.rstrip() if spaced else call_id
                if not call_id.strip() or "\n" in call_id:
                    raise Fail
            elif part == "$index":
                _index(look)
        if not name:
            raise Fail
        return name, call_id

    def _after_head(self) -> str:
        if self.has_args and self.p.args in ("json", "object"):
            return "{"
        return self.args_end

    # --------------------------------------------------------------------------- body
    def body(self, call: CallLog | None) -> Gen[bool]:
        m = self.m
        index = call.index if call is not None else None
        if self.has_args:
            if self.p.args == "json":
                status, scanner, raw = yield from m.stream_json(call, self.terminators(self.args_end))
                m.close_json_call(call, status, scanner, raw)
                if status == MORE:
                    return False
            elif self.p.args == "object":
                complete = yield from self._encoded_args(call)
                if not complete:
                    return False
            else:
                complete = yield from self._tagged_args(call)
                if not complete:
                    return False
        for k, part in enumerate(self.tail):
            if not _is_slot(part):
                yield from m.opt_marker(_core(part), index)
                continue
            stop = _next_literal(self.tail, k, self.call_end or self.sep or self.sec_end)
            found = yield from m.lookahead(functools.partial(_tail_slot, part=part, stop=stop))
            if found is not None:
                texts = m.emit_spans(found[0].spans, index)
                if call is not None and part == "$id":
                    call.id = texts.get("tool_id", "").strip()
        yield from self.close_call(call)
        return True

    def _encoded_args(self, call: CallLog | None) -> Gen[bool]:
        m = self.m
        text = yield from self._encoded_value(call)
        if text is None:
            if call is not None:
                m.truncated(f"the arguments of tool call {call.index}")
            return False
        if call is None:
            return True
        if not text.strip():
            call.add_args("{}")
            call.closed = True
            return True
        try:
            value = read(text, self.p.encoding)
        except EncodingError as exc:
            m.drop_call(call, f"arguments are not in the template's encoding ({exc})")
            return True
        if not isinstance(value, dict):
            m.drop_call(call, "arguments are not an object")
            return True
        call.add_args(dumps(value))
        call.closed = True
        m.check_schema(call)
        return True

    def _encoded_value(self, call: CallLog | None) -> Gen[str | None]:
        """Emit one value in the pattern's encoding, up to where it ends (each character scanned once);
        its text, or None when the output ended inside it."""
        yield from self.m.ws(index=call.index if call is not None else None)
        return (yield from self._scanned(call, ExtentScanner(self.p.encoding)))

    def _python_value(self, call: CallLog | None) -> Gen[str | None]:
        """Emit one Python literal, up to where it ends (quotes and brackets followed, each character
        scanned once); its text, or None when the output ended inside it."""
        return (yield from self._scanned(call, PythonExtent()))

    def _scanned(self, call: CallLog | None, scanner: ExtentScanner | PythonExtent) -> Gen[str | None]:
        """Emit what ``scanner`` says the value spans, as it arrives; its text, or None when the output
        ended inside it."""
        m = self.m
        index = call.index if call is not None else None
        kind = "tool_args" if call is not None else "marker"
        pieces: list[str] = []
        while True:
            j, done = scanner.advance(m.buf, m.pos, m.final)
            pieces.append(m.emit(kind, j - m.pos, index))
            if done:
                return "".join(pieces)
            if m.final:
                return None
            yield from m.wait()

    def _tagged_args(self, call: CallLog | None) -> Gen[bool]:
        m = self.m
        index = call.index if call is not None else None
        count = 0
        sep = core_of(self.t.arg_separator)
        while True:
            found = yield from m.lookahead(functools.partial(self._arg_header, count=count, sep=sep))
            if found is None:
                break
            look, (key, variant, rest) = found
            m.emit_spans(look.spans, index)
            if call is not None:
                call.add_args(("{" if count == 0 else ", ") + dumps(key) + ": ")
            twins = tuple(v for v in self.p.arguments if v is not variant and v.parts == variant.parts)
            if twins:
                complete = yield from self._value_by_text(call, key, (variant, *twins), rest)
            else:
                complete = yield from self._value(call, key, variant, rest)
            count += 1
            if not complete:
                m.truncated(f"argument {key!r}")
                return False
        if call is not None:
            call.add_args("}" if count else "{}")
            call.closed = True
            m.check_schema(call)
        return True

    def _arg_header(self, look: Look, count: int, sep: str) -> tuple[str, ArgVariant, tuple[str, ...]]:
        if count and sep:
            look.ws()
            look.lit(sep)
        if count and self.ends_args_first:
            at, spans = look.i, [list(s) for s in look.spans]
            look.ws()
            if look.peek(self.args_end):
                raise Fail
            look.i, look.spans = at, spans
        if count and self.next_call and not self.args_end:
            # arguments closed by nothing: the next call's start ends them (a key never starts like it)
            at, spans = look.i, [list(s) for s in look.spans]
            look.ws()
            if look.peek(self.next_call):
                raise Fail
            look.i, look.spans = at, spans
        start_i, start_spans = look.i, [list(s) for s in look.spans]
        for variant in self.p.arguments:
            look.i, look.spans = start_i, [list(s) for s in start_spans]
            try:
                key, rest = _arg_head(look, variant)
            except Fail:
                continue
            return key, variant, rest
        raise Fail

    def _spelled_as_json(self, spelling: str, text: str) -> str:
        """A value written as a Python literal or in the pattern's encoding, as JSON arguments.

        Both non-JSON spellings are read the same way (the value's extent first, then converted), so one
        place converts them; text that does not read as a value is kept as the model wrote it, a string.
        """
        if spelling == "python":
            try:
                return dumps(python_literal(text))
            except NotJsonError:  # not a literal after all
                return json.dumps(text.strip(), ensure_ascii=False)
        try:
            return dumps(read(text, self.p.encoding))
        except EncodingError:
            return json.dumps(text, ensure_ascii=False)

    def _value(self, call: CallLog | None, key: str, variant: ArgVariant, rest: tuple[str, ...]) -> Gen[bool]:
        """Read one argument value up to the literal after it, then the rest of the element."""
        m = self.m
        index = call.index if call is not None else None
        end = _next_literal(rest, -1, self.args_end)
        schema = m.param_schema(call.name if call is not None else None, key)
        if variant.escape == "xml":  # the text first, unescaped, then read as the variant says
            text = yield from self._text_until(call, end, self._next_heads(call, rest))
            if text is None:
                return False
            text = html.unescape(_without_closing_blanks(text, rest))
            if call is not None:
                call.add_args(
                    dumps(_read_value(text, (replace(variant, escape="none"),), schema, self.p.encoding))
                )
            yield from self._rest(rest, index)
            return True
        if variant.value == "json":
            status, _, raw = yield from m.stream_json(call, self.terminators(end))
            if status == MORE:
                return False
            if call is not None and not raw.strip():
                call.add_args("null")
        elif variant.value in ("python", "encoded"):
            reader = self._python_value if variant.value == "python" else self._encoded_value
            text = yield from reader(call)
            if text is None:
                return False
            if call is not None:
                call.add_args(self._spelled_as_json(variant.value, text))
        else:
            written = yield from self._text_until(call, end, self._next_heads(call, rest))
            if written is None:
                return False
            written = _without_closing_blanks(written, rest)
            if call is not None:
                if set(variant.types) <= {"string"}:
                    call.add_args(json.dumps(written, ensure_ascii=False))
                else:
                    call.add_args(dumps(convert_tagged(written, schema, False, False)))
        yield from self._rest(rest, index)
        return True

    def _value_by_text(
        self, call: CallLog | None, key: str, variants: tuple[ArgVariant, ...], rest: tuple[str, ...]
    ) -> Gen[bool]:
        """Read a value whose element several variants write with the same literals (a template that writes
        numbers as JSON and null as Python's ``None`` in the same tag): the whole text up to the literal
        after it, then the first variant that reads it as one of its types says what it is.  Reading it as
        JSON first would take ``None`` for no value at all and leave the rest of the call as content."""
        end = _next_literal(rest, -1, self.args_end)
        text = yield from self._text_until(call, end, self._next_heads(call, rest))
        if text is None:
            return False
        text = _without_closing_blanks(text, rest)
        if call is not None:
            schema = self.m.param_schema(call.name, key)
            call.add_args(dumps(_read_value(text, variants, schema, self.p.encoding)))
        yield from self._rest(rest, call.index if call is not None else None)
        return True

    def _next_heads(self, call: CallLog | None, rest: tuple[str, ...]) -> tuple[str, ...]:
        """Where a value closed by blanks alone ends before the next argument: the blanks, then that
        argument's head as the pattern writes it for each key the tool declares (``\nunit=``).  A raw value
        may hold a line break itself, so a lone newline ends nothing; the call's closing literal after
        the value ends it as always.  None when the value has a closing literal of its own or the tool's
        keys are unknown."""
        # a value closed by nothing but the blanks between arguments ('KEY = VALUE' lines): those blanks
        sep = self.t.arg_separator
        blanks = _closing_blanks(rest) or (sep if not sep.strip() and not _next_literal(rest, -1) else "")
        # arguments that open with blanks of their own ('\nKEY: VALUE'), a value closed by nothing: the
        # next argument's head, blanks included, ends it
        opening = (
            not blanks
            and not _next_literal(rest, -1)
            and any(_opens_with_blank(v.parts) for v in self.p.arguments)
        )
        # a value closed by nothing whose argument opens with a literal of its own ('<|k|>KEY<|v|>VALUE'):
        # the next argument's opening literal ends it, and the next call's start
        openers = self._argument_openers() if not blanks and not _next_literal(rest, -1) else ()
        if openers and not opening:
            return openers
        if not (blanks or opening) or call is None or self.m.tools is None or call.name not in self.m.tools:
            return openers
        props = (self.m.tools[call.name].parameters or {}).get("properties")
        if not isinstance(props, dict):
            return ()
        heads = []
        for variant in self.p.arguments:
            if "$value" not in variant.parts:
                continue
            before = variant.parts[: variant.parts.index("$value")]
            for key in props:
                parts = keyed(before, str(key))
                if all(not _is_slot(x) for x in parts):
                    head = "".join(pattern_literal(x) for x in parts)
                    heads.append(blanks + head.lstrip() if blanks else head)
        t = self.t
        if opening and t.call_start.strip():  # ... and the next call's start, after the calls' separator
            heads.append(t.call_separator + t.call_start)
        return tuple(heads)

    def _argument_openers(self) -> tuple[str, ...]:
        """The literal every argument's element opens with, after the arguments' separator, for each way of
        writing one (``<|k|>`` of ``<|k|>$key<|v|>$value``), and the next call's start; none when an
        element opens with its key or with blanks."""
        out: list[str] = []
        for variant in self.p.arguments:
            head = variant.parts[0] if variant.parts else ""
            if _is_slot(head) or not pattern_literal(head).strip():
                return ()
            out.append(self.t.arg_separator + pattern_literal(head))
        t = self.t
        if out and t.call_start.strip():
            out.append(t.call_separator + t.call_start)
        return tuple(dict.fromkeys(out))

    def _text_until(self, call: CallLog | None, end: str, heads: tuple[str, ...] = ()) -> Gen[str | None]:
        """A value's text up to ``end`` or one of ``heads`` (emitted as it arrives; what ends it is left
        for the next reader); None when the output ended first, unless nothing but the output's end could
        end it (no closing literal at all: the last value of ``KEY: VALUE`` lines ended by a blank line),
        whose trailing blanks are then not part of it."""
        m = self.m
        index = call.index if call is not None else None
        kind = "tool_args" if call is not None else "marker"
        ends = marker_set([end, *heads]) if end or heads else marker_set([])
        pieces: list[str] = []
        while True:
            found, stop = m.scan(ends)
            pieces.append(m.emit(kind, stop - m.pos, index))
            if found is not None:
                return "".join(pieces)
            if m.final:
                return None if end or not heads else "".join(pieces).rstrip()
            yield from m.wait()

    def _rest(self, rest: tuple[str, ...], index: int | None) -> Gen[None]:
        """The element's literals after its value."""
        for part in rest:
            if not _is_slot(part):
                yield from self.m.opt_marker(_core(part), index)


def _read_value(
    text: str, variants: tuple[ArgVariant, ...], schema: object, encoding: ValueEncoding
) -> object:
    """``text`` read by the first of ``variants`` that gives a value of one of its types; the text itself
    (a string) when none does.

    The variants whose types the parameter's schema allows are tried first: a template that writes a string
    raw and a number as JSON in the same element writes ``42`` for both, and only the schema tells them
    apart (as the engines' own tagged-argument parsers convert by schema)."""
    wanted = set(schema_types(schema))
    if wanted & {"integer", "number"}:
        wanted |= {"integer", "number"}
    if wanted:
        preferred = tuple(v for v in variants if wanted & set(v.types))
        variants = (*preferred, *(v for v in variants if v not in preferred))
    if "null" in wanted and text.strip() == "null" and any("null" in v.types for v in variants):
        return None  # a nullable string's ``null`` is the null the schema allows, as the engines read it
    for variant in variants:
        ok, value = _read_as(text, variant, encoding)
        if ok:
            return value
    return convert_tagged(text, schema, False, False)


def _read_as(text: str, variant: ArgVariant, encoding: ValueEncoding) -> tuple[bool, object]:
    """(True, value) when ``variant`` reads ``text`` as a value of one of its types."""
    types = set(variant.types)
    if variant.escape == "xml":
        text = html.unescape(text)
    if variant.value == "json":
        try:
            value = json.loads(text)
        except ValueError:
            return False, None
    elif variant.value == "encoded":
        try:
            value = read(text, encoding)
        except EncodingError:
            return False, None
    elif types <= {"string"}:
        return True, text
    elif types <= {"null"}:  # the way the template wrote null (Jinja prints Python's ``None``)
        return text.strip() in ("None", "null"), None
    else:
        value = convert_tagged(text, {"type": sorted(types)}, False, False)
    return json_type(value) in types or (json_type(value) == "integer" and "number" in types), value


def _lit(look: Look, part: str) -> None:
    """Match a literal part: free whitespace in front, its core exactly, its trailing whitespace if there."""
    text = pattern_literal(part)
    core = text.strip()
    look.ws()
    if not core:
        return
    look.lit(core)
    trail = text[len(text.rstrip()) :]
    if trail:
        look.opt(trail)


def _first_literal(parts: tuple[str, ...]) -> str:
    """The core of the first literal of an argument's parts ("" when it opens with a slot)."""
    for part in parts:
        if _is_slot(part):
            return ""
        if _core(part):
            return _core(part)
    return ""


def _opens_with_blank(parts: tuple[str, ...]) -> bool:
    """Does an argument's first literal begin with whitespace (`` --KEY=VALUE``)?"""
    return bool(parts) and not _is_slot(parts[0]) and pattern_literal(parts[0])[:1].isspace()


def _slot_text(look: Look, stop: str, kind: str) -> str:
    if stop:
        return look.until(stop, kind, 256)
    return look.name(kind)


def _index(look: Look) -> str:
    if look.at_end():
        look.need()
    m = _DIGITS.match(look.buf, look.i)
    if m is None:
        raise Fail
    if m.end() >= len(look.buf):
        look.need()
    look.span("marker", m.end() - look.i)
    return m.group(0)


def keyed(parts: tuple[str, ...], key: str) -> tuple[str, ...]:
    """``parts`` with each ``$key`` slot replaced by ``key`` and the literals around it joined (pure)."""
    if "$key" not in parts:
        return tuple(parts)
    out: list[str] = []
    for part in parts:
        text = key if part == "$key" else pattern_literal(part) if not _is_slot(part) else None
        if text is None:
            out.append(part)
        elif out and not _is_slot(out[-1]):
            out[-1] = literal_part(pattern_literal(out[-1]) + text)
        else:
            out.append(literal_part(text))
    return tuple(out)


def _tail_slot(look: Look, part: str, stop: str) -> str:
    look.ws()
    if part == "$index":
        return _index(look)
    return _slot_text(look, stop, "tool_id" if part == "$id" else "marker")


def _arg_head(look: Look, variant: ArgVariant) -> tuple[str, tuple[str, ...]]:
    """Match a tagged argument's parts up to its value; (key, the parts after the value, with the key
    written in where they name it again: ``</city>`` closes ``<city>``)."""
    parts = variant.parts
    key = ""
    for k, part in enumerate(parts):
        if part == "$value":
            if not key:
                raise Fail
            return key, keyed(parts[k + 1 :], key)
        if part == "$key":
            stop = _next_literal(parts, k)
            key = _slot_text(look, stop, "tool_args").strip()
            if not key or len(key) > 128 or any(c in key for c in _NOT_IN_NAMES):
                raise Fail
            continue
        _lit(look, part)
    raise Fail
