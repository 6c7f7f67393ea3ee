"""The ``lark`` target: the output grammar as llguidance Lark, proven by llguidance itself.

The grammar is the structural-tag export's (:func:`workbench.runtime.grammar.assembler.assemble`:
reasoning free up to its end, free text up to the tool-call trigger, then only schema-exact calls), translated
node by node.  Two things differ from xgrammar and shape the translation:

* llguidance's lexer is greedy: free text that stops at a marker must be a ``lazy`` lexeme ending with the
  marker (``until_3[lazy]: /(?s:.*)/ "<tool_call>"``), and what follows starts after the marker (its
  prefix is taken off the grammar: :func:`workbench.export.lark_ast.strip_prefix`).
* A marker that the tokenizer holds as a special token is a token, not bytes (``<|channel|>``): free text
  cannot contain it, so free text before it needs no laziness.  Which markers are special depends on the
  tokenizer, so the grammar is written for one (``--tokenizer``; else the one the proof uses).

The JSON argument grammars are xgrammar's EBNF for each schema (the same schema-exact grammar the
structural tag holds), parsed and written as Lark rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.analysis.markers import common_prefix
from workbench.export.grammar_proof import Feed, cached_tokenizer, check_tokens, prove_cases
from workbench.export.lark_ast import (
    EPS,
    Alt,
    Chars,
    Node,
    Raw,
    Ref,
    Regex,
    Rep,
    Seq,
    Text,
    Tok,
    alt,
    parse_ebnf,
    seq,
    strip_prefix,
)
from workbench.proofs import ExportError, Proof, Unsupported, first_line, inline_text
from workbench.runtime.chat import Tool
from workbench.runtime.grammar.assembler import assemble
from workbench.runtime.grammar.elements import GrammarError
from workbench.runtime.spec import FormatSpec
from workbench.validate import ROUND_TRIP_TOOLS, ValidationReport

ANY_TEXT = "/(?s:.*)/"


def split_specials(text: str, specials: Mapping[str, int]) -> Node:
    """``text`` as literals and special tokens, the way a tokenizer splits added tokens out first."""
    out: list[Node] = []
    ordered = sorted((s for s in specials if s), key=len, reverse=True)
    start = i = 0
    while i < len(text):
        hit = next((s for s in ordered if text.startswith(s, i)), None)
        if hit is None:
            i += 1
            continue
        out.append(Text(text[start:i]))
        out.append(Tok(hit, specials[hit]))
        i += len(hit)
        start = i
    out.append(Text(text[start:]))
    return seq(*out)


def text_prefix(node: Node, rules: Mapping[str, Node] | None = None, depth: int = 0) -> str:
    """The literal text every match of ``node`` starts with, up to the first special token (may be "")."""
    if isinstance(node, Ref) and rules is not None and depth < 50:
        return text_prefix(rules[node.name], rules, depth + 1)
    if isinstance(node, Text):
        return node.value
    if isinstance(node, Seq) and node.items:
        head = node.items[0]
        first = text_prefix(head, rules, depth + 1)
        if isinstance(head, Text) and len(node.items) > 1:
            return first + text_prefix(Seq(node.items[1:]), rules, depth + 1)
        return first
    if isinstance(node, Alt) and node.items:
        prefixes = [text_prefix(i, rules, depth + 1) for i in node.items]
        common = prefixes[0]
        for p in prefixes[1:]:
            while not p.startswith(common):
                common = common[:-1]
        return common
    return ""


@dataclass
class LarkWriter:
    """Translates a structural tag (xgrammar JSON) into llguidance Lark rules."""

    specials: Mapping[str, int] = field(default_factory=dict)
    text_tokens: tuple[int, ...] = ()
    free_tokens: tuple[int, ...] = ()  # special tokens free text may hold (all but the end of sequence)
    rules: dict[str, Node] = field(default_factory=dict)
    lexemes: dict[str, str] = field(default_factory=dict)  # lark rule name -> its definition line
    _ebnf_names: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------------- structural tag -> tree
    def node(self, d: dict[str, Any]) -> Node:
        kind = d.get("type")
        if kind == "const_string":
            return split_specials(d["value"], self.specials)
        if kind == "sequence":
            return self.sequence([e for e in d["elements"]])
        if kind == "or":
            return alt(*(self.node(e) for e in d["elements"]))
        if kind == "optional":
            return Rep(self.node(d["content"]), 0, 1)
        if kind == "repeat":
            return Rep(self.node(d["content"]), int(d["min"]), int(d["max"]))
        if kind == "tag":
            begin = split_specials(d["begin"], self.specials)
            end = split_specials(d["end"], self.specials)
            if d["content"].get("type") == "any_text":
                self._no_limit(d["content"])
                return seq(begin, self.text_until(end))
            return seq(begin, self.node(d["content"]), end)
        if kind == "grammar":
            return self.ebnf(d["grammar"])
        if kind == "regex":
            return Regex(d["pattern"])
        if kind == "any_text":
            self._no_limit(d)
            return self.final_text(tuple(d.get("excludes", ())))
        raise Unsupported(f"the structural tag uses a {kind!r} element, which the Lark export does not know")

    def sequence(self, elements: list[dict[str, Any]]) -> Node:
        """A sequence; free text inside it stops at what follows it (llguidance lexes greedily)."""
        for i, e in enumerate(elements):
            if e.get("type") != "any_text" or i == len(elements) - 1:
                continue
            self._no_limit(e)
            before = [self.node(x) for x in elements[:i]]
            rest = elements[i + 1 :]
            excludes = tuple(e.get("excludes", ()))
            if len(rest) == 1 and rest[0].get("type") == "optional":
                follow = self.node(rest[0]["content"])
                text = alt(self.text_then(follow, excludes), self.final_text(excludes))
                return seq(*before, text)
            return seq(*before, self.text_then(self.sequence(rest), excludes))
        return seq(*(self.node(e) for e in elements))

    @staticmethod
    def _no_limit(d: dict[str, Any]) -> None:
        if d.get("max_chars") is not None:
            raise Unsupported(
                "a length limit on free text (any_text max_chars) is not expressed in the Lark export"
            )

    # ------------------------------------------------------------------------------ free-text lexemes
    def text_then(self, follow: Node, excludes: Sequence[str] = ()) -> Node:
        """Free text, then ``follow``: a lazy lexeme up to the trigger, the marker the free text excludes
        when ``follow`` starts with its text, else the literal text ``follow`` starts with.  Free text may
        hold special tokens (Harmony's ``<|channel|>final``): text between them never holds the trigger.
        Several excluded markers (a bare pythonic list: ``[get_weather(``, ``[get_time(``) get one lazy
        lexeme each (:meth:`_text_then_each`); only when that cannot be written does the free text wait for
        the text they all start with (``[``), which cuts other markers starting with it."""
        if len(excludes) > 1:
            each = self._text_then_each(follow, excludes)
            if each is not None:
                return each
            shared = common_prefix([text_prefix(split_specials(m, self.specials)) for m in excludes])
            excludes = (shared,) if shared else excludes
        for marker in excludes:
            trigger = text_prefix(split_specials(marker, self.specials))
            if trigger:
                try:
                    rest = strip_prefix(follow, trigger, self.rules)
                except Unsupported:
                    continue
                return seq(self._tokens_between(self.final_text((marker,))), self._lazy(trigger), rest)
        trigger = text_prefix(follow, self.rules)
        if trigger:
            rest = strip_prefix(follow, trigger, self.rules)
            return seq(self._tokens_between(self._excluding((trigger,))), self._lazy(trigger), rest)
        first = _first_token(follow)
        free = self._free_text(first, _tail_after(follow, first))
        return seq(free, follow)  # ``follow`` starts with a special token: free text cannot run past it

    def _text_then_each(self, follow: Node, excludes: Sequence[str]) -> Node | None:
        """Free text up to any of several triggers, then what follows that trigger: one lazy lexeme per
        trigger, each followed by ``follow`` with that trigger taken off (the alternatives it starts).
        None when a trigger is not literal text, or ``follow`` cannot start with it."""
        triggers = [text_prefix(split_specials(m, self.specials)) for m in excludes]
        if not all(triggers):
            return None
        between = self._tokens_between(self.final_text(tuple(excludes)))
        options: list[Node] = []
        for trigger in dict.fromkeys(triggers):
            try:
                rest = strip_prefix(follow, trigger, self.rules)
            except Unsupported:
                return None
            options.append(seq(self._lazy(trigger), rest))
        return seq(between, alt(*options))

    def text_until(self, end: Node) -> Node:
        """Free text up to and including ``end`` (a tag's end marker; the text holds no special token)."""
        trigger = text_prefix(end)
        if not trigger:
            return seq(Raw(ANY_TEXT), end)
        return seq(self._lazy(trigger), strip_prefix(end, trigger, self.rules))

    def _lazy(self, trigger: str) -> Node:
        name = f"until_{len(self.lexemes)}"
        for existing, line in self.lexemes.items():
            if line == _lazy_line(existing, trigger):
                return Raw(existing, nullable=False)
        self.lexemes[name] = _lazy_line(name, trigger)
        return Raw(name, nullable=False)

    def final_text(self, excludes: tuple[str, ...]) -> Node:
        """Free text to the end of the output (special tokens between text included) that never holds an
        excluded marker: its literal text, or its first token followed by the rest of it."""
        marks = [split_specials(x, self.specials) for x in excludes]
        texts = tuple(sorted({text_prefix(m) for m in marks} - {""}))
        if texts:
            return self._text_and_tokens(self._excluding(texts), ())
        firsts = [t for t in (_first_token(m) for m in marks) if t is not None]
        if len(firsts) == 1 and len(marks) == 1:
            return self._free_text(firsts[0], _tail_after(marks[0], firsts[0]))
        if firsts:
            raise Unsupported(
                "free text that stops at several special-token markers is not expressed in Lark"
            )
        return self._text_and_tokens(Raw(ANY_TEXT), ())

    def _free_text(self, token: Tok | None, tail: str) -> Node:
        """Free text and special tokens; ``token`` only where the text after it does not start ``tail``."""
        if token is None:
            return self._text_and_tokens(Raw(ANY_TEXT), ())
        extra: list[Node] = []
        if tail:
            extra.append(seq(token, self._lexeme(f"/(?s:.*)/ & ~/{_regex_literal(tail)}(?s:.*)/")))
        return self._text_and_tokens(Raw(ANY_TEXT), (token.id,), extra)

    def _text_and_tokens(self, text: Node, banned: tuple[int, ...], extra: Sequence[Node] = ()) -> Node:
        """``text (token text)*``: special tokens other than ``banned`` between pieces of ``text``."""
        ids = [i for i in self.free_tokens if i not in banned]
        options: list[Node] = [seq(Raw(_token_set(ids), nullable=False), text)] if ids else []
        options.extend(extra)  # each ends with text of its own
        if not options:
            return text
        return seq(text, Rep(alt(*options), 0, -1))

    def _tokens_between(self, text: Node) -> Node:
        """``(text token)*`` before a lazy lexeme: text up to the trigger may hold special tokens."""
        ids = list(self.free_tokens)
        if not ids:
            return EPS
        return Rep(seq(text, Raw(_token_set(ids), nullable=False)), 0, -1)

    def _excluding(self, texts: tuple[str, ...]) -> Node:
        banned = "|".join(_regex_literal(t) for t in texts)
        return self._lexeme(f"{ANY_TEXT} & ~/(?s:.*)({banned})(?s:.*)/")

    def _lexeme(self, body: str) -> Node:
        for existing, known in self.lexemes.items():
            if known.split(": ", 1)[1] == body:
                return Raw(existing)
        name = f"TEXT_{len(self.lexemes)}"
        self.lexemes[name] = f"{name}: {body}"
        return Raw(name)

    # ------------------------------------------------------------------------------- EBNF sub-grammars
    def ebnf(self, text: str) -> Node:
        """An xgrammar EBNF grammar (JSON arguments) as rules of its own; the same text is written once."""
        if text not in self._ebnf_names:
            prefix = f"g{len(self._ebnf_names)}_"
            self.rules.update(parse_ebnf(text, prefix))
            self._ebnf_names[text] = prefix
            if prefix + "root" not in self.rules:
                raise Unsupported("an argument grammar has no root rule")
        return Ref(self._ebnf_names[text] + "root")

    # ------------------------------------------------------------------------------------- writing
    def write(self, start: Node, header: Sequence[str] = ()) -> str:
        lines = [f"// {inline_text(h)}" for h in header]  # a name with a newline must not add a rule
        # A JSON string may hold any token but the end of sequence: the parser reads a string's text as
        # text, markers included (a call argument holding ``<|channel|>`` is a string, not a header).
        inside = sorted({*self.text_tokens, *self.free_tokens})
        extra = f"<[{','.join(str(i) for i in inside)}]>" if inside else ""
        lines.append(f"start: {emit(start, extra)}")
        lines.extend(self.lexemes.values())
        used = _reachable(start, self.rules)
        lines.extend(f"{name}: {emit(body, extra)}" for name, body in self.rules.items() if name in used)
        return "\n".join(lines) + "\n"


def _first_token(node: Node) -> Tok | None:
    """The special token ``node`` starts with (every match), or None."""
    while isinstance(node, Seq) and node.items:
        node = node.items[0]
    if isinstance(node, Alt) and node.items:
        firsts = {_first_token(i) for i in node.items}
        return firsts.pop() if len(firsts) == 1 else None
    return node if isinstance(node, Tok) else None


def _tail_after(node: Node, token: Tok | None) -> str:
    """The literal text right after ``node``'s first special token, common to every alternative."""
    if token is None:
        return ""
    if isinstance(node, Alt):
        tails = [_tail_after(i, token) for i in node.items]
        common = tails[0]
        for t in tails[1:]:
            while not t.startswith(common):
                common = common[:-1]
        return common
    if isinstance(node, Seq) and node.items and node.items[0] == token:
        return text_prefix(Seq(node.items[1:])) if len(node.items) > 1 else ""
    if isinstance(node, Seq) and node.items:
        return _tail_after(node.items[0], token)
    return ""


def _token_set(ids: Sequence[int]) -> str:
    """llguidance's token-id set syntax, consecutive ids as ranges: ``<[1-3,7]>``."""
    parts: list[str] = []
    ordered = sorted(set(ids))
    start = prev = ordered[0]
    for i in [*ordered[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return f"<[{','.join(parts)}]>"


#: A special token llguidance reads by name: ``<`` name ``>`` with no ``>``, quote, space or control character
#: inside (any other name, such as one a tokenizer file crafted to hold a newline and a rule, is written by
#: its id).
_PLAIN_TOKEN = re.compile(r"<[^>\s\"\\\x00-\x1f\x7f-\x9f\u2028\u2029]+>")


def _lazy_line(name: str, trigger: str) -> str:
    return f"{name}[lazy]: {ANY_TEXT} {_string(trigger)}"


def _string(text: str) -> str:
    """A Lark string literal (JSON escapes, which llguidance reads)."""
    return json.dumps(text, ensure_ascii=False)


def _regex_char(code: int) -> str:
    ch = chr(code)
    return ch if ch.isalnum() and code < 128 else f"\\x{{{code:x}}}"


def _regex_literal(text: str) -> str:
    return "".join(_regex_char(ord(c)) for c in text)


def _chars(node: Chars) -> str:
    parts = []
    for lo, hi in node.ranges:
        lo_c, hi_c = lo, min(hi, 0xD7FF) if lo < 0xD800 <= hi else hi
        if 0xD800 <= lo <= 0xDFFF:  # surrogates are not characters in UTF-8 text
            lo_c = 0xE000
            if hi < lo_c:
                continue
        parts.append(_regex_char(lo_c) if lo_c == hi_c else f"{_regex_char(lo_c)}-{_regex_char(hi_c)}")
    if not parts:
        return "/[^\\x{0}-\\x{10ffff}]/" if not node.negated else "/(?s:.)/"
    return f"/[{'^' if node.negated else ''}{''.join(parts)}]/"


def emit(node: Node, text_tokens: str = "") -> str:
    """Lark text of one tree node.  ``text_tokens`` (``<[ids]>``) are the added tokens a string may hold (text
    to the model, and special tokens but the end of sequence): llguidance lexes them as tokens, so a
    character class that excludes some characters (a JSON string's) lets them through as well."""
    if isinstance(node, Text):
        return _string(node.value)
    if isinstance(node, Tok):  # by name when llguidance can read it as one, else by id
        plain = _PLAIN_TOKEN.fullmatch(node.name) is not None
        return node.name if plain else f"<[{node.id}]>"
    if isinstance(node, Raw):
        return node.text
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Chars):
        return f"({_chars(node)} | {text_tokens})" if text_tokens and node.negated else _chars(node)
    if isinstance(node, Regex):
        return "/" + node.pattern.replace("/", "\\/") + "/"
    if isinstance(node, Seq):
        return " ".join(_group(i, text_tokens) for i in node.items) if node.items else '""'
    if isinstance(node, Alt):
        options = [i for i in node.items if i != EPS]
        body = "(" + " | ".join(emit(i, text_tokens) for i in options) + ")"
        return body + "?" if len(options) < len(node.items) else body
    inner = _group(node.item, text_tokens)
    if (node.lo, node.hi) == (0, 1):
        return inner + "?"
    if node.hi == -1:
        return inner + ("*" if node.lo == 0 else "+" if node.lo == 1 else f"{{{node.lo},}}")
    return inner + f"{{{node.lo},{node.hi}}}"


def _group(node: Node, text_tokens: str = "") -> str:
    text = emit(node, text_tokens)
    return f"({text})" if isinstance(node, Seq) and len(node.items) > 1 else text


def _reachable(start: Node, rules: dict[str, Node]) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        node = todo.pop()
        if isinstance(node, Ref) and node.name not in seen:
            seen.add(node.name)
            todo.append(rules[node.name])
        elif isinstance(node, (Seq, Alt)):
            todo.extend(node.items)
        elif isinstance(node, Rep):
            todo.append(node.item)
    return seen


# ------------------------------------------------------------------------------------------- the target
def build_lark(
    spec: FormatSpec,
    tools: Sequence[Tool],
    *,
    specials: Mapping[str, int] | None = None,
    text_tokens: Sequence[int] = (),
    free_tokens: Sequence[int] = (),
    header: Sequence[str] = (),
) -> str:
    """The whole assistant output as llguidance Lark for ``tools`` (pure); ``specials`` are the marker
    strings the target tokenizer holds as special tokens (written ``<...>``).

    Raises:
        ExportError: no tools.
        Unsupported: no tool calls, a format without grammar, or a feature Lark cannot express (named).
    """
    if not tools:
        raise ExportError("the Lark grammar needs at least one tool")
    if spec.tools.format == "none":
        raise Unsupported("the spec has no tool calls")
    try:
        doc = assemble(spec, tools)
    except GrammarError as exc:
        raise Unsupported(f"the Lark export cannot express this spec: {exc}") from None
    writer = LarkWriter(
        specials=dict(specials or {}), text_tokens=tuple(text_tokens), free_tokens=tuple(free_tokens)
    )
    start, _ = blanks_after_gaps(writer.node(doc["format"]))
    return writer.write(start, header)


_BLANKS = " \t\n"


def blanks_after_gaps(node: Node, after_gap: bool = False) -> tuple[Node, bool]:
    r"""``node`` with the leading blanks of every literal that may follow a run of blanks (a closer's lenient
    gap, ``/[ \t\n]{0,4}/``) made a literal of their own; and whether ``node`` may end with such a run.

    llguidance lexes greedily and never gives bytes back: after a call, a separator
    ``"\n\n<</invoke>>\n<<invoke>>"`` that took ``\n\n<</invoke>>`` leaves the section's end (a gap, then
    ``<</invoke>><</subo>>``) nothing to match.  With the blanks apart, both readings end a lexeme after the
    blanks and the marker is lexed afresh.  Only after a gap: elsewhere a free-text lexeme beside the
    literal (text after ``<tool_call>`` that is not a call) would run on past a lone blank."""
    if isinstance(node, Text):
        body = node.value.lstrip(_BLANKS)
        if after_gap and body and body != node.value:
            return Seq((Text(node.value[: len(node.value) - len(body)]), Text(body))), False
        return node, after_gap and not node.value
    if isinstance(node, Regex):
        gap = any(re.fullmatch(node.pattern, ch) for ch in _BLANKS)
        return node, gap or (after_gap and re.fullmatch(node.pattern, "") is not None)
    if isinstance(node, Seq):
        items = []
        for item in node.items:
            fixed, after_gap = blanks_after_gaps(item, after_gap)
            items.append(fixed)
        return seq(*items), after_gap
    if isinstance(node, Alt):
        results = [blanks_after_gaps(i, after_gap) for i in node.items]
        return alt(*(r[0] for r in results)), any(r[1] for r in results)
    if isinstance(node, Rep):
        _, ends = blanks_after_gaps(node.item, after_gap)
        item, ends = blanks_after_gaps(node.item, after_gap or (ends and node.hi != 1))
        return Rep(item, node.lo, node.hi), ends or (node.lo == 0 and after_gap)
    return node, False


@dataclass
class LarkTokenizer:
    """A Hugging Face tokenizer and llguidance's view of it, loaded once per path."""

    name: str
    tokenizer: Any
    ll: Any
    specials: dict[str, int]
    text_tokens: tuple[int, ...] = ()  # added tokens the tokenizer does not mark special: text to the model
    free_tokens: tuple[int, ...] = ()  # special tokens but the end of sequence: free text may hold them

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))


_LOADED: dict[str, LarkTokenizer] = {}


def eos_ids(ll: Any) -> set[int]:
    """The end-of-sequence token ids of llguidance's view of a tokenizer (the model stops at them)."""
    return set(getattr(ll, "eos_tokens", None) or [ll.eos_token])


def load_lark_tokenizer(path: str | Path | None = None) -> LarkTokenizer:
    """The tokenizer the grammar is written for and proven with: ``path`` (folder or tokenizer.json), else
    the real Qwen3 tokenizer from ../shared when present, else the project's byte-level BPE."""
    import llguidance.hf

    from workbench.generation.tiny import qwen3_tokenizer_path

    def build(tokenizer: Any, name: str, n_vocab: int) -> LarkTokenizer:
        try:
            ll = llguidance.hf.from_tokenizer(tokenizer, n_vocab=n_vocab)
        except Exception as exc:
            raise ExportError(f"llguidance cannot read the tokenizer {name}: {first_line(exc)}") from None
        vocab = tokenizer.get_vocab()
        specials = {t: i for t, i in vocab.items() if i < ll.vocab_size and ll.is_special_token(i)}
        decoder = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        text_ids = tuple(sorted(i for i, t in decoder.items() if not t.special and i in specials.values()))
        free_ids = tuple(sorted(i for i in specials.values() if i not in eos_ids(ll)))
        return LarkTokenizer(name, tokenizer, ll, specials, text_ids, free_ids)

    return cached_tokenizer(_LOADED, qwen3_tokenizer_path() if path is None else path, build)


def lark_options(tok: LarkTokenizer) -> dict[str, Any]:
    """What :func:`build_lark` needs to know of a tokenizer."""
    return {"specials": tok.specials, "text_tokens": tok.text_tokens, "free_tokens": tok.free_tokens}


def compile_lark(text: str, tok: LarkTokenizer) -> Any:
    """llguidance's matcher for ``text``, or an :class:`ExportError` with llguidance's complaint."""
    import llguidance

    grammar = llguidance.grammar_from("lark", text)
    error = llguidance.LLMatcher.validate_grammar(grammar, tok.ll)
    if error:
        raise ExportError(f"llguidance cannot compile the Lark grammar: {error.strip().splitlines()[0]}")
    return grammar


def check_lark_accepted(grammar: Any, tok: LarkTokenizer, text: str, end_markers: Sequence[str]) -> str:
    """Feed ``text`` token by token to a fresh llguidance matcher: "" when every token is accepted and the
    grammar can end there (or after one of ``end_markers``, which the model emits to stop), else why not."""
    import llguidance

    matcher = llguidance.LLMatcher(tok.ll, grammar, log_level=0)  # the proof names the refusal itself

    def ends_with(marker: str) -> bool:
        trial = matcher.deep_copy()
        fed = all(trial.consume_token(t) for t in tok.encode(marker))
        return bool(fed and (trial.is_accepting() or trial.is_stopped()))

    feed = Feed(matcher.consume_token, matcher.is_accepting, ends_with)
    return check_tokens(feed, tok.encode(text), tok.tokenizer.decode, end_markers, eos_ids(tok.ll))


def prove_lark(
    spec: FormatSpec, report: ValidationReport, tok: LarkTokenizer, tools: Sequence[Tool] = ROUND_TRIP_TOOLS
) -> Proof:
    """Compile the Lark grammar for the round-trip tools and feed it every applicable round-trip output."""
    grammar = compile_lark(build_lark(spec, tools, **lark_options(tok)), tok)
    ends = [m for m in spec.end_markers if m]
    out = prove_cases(report, lambda output: check_lark_accepted(grammar, tok, output, ends))
    return Proof("lark", out, notes=(f"tokenizer: {tok.name}",))


def export_lark(
    spec: FormatSpec,
    report: ValidationReport,
    exported: FormatSpec,
    tools: Sequence[Tool] | None,
    tokenizer: str | Path | None,
) -> tuple[str, Proof, list[str]]:
    """The ``lark`` target: the grammar for ``tools`` (else the round-trip tools), written for ``tokenizer``'s
    special tokens, with provenance in its header, and llguidance's proof on the round-trip outputs."""
    import llguidance

    from workbench import __version__

    notes: list[str] = []
    if not tools:
        tools = ROUND_TRIP_TOOLS
        notes.append("no --tools: the grammar is written for the round-trip tools; pass --tools for yours")
    tok = load_lark_tokenizer(tokenizer)
    if tokenizer is None:
        notes.append(
            f"special tokens are those of the {tok.name} tokenizer; pass --tokenizer for your model's"
        )
    header = (
        "llguidance Lark grammar of the assistant output, written by the Template Workbench",
        f"workbench {__version__}; llguidance {llguidance.__version__}; tokenizer {tok.name}",
        f"template {exported.provenance.template_name or '-'}",
        f"template sha256 {exported.provenance.template_sha256 or '-'}",
        f"validation: {report.verdict.headline}",
    )
    text = build_lark(spec, tools, **lark_options(tok), header=header)
    compile_lark(text, tok)
    return text, prove_lark(spec, report, tok), notes
