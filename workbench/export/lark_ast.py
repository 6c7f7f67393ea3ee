"""A small grammar tree for the Lark export: xgrammar EBNF parsed into it, prefixes stripped from it.

Why a tree and not string rewriting: llguidance lexes greedily, so free text that stops at a tool-call
trigger has to be a *lazy* lexeme that ends with the trigger, and what follows must then start after the
trigger.  Taking a literal prefix off a grammar (its derivative) needs the grammar as a tree; the JSON
argument grammars arrive as xgrammar EBNF text, so they are parsed here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from workbench.proofs import Unsupported


@dataclass(frozen=True)
class Text:
    """A literal string (never contains a special token of the tokenizer)."""

    value: str


@dataclass(frozen=True)
class Tok:
    """One special token, written ``<name>`` (or ``<[id]>``) in llguidance Lark."""

    name: str
    id: int


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    """``item`` between ``lo`` and ``hi`` times (``hi=-1``: unbounded)."""

    item: Node
    lo: int
    hi: int


@dataclass(frozen=True)
class Chars:
    """One character of a class: ``ranges`` of code points, ``negated`` for ``[^...]``."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool

    def matches(self, ch: str) -> bool:
        inside = any(lo <= ord(ch) <= hi for lo, hi in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Regex:
    """A regular expression terminal (xgrammar's regex elements: ids, indices, whitespace)."""

    pattern: str


@dataclass(frozen=True)
class Ref:
    """A rule of the grammar by name."""

    name: str


@dataclass(frozen=True)
class Raw:
    """Lark text produced by the writer itself (free-text lexemes); opaque to derivatives."""

    text: str
    nullable: bool = True


Node = Union[Text, Tok, Seq, Alt, Rep, Chars, Regex, Ref, Raw]  # noqa: UP007 (runtime alias)

EPS: Node = Seq(())
FAIL: Node = Alt(())


def seq(*items: Node) -> Node:
    """A sequence, flattened, with empty parts dropped; FAIL anywhere fails the whole."""
    flat: list[Node] = []
    for item in items:
        if item == FAIL:
            return FAIL
        if isinstance(item, Seq):
            flat.extend(item.items)
        elif not (isinstance(item, Text) and item.value == ""):
            flat.append(item)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*items: Node) -> Node:
    """A choice, without failed branches and duplicates."""
    kept: list[Node] = []
    for item in items:
        parts = item.items if isinstance(item, Alt) else (item,)
        for part in parts:
            if part not in kept:
                kept.append(part)
    return kept[0] if len(kept) == 1 else Alt(tuple(kept))


# ----------------------------------------------------------------------------------------- EBNF parsing
_TOKEN = re.compile(
    r"""\s*(?:
    (?P<regex>Regex\("(?:\\.|[^"\\])*"(?:,\s*\w+=\w+)*\))
  | (?P<str>"(?:\\.|[^"\\])*")
  | (?P<cls>\[(?:\\.|[^\]\\])*\])
  | (?P<look>\(=)
  | (?P<rep>\{\s*\d+\s*(?:,\s*-?\d+\s*)?\})
  | (?P<name>[A-Za-z_][A-Za-z0-9_\-]*)
  | (?P<op>[()|*+?])
    )""",
    re.VERBOSE,
)
_ESCAPES = {
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "0": "\0",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "]": "]",
    "-": "-",
    "[": "[",
    "/": "/",
    "^": "^",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}


def _unescape(body: str) -> list[tuple[str, bool]]:
    """Characters of an EBNF string or class body, each with whether it was escaped."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append((ch, False))
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "x":
            out.append((chr(int(body[i + 2 : i + 4], 16)), True))
            i += 4
        elif nxt == "u":
            out.append((chr(int(body[i + 2 : i + 6], 16)), True))
            i += 6
        elif nxt in _ESCAPES:
            out.append((_ESCAPES[nxt], True))
            i += 2
        else:
            raise Unsupported(
                f"the argument grammar uses the escape \\{nxt}, which the Lark export does not know"
            )
    return out


def _char_class(text: str) -> Chars:
    body = text[1:-1]
    negated = body.startswith("^")
    chars = _unescape(body[1:] if negated else body)
    ranges: list[tuple[int, int]] = []
    i = 0
    while i < len(chars):
        ch, _ = chars[i]
        if i + 2 < len(chars) and chars[i + 1] == ("-", False):
            ranges.append((ord(ch), ord(chars[i + 2][0])))
            i += 3
        else:
            ranges.append((ord(ch), ord(ch)))
            i += 1
    return Chars(tuple(ranges), negated)


class _EbnfParser:
    """Recursive descent over one rule body of xgrammar's printed EBNF (lookaheads are dropped: they
    only narrow what the surrounding grammar already decides)."""

    def __init__(self, text: str, prefix: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        at = 0
        while text[at:].strip():
            m = _TOKEN.match(text, at)
            if m is None:
                raise Unsupported(
                    f"the argument grammar has EBNF the Lark export does not know: {text[at : at + 20]!r}"
                )
            self.tokens.append((m.lastgroup or "", m.group(m.lastgroup or 0)))
            at = m.end()
        self.pos = 0
        self.prefix = prefix

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ("", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.pos += 1
        return tok

    def alternatives(self) -> Node:
        options = [self.sequence()]
        while self.peek() == ("op", "|"):
            self.take()
            options.append(self.sequence())
        return alt(*options)

    def sequence(self) -> Node:
        items: list[Node] = []
        while True:
            kind, value = self.peek()
            if kind == "" or (kind == "op" and value in "|)"):
                return seq(*items)
            if kind == "look":
                self.take()
                self.alternatives()
                self.take()  # ")"
                continue
            items.append(self.postfix(self.atom()))

    def atom(self) -> Node:
        kind, value = self.take()
        if kind == "str":
            return Text("".join(ch for ch, _ in _unescape(value[1:-1])))
        if kind == "cls":
            return _char_class(value)
        if kind == "regex":  # xgrammar's pattern keyword: Regex("^...$", json_string=true)
            pattern = "".join(ch for ch, _ in _unescape(value[value.index('"') + 1 : value.rindex('"')]))
            return Regex(pattern.removeprefix("^").removesuffix("$"))
        if kind == "name":
            return Ref(self.prefix + value)
        if (kind, value) == ("op", "("):
            inner = self.alternatives()
            self.take()
            return inner
        raise Unsupported(f"the argument grammar has {value!r} where the Lark export expected a term")

    def postfix(self, node: Node) -> Node:
        while True:
            kind, value = self.peek()
            if kind == "op" and value in "*+?":
                self.take()
                node = Rep(node, *{"*": (0, -1), "+": (1, -1), "?": (0, 1)}[value])
            elif kind == "rep":
                self.take()
                nums = [int(n) for n in re.findall(r"-?\d+", value)]
                node = Rep(node, nums[0], nums[1] if len(nums) > 1 else nums[0])
            else:
                return node


def parse_ebnf(text: str, prefix: str) -> dict[str, Node]:
    """xgrammar EBNF (one ``name ::= body`` per line) -> its rules, each named ``prefix + name``."""
    rules: dict[str, Node] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, body = line.partition("::=")
        if not sep or not re.fullmatch(r"\s*[A-Za-z_][\w\-]*\s*", name):
            raise Unsupported(f"the argument grammar has a line the Lark export cannot read: {line[:40]!r}")
        parser = _EbnfParser(body, prefix)
        node = parser.alternatives()
        if parser.pos != len(parser.tokens):
            raise Unsupported(f"the argument grammar has unbalanced parentheses: {line[:40]!r}")
        rules[prefix + name.strip()] = node
    return rules


# ------------------------------------------------------------------------------------------ derivatives
def nullable(node: Node, rules: dict[str, Node], seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` matches the empty string."""
    if isinstance(node, Text):
        return node.value == ""
    if isinstance(node, (Tok, Chars)):
        return False
    if isinstance(node, Seq):
        return all(nullable(i, rules, seen) for i in node.items)
    if isinstance(node, Alt):
        return any(nullable(i, rules, seen) for i in node.items)
    if isinstance(node, Rep):
        return node.lo == 0 or nullable(node.item, rules, seen)
    if isinstance(node, Regex):
        return re.fullmatch(node.pattern, "") is not None
    if isinstance(node, Raw):
        return node.nullable
    if node.name in seen:
        return False
    return nullable(rules[node.name], rules, seen | {node.name})


def derive(node: Node, ch: str, rules: dict[str, Node], depth: int = 0) -> Node:
    """The grammar of what may follow ``ch`` in ``node`` (Brzozowski's derivative), FAIL when nothing."""
    if depth > 200:
        raise Unsupported("the grammar after the tool-call trigger is left-recursive")
    if isinstance(node, Text):
        return Text(node.value[1:]) if node.value[:1] == ch else FAIL
    if isinstance(node, (Tok, Raw)):
        if isinstance(node, Raw):
            raise Unsupported("free text right after a tool-call trigger cannot be expressed")
        return FAIL
    if isinstance(node, Chars):
        return EPS if node.matches(ch) else FAIL
    if isinstance(node, Regex):
        if re.fullmatch(node.pattern, ch) is not None or re.match(node.pattern + "$", ch) is not None:
            raise Unsupported(f"the regex /{node.pattern}/ right after the tool-call trigger cannot be split")
        return FAIL
    if isinstance(node, Ref):
        return derive(rules[node.name], ch, rules, depth + 1)
    if isinstance(node, Alt):
        return alt(*(derive(i, ch, rules, depth + 1) for i in node.items))
    if isinstance(node, Rep):
        if node.hi == 0:
            return FAIL
        rest = Rep(node.item, max(node.lo - 1, 0), node.hi - 1 if node.hi > 0 else -1)
        return seq(derive(node.item, ch, rules, depth + 1), rest)
    options: list[Node] = []
    for i, item in enumerate(node.items):
        options.append(seq(derive(item, ch, rules, depth + 1), *node.items[i + 1 :]))
        if not nullable(item, rules):
            break
    return alt(*options)


def strip_prefix(node: Node, prefix: str, rules: dict[str, Node]) -> Node:
    """``node`` with the literal ``prefix`` taken off its front, or :class:`Unsupported` when it cannot
    start with it (the trigger a lazy free-text lexeme consumed must begin what follows)."""
    for ch in prefix:
        node = derive(node, ch, rules)
        if node == FAIL:
            raise Unsupported(f"the tool section does not start with its trigger {prefix!r}")
    return node
