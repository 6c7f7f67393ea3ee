"""Random but plausible output formats, drawn as data and written as Jinja chat templates.

The product exists for the day a new model ships, so the analysis is measured on formats it has never
seen: :func:`draw_format` draws one from a seeded :class:`random.Random` along independent axes (marker
spellings, words, whitespace around markers, the layout of a call, optional reasoning / answer / section
wrappers, separators, ids, and the template around the turn), and :func:`write_template` writes it as a
Jinja chat template of the kind a model release ships.  Every axis value is one a real model could use;
nothing here knows what the analysis can read (this is its measure, and the maintainers run a generator of
their own on formats kept from us).

A :class:`FormatDraw` is plain data: its ``axes`` name the value drawn on every axis (the pass rate is
reported per axis value), its regions hold the literal marker text, and ``renders`` says which features the
template writes (a format without reasoning never renders it, so those cases are not run).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field, replace
from typing import Any

# ------------------------------------------------------------------------------------------ the axis values
SPELLINGS = (
    "angle",  # <think> </think>
    "double_angle",  # <<think>> <</think>>
    "bracket_words",  # [THINK] [/THINK]
    "double_brackets",  # [[think]] [[/think]]
    "bars",  # <|think|> <|/think|>
    "fullwidth_bars",  # <｜think▁begin｜> <｜think▁end｜>
    "start_of",  # <|start_of_think|> <|end_of_think|>
    "hash",  # ##think## ##/think##
    "bare_words",  # THINK: on its own line ... END on its own line
)
# Spellings an element with attributes (`<parameter name="k">`, `<function=NAME>`) can be written in.
ATTRIBUTE_SPELLINGS = ("angle", "double_angle", "bracket_words", "double_brackets", "bars")
#: Spellings an element named after the function is written in (the name kept as it is, closed by a slash).
FUNCTION_NAMED_SPELLINGS = ("angle", "double_angle", "double_brackets", "bars")
# Spellings of the special tokens of headed messages (`<|start|>assistant<|channel|>final<|message|>`).
TOKEN_SPELLINGS = ("bars", "fullwidth_bars", "angle")

REASONING_WORDS = ("think", "reasoning", "thought", "analysis")
CALL_WORDS = ("tool_call", "function", "call", "invoke", "action")
ANSWER_WORDS = ("answer", "response", "final")
#: The words of the answer's wrapper beside calls (never an answer word).
BESIDE_CALLS_WORDS = ("report", "plan", "summary", "progress")
SECTION_WORDS = ("tool_calls", "calls", "functions", "actions")
WHITESPACE = ("", "\n", "\n\n", " ")

LAYOUTS = (
    "json_object",  # {"name": NAME, "arguments": {...}} with any pair of keys
    "name_json",  # NAME then the arguments as JSON (NAME\n{...}, NAME{...}, NAME[ARGS]{...})
    "tagged_kv",  # NAME <arg_key>k</arg_key><arg_value>v</arg_value> ... (values raw or JSON)
    "tagged_eq",  # <function=NAME><parameter=k>v</parameter></function>
    "attr_typed",  # <invoke name="NAME"><parameter name="k" string="true">v</parameter></invoke>
    "pythonic_json",  # [NAME(k="v", n=1, b=true)], or NAME(...) in a wrapper per call
    "pythonic_python",  # [NAME(k='v', n=1, b=True, x=None)], or NAME(...) in a wrapper per call
    "headed",  # <|start|>assistant<|channel|>final<|message|>...<|end|> and recipients for calls
)
JSON_KEYS = (
    ("name", "arguments"),
    ("function", "parameters"),
    ("tool", "args"),
    ("name", "parameters"),
    ("tool_name", "tool_input"),
    ("action", "action_input"),
)
FRAMES = ("chatml", "header_ids", "turns", "bar_roles", "fullwidth_roles", "hash_roles", "plain")
TURN_ENDS = (
    "<|im_end|>",
    "<|eot_id|>",
    "<end_of_turn>",
    "<|end|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "<|endoftext|>",
)
REASONING_KINDS = ("none", "tagged", "forced_open")
ID_PLACES = ("none", "before", "after")
TOOL_DECLARATIONS = ("json_lines", "tagged_block", "markdown")
CLOCKS = ("none", "date", "date_time")
TOOL_RESULTS = ("tool_role", "wrapped_in_user")
#: The reply as one JSON object (xLAM, BlueLM, AgentCPM-GUI): its text member, its calls member, and a
#: reasoning member when reasoning is written inside it.
ENVELOPE_TEXT_KEYS = ("thought", "answer", "content", "text", "response", "say")
ENVELOPE_CALL_KEYS = ("tool_calls", "calls", "actions", "function_calls", "FUNCTION")
ENVELOPE_REASONING_KEYS = ("reasoning", "plan", "analysis", "thinking")


def random_word(rng: random.Random) -> str:
    """A made-up word of two or three syllables (a word no list of known words holds)."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 3)))


#: Each spelling's opening and closing marker of a word: ``{w}`` the word, ``{W}`` it in capitals, ``{f}`` it
#: with the fullwidth-bar word separator.  A bare word is a line of its own, closed by a plain ``END``.
_MARKERS: dict[str, tuple[str, str]] = {
    "angle": ("<{w}>", "</{w}>"),
    "double_angle": ("<<{w}>>", "<</{w}>>"),
    "bracket_words": ("[{W}]", "[/{W}]"),
    "double_brackets": ("[[{w}]]", "[[/{w}]]"),
    "bars": ("<|{w}|>", "<|/{w}|>"),
    "fullwidth_bars": ("<｜{f}▁begin｜>", "<｜{f}▁end｜>"),
    "start_of": ("<|start_of_{w}|>", "<|end_of_{w}|>"),
    "hash": ("##{w}##", "##/{w}##"),
    "bare_words": ("{W}:", "END"),
    "comments": ("<!--{w}-->", "<!--/{w}-->"),
}


def _spell(spelling: str, word: str, side: int) -> str:
    if spelling not in _MARKERS:
        raise ValueError(f"unknown spelling {spelling!r}")
    return _MARKERS[spelling][side].format(w=word, W=_upper(word), f=word.replace("_", "▁"))


def spell_open(spelling: str, word: str) -> str:
    """The opening marker of ``word`` in ``spelling``."""
    return _spell(spelling, word, 0)


def spell_close(spelling: str, word: str) -> str:
    """The closing marker of ``word`` in ``spelling``."""
    return _spell(spelling, word, 1)


def spell_element(spelling: str, head: str) -> str:
    """An opening element with attributes (``head`` is ``parameter name="k"`` or ``function=NAME``)."""
    if spelling == "bracket_words":
        word, _, rest = head.partition(" ") if " " in head else head.partition("=")
        sep = " " if " " in head else "="
        return f"[{_upper(word)}{sep}{rest}]" if rest else f"[{_upper(word)}]"
    return spell_open(spelling, head)


def spell_token(spelling: str, word: str) -> str:
    """A special token of headed messages (one token, no closing form)."""
    if spelling == "fullwidth_bars":
        return f"<｜{word}｜>"
    if spelling == "angle":
        return f"<{word}>"
    return f"<|{word}|>"


def _upper(word: str) -> str:
    return word.upper()


# ------------------------------------------------------------------------------------------------ the draw
@dataclass(frozen=True)
class Region:
    """A wrapper: ``open + lead + BODY + trail + close``; ``close`` may be empty (an opening marker only)."""

    open: str
    close: str
    lead: str = ""
    trail: str = ""

    def wrap(self, body: str) -> str:
        return self.open + self.lead + body + self.trail + self.close


@dataclass(frozen=True)
class Headed:
    """Headed messages: each part of the answer is ``START role[channel][recipient] MSG body END``."""

    start: str
    message: str
    end: str
    call_end: str
    end_nl: str
    channel_style: str  # token | attr | none
    channel_token: str
    reasoning_channel: str
    answer_channel: str
    call_channel: str
    recipient: str  # to | role_name | role_json
    recipient_first: bool
    namespace: str
    call_role: str

    def header(self, role: str, channel: str = "", recipient: str = "") -> str:
        chan = ""
        if channel and self.channel_style == "token":
            chan = self.channel_token + channel
        elif channel and self.channel_style == "attr":
            chan = " channel=" + channel
        parts = [recipient, chan] if self.recipient_first else [chan, recipient]
        return self.start + role + "".join(parts) + self.message


@dataclass(frozen=True)
class FormatDraw:
    """One drawn format: every axis value, the literal markers and what the template renders."""

    seed: int
    axes: dict[str, str]
    spelling: str
    layout: str
    frame: str
    roles: dict[str, str]
    turn_end: str
    end_after_user: bool
    bos: str
    clock: str
    tool_declaration: str
    instruction: bool
    tool_result: str
    tool_result_region: Region | None
    reasoning: Region | None
    forced_open: bool
    reasoning_after: str
    answer: Region | None
    answer_after: str
    section: Region | None
    call: Region | None
    separator: str
    content_to_calls: str
    ids: str
    id_region: Region | None
    details: dict[str, Any] = field(default_factory=dict)
    headed: Headed | None = None
    #: DeepSeek-V3.2's switch: reasoning (and the prompt's opened block) only when ``enable_thinking`` is
    #: true, thinking off by default; off, the prompt and every answer write the block's closer alone.
    switched: bool = False
    #: A vision-first template's convention: message text is read only from typed parts (``{"type":
    #: "text"}``), a plain string writes nothing (what vLLM and SGLang pass a template that iterates content).
    parts_only: bool = False
    #: The calls written before the answer's text (GUI agents: the action, then a summary of the step).
    calls_first: bool = False
    #: The answer's text written otherwise when calls follow it: an agent's report or plan beside its calls,
    #: its answer when it does not call (WebResearcher's ``<report>``/``<answer>``, Command R+'s ``Plan:``).
    answer_with_calls: Region | None = None

    @property
    def renders(self) -> frozenset[str]:
        """The round-trip features this template writes (reasoning and call ids only when drawn)."""
        out = {"content", "tool_call", "content_with_call", "parallel_calls", "string_escapes"}
        out |= {"marker_text", "scalars", "nested"}
        # Every drawn template prints any tool definition and writes any value: the schema-shape cases too.
        out |= {"null_values", "any_of_schemas", "untyped_schemas", "nested_schemas", "enum_schemas"}
        envelope = self.details.get("envelope") or {}
        if (
            self.reasoning is not None
            or (self.headed is not None and self.headed.reasoning_channel)
            or envelope.get("reasoning_key")
        ):
            out |= {"reasoning", "reasoning_with_call"}
        if self.ids != "none":
            out.add("call_ids")
        return frozenset(out)

    @property
    def turn_ends(self) -> tuple[str, ...]:
        """The texts the render of the last assistant message may end with (the model's stop)."""
        if self.headed is not None:
            h = self.headed
            return tuple(dict.fromkeys((h.call_end + h.end_nl, h.end + h.end_nl)))
        return (self.turn_end,)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def draw_format(seed: int) -> FormatDraw:
    """The format of ``seed`` (the same seed always draws the same format)."""
    draw = _Drawer(random.Random(seed), seed).draw()
    # Drawn from a stream of its own, so that adding it left every seed's other axes as they were.
    parts_only = random.Random(f"{seed}/content_parts").random() < 0.15
    axes = {**draw.axes, "content_parts": "parts_only" if parts_only else "string_or_parts"}
    return replace(draw, axes=axes, parts_only=parts_only)


class _Drawer:
    def __init__(self, rng: random.Random, seed: int) -> None:
        self.rng = rng
        self.seed = seed
        self.axes: dict[str, str] = {}
        self.used: set[str] = set()

    def pick(self, axis: str, values: tuple[str, ...], *, weights: tuple[float, ...] | None = None) -> str:
        value = self.rng.choices(values, weights=weights)[0] if weights else self.rng.choice(values)
        self.axes[axis] = value
        return value

    def word(self, axis: str, known: tuple[str, ...]) -> str:
        """A word from ``known`` (recorded as itself) or a made-up one (recorded as ``random``)."""
        for _ in range(20):
            if self.rng.random() < 0.2:
                word, label = random_word(self.rng), "random"
            else:
                word = self.rng.choice(known)
                label = word
            if word not in self.used:
                self.used.add(word)
                self.axes[axis] = label
                return word
        raise RuntimeError("could not draw distinct words")

    def ws(self, axis: str) -> str:
        value = self.rng.choice(WHITESPACE)
        self.axes[axis] = _ws_label(value)
        return value

    def region(self, spelling: str, word: str, axis: str, *, close: bool = True) -> Region:
        lead, trail = self.ws(f"ws_{axis}_inside"), ""
        if close:
            trail = lead if self.rng.random() < 0.7 else self.rng.choice(WHITESPACE)
        if spelling == "bare_words":  # the marker is a line of its own
            lead, trail = "\n", "\n"
            self.axes[f"ws_{axis}_inside"] = _ws_label("\n")
        return Region(spell_open(spelling, word), spell_close(spelling, word) if close else "", lead, trail)

    # -------------------------------------------------------------------------------------------- draw
    def draw(self) -> FormatDraw:
        rng = self.rng
        spelling = self.pick("spelling", SPELLINGS)
        # HTML comments (<!--think--> ... <!--/think-->: every marker shares '<!--' and '-->') stand in for
        # two spellings that no draw treats apart, from a stream of their own: every seed's other axes stay.
        if spelling in ("hash", "start_of") and random.Random(f"{self.seed}/comments").random() < 0.5:
            spelling = self.axes["spelling"] = "comments"
        layout = self.pick("layout", LAYOUTS)
        frame = self.pick("frame", FRAMES)
        if rng.random() < 0.8:  # most models end a turn with their frame's own token
            turn_end = _NATURAL_TURN_END[frame]
            self.axes["turn_end"] = turn_end
        else:
            turn_end = self.pick("turn_end", TURN_ENDS)
        turn_end += "\n" if frame not in ("fullwidth_roles",) and rng.random() < 0.7 else ""
        roles = {r: _role_header(frame, r) for r in ("system", "user", "assistant", "tool")}
        end_after_user = frame != "fullwidth_roles"
        bos = rng.choice(("", "", "<s>", "<|begin_of_text|>", "<bos>"))
        self.axes["bos"] = "none" if not bos else "token"
        clock = self.pick("clock", CLOCKS, weights=(0.6, 0.25, 0.15))
        tool_declaration = self.pick("tool_declaration", TOOL_DECLARATIONS)
        instruction = rng.random() < 0.5
        self.axes["instruction"] = "yes" if instruction else "no"

        reasoning_kind = self.pick("reasoning", REASONING_KINDS, weights=(0.3, 0.4, 0.3))
        reasoning = None
        reasoning_after = ""
        if reasoning_kind != "none" and layout != "headed":
            word = self.word("reasoning_word", REASONING_WORDS)
            reasoning = self.region(spelling, word, "reasoning")
            reasoning_after = self.ws("ws_after_reasoning")
            if spelling == "bare_words":
                reasoning_after = "\n"
                self.axes["ws_after_reasoning"] = _ws_label(reasoning_after)
        forced_open = reasoning is not None and reasoning_kind == "forced_open"

        answer = None
        answer_after = ""
        if layout != "headed" and rng.random() < 0.3:
            word = self.word("answer_word", ANSWER_WORDS)
            answer = self.region(spelling, word, "answer")
        self.axes["answer_wrapper"] = "yes" if answer else "no"

        tool_result = self.pick("tool_result", TOOL_RESULTS)
        tool_result_region = None
        if tool_result == "wrapped_in_user":
            word = self.word("tool_result_word", ("tool_response", "tool_result", "observation", "output"))
            tool_result_region = Region(spell_open(spelling, word), spell_close(spelling, word), "\n", "\n")

        # The conversation frame around the answer: drawn once, the same fields for every layout.
        conversation: dict[str, Any] = dict(
            spelling=spelling,
            frame=frame,
            roles=roles,
            turn_end=turn_end,
            end_after_user=end_after_user,
            bos=bos,
            clock=clock,
            tool_declaration=tool_declaration,
            instruction=instruction,
            tool_result=tool_result,
            tool_result_region=tool_result_region,
        )
        if layout == "headed":
            return self._headed(conversation, reasoning_kind)

        call_word = self.word("call_word", CALL_WORDS)
        details: dict[str, Any] = {}
        call_style = "pair"
        section_on = rng.random() < 0.4
        if layout == "json_object":
            call_style = rng.choice(("pair", "pair", "none"))
            keys = rng.choice(JSON_KEYS)
            details.update(name_key=keys[0], args_key=keys[1], compact=rng.random() < 0.4)
            details["id_key"] = rng.choice(("id", "call_id"))
            if call_style == "none" and section_on:
                details["array"] = rng.random() < 0.6
        elif layout == "name_json":
            call_style = rng.choice(("pair", "pair", "open_only"))
            name_sep = rng.choice(("\n", "", " ", "args_marker"))
            if name_sep == "args_marker":
                name_sep = spell_open(spelling, self.word("args_word", ("args", "arguments", "params")))
            details.update(name_sep=name_sep, compact=rng.random() < 0.4)
        elif layout == "tagged_kv":
            key_word, value_word = rng.choice(
                (("arg_key", "arg_value"), ("key", "value"), ("param", "value"))
            )
            # A bare word line cannot hold a key or a value: those are spelled in angle brackets then.
            inner = spelling if spelling != "bare_words" and rng.random() < 0.7 else "angle"
            details.update(
                key_open=spell_open(inner, key_word),
                key_close=spell_close(inner, key_word),
                value_open=spell_open(inner, value_word),
                value_close=spell_close(inner, value_word),
                name_ws=rng.choice(("\n", " ", "")),
                pair_ws=rng.choice(("", "\n")),
                arg_ws=rng.choice(("", "\n")),
            )
            self.axes["inner_spelling"] = inner
        elif layout in ("tagged_eq", "attr_typed"):
            # The function element wraps each call already: one more wrapper, per call or around them all.
            call_style = rng.choice(("pair", "none"))
            section_on = call_style == "none"
            inner = spelling if spelling in ATTRIBUTE_SPELLINGS and rng.random() < 0.7 else "angle"
            self.axes["inner_spelling"] = inner
            fn_word = self.word("function_word", ("function", "invoke", "tool", "fn"))
            param_word = self.word("parameter_word", ("parameter", "param", "arg", "argument"))
            details.update(
                inner=inner,
                fn_word=fn_word,
                param_word=param_word,
                inner_ws=rng.choice(("", "\n")),
                value_ws=rng.choice(("", "\n")) if layout == "tagged_eq" else "",
            )
            # Values XML-escaped where they are written (``a &lt; b``), from a stream of their own.
            escaped = random.Random(f"{self.seed}/value_escape").random() < 0.25
            details["escaped"] = escaped
            self.axes["value_escape"] = "xml" if escaped else "none"
            if layout == "attr_typed":
                details["type_attr"] = self.pick("type_attribute", ("string_flag", "type_name"))
            elif inner != "bracket_words":  # (a bracket word is written in capitals: no key stays itself)
                # Drawn from a stream of its own, so that adding it left every seed's other axes as they were.
                named = random.Random(f"{self.seed}/param_names").random() < 0.35
                details["named"] = named
                self.axes["param_names"] = "element_named" if named else "attribute"
            if inner in FUNCTION_NAMED_SPELLINGS:
                # The call an element named after the function (``<get_weather>...</get_weather>``, Cline's
                # XML tools), from a stream of its own as well.
                fn_named = random.Random(f"{self.seed}/function_element").random() < 0.3
                details["fn_named"] = fn_named
                self.axes["function_element"] = "named_by_function" if fn_named else "word"
        else:  # pythonic: a list of calls (optionally in a section), or each call in a wrapper of its own
            listed = rng.random() < 0.7
            self.axes["pythonic_list"] = "yes" if listed else "no"
            details["list"] = listed
            call_style = "none" if listed else "pair"
            section_on = listed and rng.random() < 0.5
            details["spaced"] = rng.random() < 0.8
        self.axes["call_wrapper"] = call_style

        call = None
        if call_style != "none":
            call = self.region(spelling, call_word, "call", close=call_style == "pair")
        section = None
        if section_on:
            word = self.word("section_word", SECTION_WORDS)
            section = self.region(spelling, word, "section")
        self.axes["section"] = "yes" if section else "no"

        if details.get("list") or details.get("array"):
            separator = ", " if details.get("list") or rng.random() < 0.7 else ","
        elif call is None and section is None:
            separator = "\n"
        else:
            separator = rng.choice(WHITESPACE)
            if spelling == "bare_words":
                separator = "\n"
        self.axes["separator"] = _ws_label(separator)
        content_to_calls = self.ws("ws_before_calls")
        if spelling == "bare_words" and (call is not None or section is not None):
            content_to_calls = "\n"  # a bare-word marker is a line of its own
            self.axes["ws_before_calls"] = _ws_label(content_to_calls)

        ids = "none"
        id_region = None
        if not layout.startswith("pythonic"):
            ids = self.pick("ids", ID_PLACES)
            if ids != "none" and layout != "json_object":
                word = self.word("id_word", ("call_id", "id", "tool_call_id"))
                inner = details.get("inner", spelling if spelling != "bare_words" else "angle")
                id_region = Region(spell_open(inner, word), spell_close(inner, word))
        else:
            self.axes["ids"] = "none"
        # Drawn from a stream of its own, so that adding it left every seed's other axes as they were.
        switched = forced_open and random.Random(f"{self.seed}/thinking_switch").random() < 0.3
        if forced_open:
            self.axes["thinking_switch"] = "default_off" if switched else "none"
        calls_first = random.Random(f"{self.seed}/call_order").random() < 0.2
        self.axes["call_order"] = "calls_first" if calls_first else "text_first"
        if layout == "json_object":
            # The whole reply one JSON object holding the text and the calls, from a stream of its own.
            envelope = self._envelope(reasoning is not None, member=not forced_open)
            if envelope is not None:
                details["envelope"] = envelope
                call = section = answer = None
                calls_first = False
                if envelope["reasoning_key"]:
                    reasoning, reasoning_after = None, ""
        answer_with_calls = None
        if not calls_first and "envelope" not in details:
            answer_with_calls = self._answer_with_calls(spelling, answer)
        return FormatDraw(
            seed=self.seed,
            axes=dict(self.axes),
            **conversation,
            layout=layout,
            reasoning=reasoning,
            forced_open=forced_open,
            switched=switched,
            reasoning_after=reasoning_after,
            answer=answer,
            answer_after=answer_after,
            section=section,
            call=call,
            separator=separator,
            content_to_calls=content_to_calls,
            ids=ids,
            id_region=id_region,
            details=details,
            calls_first=calls_first,
            answer_with_calls=answer_with_calls,
        )

    def _answer_with_calls(self, spelling: str, answer: Region | None) -> Region | None:
        """A second wrapper for the answer's text beside calls, or None, from a stream of its own: a marker
        pair of another word (with the answer's whitespace inside), or a label line ('Plan: TEXT')."""
        rng = random.Random(f"{self.seed}/answer_beside_calls")
        if rng.random() >= 0.2:
            self.axes["answer_beside_calls"] = "as_answer"
            return None
        word = rng.choice(BESIDE_CALLS_WORDS)
        if rng.random() < 0.4:
            self.axes["answer_beside_calls"] = "label"
            return Region(f"{word.capitalize()}: ", "", "", "\n")
        self.axes["answer_beside_calls"] = "wrapper"
        lead, trail = (answer.lead, answer.trail) if answer is not None else ("", "")
        if spelling == "bare_words":
            lead, trail = "\n", "\n"
        return Region(spell_open(spelling, word), spell_close(spelling, word), lead, trail)

    def _envelope(self, reasons: bool, *, member: bool) -> dict[str, Any] | None:
        """The reply envelope of a JSON-object layout, or None (a text answer, calls behind markers):
        its members' keys, order and empty forms, drawn from a stream of their own."""
        rng = random.Random(f"{self.seed}/reply_envelope")
        if rng.random() >= 0.35:
            self.axes["reply"] = "text"
            return None
        self.axes["reply"] = "envelope"
        text_key = rng.choice(ENVELOPE_TEXT_KEYS)
        calls_key = rng.choice(ENVELOPE_CALL_KEYS)
        in_member = reasons and member and rng.random() < 0.5
        self.axes["envelope_reasoning"] = "member" if in_member else ("markers" if reasons else "none")
        reasoning_key = rng.choice([k for k in ENVELOPE_REASONING_KEYS if k != text_key]) if in_member else ""
        members = [reasoning_key, text_key] if reasoning_key else [text_key]
        members.insert(rng.randrange(len(members) + 1), calls_key)
        if rng.random() < 0.3:
            members.insert(rng.randrange(len(members) + 1), "status")
        empty_text = rng.choice(('""', "null", ""))
        empty_calls = rng.choice(("[]", "null", ""))
        self.axes["envelope_empty"] = f"text:{empty_text or 'omit'},calls:{empty_calls or 'omit'}"
        return dict(
            text_key=text_key,
            calls_key=calls_key,
            reasoning_key=reasoning_key,
            members=members,
            empty_text=empty_text,
            empty_calls=empty_calls,
        )

    def _headed(self, conversation: dict[str, Any], reasoning_kind: str) -> FormatDraw:
        """Headed messages: the frame is the headers' own (``START role ... MSG body END``)."""
        rng = self.rng
        tokens = self.pick("token_spelling", TOKEN_SPELLINGS)
        start_word, message_word, end_word = rng.choice(
            (("start", "message", "end"), ("im_start", "im_sep", "im_end"), ("turn", "content", "end_turn"))
        )
        end = spell_token(tokens, end_word)
        call_end = spell_token(tokens, "call") if rng.random() < 0.5 else end
        channel_style = self.pick("channel_style", ("token", "attr", "none"), weights=(0.5, 0.3, 0.2))
        recipient = self.pick("recipient", ("to", "role_name", "role_json"))
        reasoning_channel = ""
        if channel_style != "none" and reasoning_kind != "none":
            reasoning_channel = self.word("reasoning_word", ("analysis", "thought", "think", "reasoning"))
        answer_channel = ""
        if channel_style != "none":
            answer_channel = self.word("answer_word", ("final", "answer", "response"))
        call_channel = ""
        if channel_style != "none" and rng.random() < 0.6:
            call_channel = self.word("call_channel_word", ("commentary", "tool", "calls"))
        headed = Headed(
            start=spell_token(tokens, start_word),
            message=spell_token(tokens, message_word),
            end=end,
            call_end=call_end,
            end_nl=rng.choice(("", "\n")),
            channel_style=channel_style,
            channel_token=spell_token(tokens, "channel"),
            reasoning_channel=reasoning_channel,
            answer_channel=answer_channel,
            call_channel=call_channel,
            recipient=recipient,
            recipient_first=rng.random() < 0.4,
            namespace=rng.choice(("functions.", "", "tool.")),
            call_role=self.word("call_word", ("tool_call", "call", "function", "action")),
        )
        # Drawn from a stream of its own, so that adding it left every seed's other axes as they were: a
        # header ended by a newline instead of a token (Harmony's channels and recipients in ChatML).
        newline = random.Random(f"{self.seed}/header_end").random() < 0.35
        if newline:
            headed = replace(headed, message="\n")
        self.axes["header_end"] = "newline" if newline else "token"
        self.axes["call_wrapper"] = "header"
        self.axes["section"] = "no"
        self.axes["ids"] = "none"
        self.axes["separator"] = _ws_label(headed.end_nl)
        return FormatDraw(
            seed=self.seed,
            axes=dict(self.axes),
            **{**conversation, "frame": "headed"},
            layout="headed",
            reasoning=None,
            forced_open=False,
            reasoning_after="",
            answer=None,
            answer_after="",
            section=None,
            call=None,
            separator="",
            content_to_calls="",
            ids="none",
            id_region=None,
            details={"compact": rng.random() < 0.4},
            headed=headed,
        )


_NATURAL_TURN_END = {
    "chatml": "<|im_end|>",
    "header_ids": "<|eot_id|>",
    "turns": "<end_of_turn>",
    "bar_roles": "<|end|>",
    "fullwidth_roles": "<｜end▁of▁sentence｜>",
    "hash_roles": "</s>",
    "plain": "<|endoftext|>",
}


def _ws_label(ws: str) -> str:
    return {"": "none", "\n": "newline", "\n\n": "blank_line", " ": "space"}.get(ws, repr(ws))


#: Each frame's role header: ``{role}`` as written, ``{Role}`` capitalised, ``{turn_role}`` with the
#: assistant called ``model`` (Gemma's turns).
_ROLE_HEADERS = {
    "chatml": "<|im_start|>{role}\n",
    "header_ids": "<|start_header_id|>{role}<|end_header_id|>\n\n",
    "turns": "<start_of_turn>{turn_role}\n",
    "bar_roles": "<|{role}|>\n",
    "fullwidth_roles": "<｜{Role}｜>",
    "hash_roles": "### {Role}:\n",
    "plain": "{Role}: ",
}


def _role_header(frame: str, role: str) -> str:
    if frame not in _ROLE_HEADERS:
        raise ValueError(f"unknown frame {frame!r}")
    turn_role = "model" if role == "assistant" else role
    return _ROLE_HEADERS[frame].format(role=role, Role=role.capitalize(), turn_role=turn_role)


# ---------------------------------------------------------------------------------------- the template
def lit(text: str) -> str:
    """``text`` as a Jinja string literal."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\t", "\\t")
    return f"'{escaped}'"


def emit(*parts: str) -> str:
    """A Jinja output statement that writes the concatenation of the expressions ``parts``."""
    return "{{- " + " ~ ".join(parts) + " -}}"


_VALUE_MACROS = """\
{%- macro raw_or_json(v) -%}
    {%- if v is string -%}{{- v -}}{%- else -%}{{- v | tojson -}}{%- endif -%}
{%- endmacro -%}
{%- macro json_type(v) -%}
    {%- if v is string -%}string{%- elif v is boolean -%}boolean{%- elif v is none -%}null
    {%- elif v is integer -%}integer{%- elif v is float -%}number{%- elif v is mapping -%}object
    {%- else -%}array{%- endif -%}
{%- endmacro -%}
{%- macro py_value(v) -%}
    {%- if v is string -%}
        {%- set s = v | replace('\\\\', '\\\\\\\\') | replace("'", "\\\\'") -%}
        {{- "'" ~ s | replace('\\n', '\\\\n') | replace('\\t', '\\\\t') ~ "'" -}}
    {%- elif v is boolean -%}{{- 'True' if v else 'False' -}}
    {%- elif v is none -%}{{- 'None' -}}
    {%- elif v is mapping -%}
        {{- '{' -}}
        {%- for k, x in v | items -%}
            {{- py_value(k) ~ ': ' ~ py_value(x) -}}{%- if not loop.last -%}{{- ', ' -}}{%- endif -%}
        {%- endfor -%}
        {{- '}' -}}
    {%- elif v is sequence -%}
        {{- '[' -}}
        {%- for x in v -%}{{- py_value(x) -}}{%- if not loop.last -%}{{- ', ' -}}{%- endif -%}{%- endfor -%}
        {{- ']' -}}
    {%- else -%}{{- v | tojson -}}
    {%- endif -%}
{%- endmacro -%}
{%- macro text(content) -%}
    {%- if content is string -%}{{- content -}}{#- string -#}
    {%- elif content is iterable and content is not mapping -%}
        {%- for part in content -%}
            {%- if part is mapping and part.text is defined -%}{{- part.text -}}{%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro -%}
"""


#: What the ``text`` macro writes for a plain string (dropped in ``parts_only`` formats).
_STRING_TEXT = "{{- content -}}{#- string -#}"


def write_template(draw: FormatDraw) -> str:
    """``draw`` as a Jinja chat template (transformers' conventions: ``messages``, ``tools``,
    ``add_generation_prompt``; arguments as a mapping)."""
    macros = _VALUE_MACROS.replace(_STRING_TEXT, "") if draw.parts_only else _VALUE_MACROS
    lines = [f"{{#- fuzzed format, seed {draw.seed}: {_describe(draw)} -#}}", macros]
    lines += _call_macros(draw)
    lines += _frame(draw)
    return "\n".join(lines) + "\n"


def _describe(draw: FormatDraw) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(draw.axes.items()) if not k.startswith("ws_"))


def _json_args(draw: FormatDraw) -> str:
    if draw.details.get("compact"):
        return "(args if args is string else args | tojson(separators=(',', ':')))"
    return "(args if args is string else args | tojson)"


def _open_call() -> list[str]:
    return [
        "    {%- set f = tc.function if tc.function is defined else tc -%}",
        "    {%- set args = f.arguments if f.arguments is defined else {} -%}",
    ]


def _call_macros(draw: FormatDraw) -> list[str]:
    """The ``call(tc)`` and ``calls(tcs)`` macros of the layout (the history and the example use them)."""
    if draw.headed is not None:
        return _headed_macros(draw)
    d = draw.details
    body: list[str] = ["{%- macro call(tc) -%}", *_open_call()]
    if draw.layout not in ("json_object", "name_json"):
        body.append(
            "    {%- if args is string -%}{{- raise_exception('arguments must be an object') -}}{%- endif -%}"
        )
    if draw.call is not None:
        body.append("    " + emit(lit(draw.call.open + draw.call.lead)))
    if draw.layout == "json_object":
        sep, colon = (",", ":") if d.get("compact") else (", ", ": ")
        name = lit('{"' + d["name_key"] + '"' + colon) + " ~ (f.name | tojson)"
        ident = lit(sep + '"' + d["id_key"] + '"' + colon) + " ~ (tc.id | tojson)"
        args = lit(sep + '"' + d["args_key"] + '"' + colon) + " ~ " + _json_args(draw) + " ~ '}'"
        if draw.ids == "before":
            ident = lit('{"' + d["id_key"] + '"' + colon) + " ~ (tc.id | tojson)"
            name = lit(sep + '"' + d["name_key"] + '"' + colon) + " ~ (f.name | tojson)"
            body.append("    " + emit(ident, name, args))
        elif draw.ids == "after":
            body.append("    " + emit(name, ident, args))
        else:
            body.append("    " + emit(name, args))
    elif draw.layout == "name_json":
        body += _id_part(draw, "before")
        body.append("    " + emit("f.name"))
        body += _id_part(draw, "after")
        body.append("    " + emit(lit(d["name_sep"]), _json_args(draw)))
    elif draw.layout == "tagged_kv":
        body += _id_part(draw, "before")
        body.append("    " + emit("f.name", lit(d["name_ws"])))
        body += _id_part(draw, "after")
        body += [
            "    {%- for k, v in args | items -%}",
            "        " + emit(lit(d["key_open"]), "k", lit(d["key_close"] + d["pair_ws"] + d["value_open"]),
                              "raw_or_json(v)", lit(d["value_close"])),
            "        {%- if not loop.last -%}" + emit(lit(d["arg_ws"])) + "{%- endif -%}",
            "    {%- endfor -%}",
        ]  # fmt: skip
    elif draw.layout in ("tagged_eq", "attr_typed"):
        inner, ws = d["inner"], d["inner_ws"]
        if draw.layout == "tagged_eq":
            fn_head = "'" + _el(inner, d["fn_word"] + "=") + "' ~ f.name ~ '" + _el_end(inner) + "'"
        else:
            fn_head = "'" + _el(inner, d["fn_word"] + ' name="') + "' ~ f.name ~ '\"" + _el_end(inner) + "'"
        fn_close = lit(spell_close(inner, d["fn_word"]))
        if d.get("fn_named"):
            fn_head = _named_marker(spell_open(inner, "\x00"), "f.name")
            fn_close = _named_marker(spell_close(inner, "\x00"), "f.name")
        body += _id_part(draw, "before")
        body.append("    " + emit(fn_head, lit(ws)))
        body += _id_part(draw, "after")
        p_close = lit(spell_close(inner, d["param_word"]) + ws)
        if d.get("named"):  # <city>v</city>: the element is named by the key (Anthropic's XML)
            p_head = _keyed_marker(spell_open(inner, "\x00"))
            p_close = _keyed_marker(spell_close(inner, "\x00")) + " ~ " + lit(ws)
        elif draw.layout == "tagged_eq":
            p_head = "'" + _el(inner, d["param_word"] + "=") + "' ~ k ~ '" + _el_end(inner) + "'"
        elif d["type_attr"] == "string_flag":
            p_head = (
                "'" + _el(inner, d["param_word"] + ' name="') + "' ~ k ~ '\" string=\"' ~ "
                "('true' if v is string else 'false') ~ '\"" + _el_end(inner) + "'"
            )
        else:
            p_head = (
                "'"
                + _el(inner, d["param_word"] + ' name="')
                + "' ~ k ~ '\" type=\"' ~ json_type(v) ~ '\""
                + _el_end(inner)
                + "'"
            )
        value = "(raw_or_json(v) | e)" if d.get("escaped") else "raw_or_json(v)"
        body += [
            "    {%- for k, v in args | items -%}",
            "        " + emit(p_head, lit(d["value_ws"]), value, lit(d["value_ws"]), p_close),
            "    {%- endfor -%}",
            "    " + emit(fn_close),
        ]  # fmt: skip
    else:  # pythonic
        value = "(v | tojson)" if draw.layout == "pythonic_json" else "py_value(v)"
        comma = ", " if d.get("spaced") else ","
        body += [
            "    " + emit("f.name", "'('"),
            "    {%- for k, v in args | items -%}",
            "        " + emit("k", "'='", value),
            "        {%- if not loop.last -%}" + emit(lit(comma)) + "{%- endif -%}",
            "    {%- endfor -%}",
            "    " + emit("')'"),
        ]  # fmt: skip
    if draw.call is not None:
        body.append("    " + emit(lit(draw.call.trail + draw.call.close)))
    body.append("{%- endmacro -%}")

    array = bool(d.get("list") or d.get("array"))
    calls = ["{%- macro calls(tcs) -%}"]
    if draw.section is not None:
        calls.append("    " + emit(lit(draw.section.open + draw.section.lead)))
    if array:
        calls.append("    " + emit("'['"))
    calls += [
        "    {%- for tc in tcs -%}",
        "        {%- if not loop.first -%}" + emit(lit(draw.separator)) + "{%- endif -%}",
        "        " + emit("call(tc)"),
        "    {%- endfor -%}",
    ]
    if array:
        calls.append("    " + emit("']'"))
    if draw.section is not None:
        calls.append("    " + emit(lit(draw.section.trail + draw.section.close)))
    calls.append("{%- endmacro -%}")
    return body + calls


def _keyed_marker(marker: str) -> str:
    """A Jinja expression writing ``marker`` with the argument's key ``k`` where it holds ``\x00``."""
    return _named_marker(marker, "k")


def _named_marker(marker: str, name: str) -> str:
    """A Jinja expression writing ``marker`` with the expression ``name`` where it holds ``\x00``."""
    before, _, after = marker.partition("\x00")
    return lit(before) + f" ~ {name} ~ " + lit(after)


def _el(spelling: str, head: str) -> str:
    """The start of an element with attributes, up to where the dynamic part goes (escaped for ``'...'``)."""
    opened = spell_element(spelling, head + "\x00")
    return opened[: opened.index("\x00")].replace("\\", "\\\\").replace("'", "\\'")


def _el_end(spelling: str) -> str:
    opened = spell_element(spelling, "x=\x00")
    return opened[opened.index("\x00") + 1 :]


def _id_part(draw: FormatDraw, where: str) -> list[str]:
    if draw.ids != where or draw.id_region is None:
        return []
    return ["    " + emit(lit(draw.id_region.open), "tc.id", lit(draw.id_region.close))]


def _headed_macros(draw: FormatDraw) -> list[str]:
    h = draw.headed
    assert h is not None
    args = _json_args(draw)
    if h.recipient == "to":
        head = lit(h.header("assistant", h.call_channel, " to=" + h.namespace + "\x00"))
        before, after = head.split("\x00")
        header = f"{before}' ~ f.name ~ '{after}"
        body = args
    elif h.recipient == "role_name":
        head = lit(h.header(h.call_role + " \x00", h.call_channel))
        before, after = head.split("\x00")
        header = f"{before}' ~ f.name ~ '{after}"
        body = args
    else:
        header = lit(h.header(h.call_role, h.call_channel))
        colon = ":" if draw.details.get("compact") else ": "
        sep = "," if draw.details.get("compact") else ", "
        body = f"'{{\"name\"{colon}' ~ (f.name | tojson) ~ '{sep}\"arguments\"{colon}' ~ {args} ~ '}}'"
    return [
        "{%- macro call(tc) -%}",
        *_open_call(),
        "    " + emit(header, body, lit(h.call_end + h.end_nl)),
        "{%- endmacro -%}",
        "{%- macro calls(tcs) -%}",
        "    {%- for tc in tcs -%}" + emit("call(tc)") + "{%- endfor -%}",
        "{%- endmacro -%}",
    ]


_EXAMPLE_CALL = "{'id': 'call_1', 'name': 'tool_name', 'arguments': {'argument': 'value'}}"


def _frame(draw: FormatDraw) -> list[str]:
    """The conversation: system block (clock, tools), user / tool / assistant turns, generation prompt."""
    headed = draw.headed
    if headed is not None:
        role = {r: headed.start + r + headed.message for r in ("system", "user", "assistant", "tool")}
        end = {r: headed.end + headed.end_nl for r in ("system", "user", "tool")}
    else:
        role = dict(draw.roles)
        end = {
            "system": draw.turn_end,
            "tool": draw.turn_end,
            "user": draw.turn_end if draw.end_after_user else "",
        }
    out = [
        "{%- if messages[0].role == 'system' -%}",
        "    {%- set system_text = text(messages[0].content) -%}",
        "    {%- set loop_messages = messages[1:] -%}",
        "{%- else -%}",
        "    {%- set system_text = '' -%}",
        "    {%- set loop_messages = messages -%}",
        "{%- endif -%}",
    ]
    if draw.bos:
        out.append(emit(lit(draw.bos)))
    condition = "true" if draw.clock != "none" else "system_text or tools"
    out.append(f"{{%- if {condition} -%}}")
    out.append("    " + emit(lit(role["system"])))
    if draw.clock != "none":
        fmt = "%d %b %Y" if draw.clock == "date" else "%Y-%m-%d %H:%M:%S"
        out.append("    " + emit(lit("Today's date: "), f"strftime_now({lit(fmt)})", lit("\n\n")))
    out.append("    " + emit("system_text"))
    out.append("    {%- if tools -%}")
    out.append("        {%- if system_text -%}" + emit(lit("\n\n")) + "{%- endif -%}")
    out += _tool_declaration(draw)
    out.append("    {%- endif -%}")
    out.append("    " + emit(lit(end["system"])))
    out.append("{%- endif -%}")
    out.append("{%- for message in loop_messages -%}")
    out.append("    {%- if message.role == 'assistant' -%}")
    out += ["        " + line for line in _assistant(draw)]
    out.append("    {%- elif message.role == 'tool' -%}")
    if draw.tool_result_region is not None and headed is None:
        r = draw.tool_result_region
        out.append(
            "        "
            + emit(
                lit(role["user"] + r.open + r.lead),
                "text(message.content)",
                lit(r.trail + r.close + end["user"]),
            )
        )
    else:
        out.append("        " + emit(lit(role["tool"]), "text(message.content)", lit(end["tool"])))
    out.append("    {%- else -%}")
    if headed is not None:
        header = emit(lit(headed.start), "message.role", lit(headed.message))
        out.append("        " + header + emit("text(message.content)", lit(end["user"])))
    else:
        out.append("        {%- if message.role == 'user' -%}" + emit(lit(role["user"])) + "{%- else -%}"
                   + emit(lit(role["system"])) + "{%- endif -%}")  # fmt: skip
        out.append("        " + emit("text(message.content)", lit(end["user"])))
    out.append("    {%- endif -%}")
    out.append("{%- endfor -%}")
    out.append("{%- if add_generation_prompt -%}")
    if headed is not None:
        # With a role switch for calls the model writes the role itself: the prompt stops at the start.
        out.append("    " + emit(lit(headed.start + ("assistant" if headed.recipient == "to" else ""))))
    else:
        out.append("    " + emit(lit(role["assistant"])))
        if draw.forced_open and draw.reasoning is not None:
            opened = emit(lit(draw.reasoning.open + draw.reasoning.lead))
            if draw.switched:
                closed = emit(lit(draw.reasoning.close + draw.reasoning_after))
                opened = f"{{%- if {_THINKING} -%}}{opened}{{%- else -%}}{closed}{{%- endif -%}}"
            out.append("    " + opened)
    out.append("{%- endif -%}")
    return out


def _tool_declaration(draw: FormatDraw) -> list[str]:
    out: list[str] = []
    each = "(tool.function if tool.function is defined else tool) | tojson"
    if draw.tool_declaration == "json_lines":
        out.append("        " + emit(lit("You can call the following functions:\n")))
        out.append("        {%- for tool in tools -%}" + emit(each, lit("\n")) + "{%- endfor -%}")
    elif draw.tool_declaration == "tagged_block":
        spelling = draw.spelling if draw.spelling in ATTRIBUTE_SPELLINGS else "angle"
        out.append("        " + emit(lit("# Tools\n\n" + spell_open(spelling, "tools") + "\n")))
        out.append("        {%- for tool in tools -%}" + emit(each, lit("\n")) + "{%- endfor -%}")
        out.append("        " + emit(lit(spell_close(spelling, "tools"))))
    else:
        out.append("        " + emit(lit("## Available tools\n")))
        out.append("        {%- for tool in tools -%}")
        out.append("            {%- set fn = tool.function if tool.function is defined else tool -%}")
        out.append("            " + emit(lit("\n### "), "fn.name", lit("\n"), "(fn.description or '')"))
        out.append("            " + emit(lit("\nParameters: "), "(fn.parameters | tojson)", lit("\n")))
        out.append("        {%- endfor -%}")
    if draw.instruction:
        out.append(
            "        "
            + emit(lit("\n\nTo call a function, reply with:\n"), f"calls([{_EXAMPLE_CALL}])", lit("\n"))
        )
    return out


#: The thinking switch's test (``switched`` formats): on only when the caller passes it true.
_THINKING = "enable_thinking is defined and enable_thinking"


def _assistant(draw: FormatDraw) -> list[str]:
    """The assistant message: reasoning, answer, calls, then the end of the turn."""
    h = draw.headed
    has_reasoning = (
        "message.reasoning_content is defined and message.reasoning_content is string"
        " and message.reasoning_content"
    )
    has_content = "message.content is string and message.content"
    content = "message.content"
    if draw.parts_only:
        has_content = "message.content is defined and message.content is not string and text(message.content)"
        content = "text(message.content)"
    has_calls = "message.tool_calls is defined and message.tool_calls"
    if h is not None:
        out = []
        if h.reasoning_channel:
            out.append(f"{{%- if {has_reasoning} -%}}"
                       + emit(lit(h.header("assistant", h.reasoning_channel)), "message.reasoning_content",
                              lit(h.end + h.end_nl)) + "{%- endif -%}")  # fmt: skip
        answer = emit(lit(h.header("assistant", h.answer_channel)), content, lit(h.end + h.end_nl))
        out.append(f"{{%- if {has_content} -%}}" + answer + "{%- endif -%}")
        out.append(f"{{%- if {has_calls} -%}}" + emit("calls(message.tool_calls)") + "{%- endif -%}")
        return out
    out = [emit(lit(draw.roles["assistant"]))]
    r = draw.reasoning
    if r is not None:
        line = f"{{%- if {has_reasoning} -%}}" + emit(
            lit(r.open + r.lead), "message.reasoning_content", lit(r.trail + r.close + draw.reasoning_after)
        )
        if draw.forced_open:
            line += "{%- else -%}" + emit(lit(r.open + r.lead + r.close + draw.reasoning_after))
        line += "{%- endif -%}"
        if draw.switched:
            line = f"{{%- if {_THINKING} -%}}{line}{{%- else -%}}" + emit(lit(r.close + draw.reasoning_after))
            line += "{%- endif -%}"
        out.append(line)
    if draw.details.get("envelope"):
        out.append(_envelope_line(draw, has_content, content, has_reasoning, has_calls))
        out.append(emit(lit(draw.turn_end)))
        return out
    a = draw.answer
    if draw.calls_first:
        text = emit(lit(a.open + a.lead), content, lit(a.trail + a.close)) if a is not None else emit(content)
        out.append(f"{{%- if {has_calls} -%}}" + emit("calls(message.tool_calls)") + "{%- endif -%}")
        out.append(f"{{%- if {has_content} -%}}"
                   + f"{{%- if {has_calls} -%}}" + emit(lit(draw.content_to_calls)) + "{%- endif -%}"
                   + text + "{%- endif -%}")  # fmt: skip
        out.append(emit(lit(draw.turn_end)))
        return out
    b = draw.answer_with_calls
    if b is not None:  # the text written otherwise when calls follow it
        alone = emit(content) if a is None else emit(lit(a.open + a.lead), content, lit(a.trail + a.close))
        beside = emit(lit(b.open + b.lead), content, lit(b.trail + b.close + draw.content_to_calls))
        out.append(f"{{%- if {has_content} -%}}{{%- if {has_calls} -%}}" + beside + "{%- else -%}" + alone
                   + "{%- endif -%}{%- endif -%}")  # fmt: skip
    elif a is not None:
        out.append(f"{{%- if {has_content} -%}}" + emit(lit(a.open + a.lead), content, lit(a.trail + a.close))
                   + f"{{%- if {has_calls} -%}}" + emit(lit(draw.content_to_calls)) + "{%- endif -%}"
                   + "{%- endif -%}")  # fmt: skip
    else:
        out.append(f"{{%- if {has_content} -%}}" + emit(content)
                   + f"{{%- if {has_calls} -%}}" + emit(lit(draw.content_to_calls)) + "{%- endif -%}"
                   + "{%- endif -%}")  # fmt: skip
    out.append(f"{{%- if {has_calls} -%}}" + emit("calls(message.tool_calls)") + "{%- endif -%}")
    out.append(emit(lit(draw.turn_end)))
    return out


def _envelope_line(
    draw: FormatDraw, has_content: str, content: str, has_reasoning: str, has_calls: str
) -> str:
    """The reply as one JSON object: its members in the drawn order, each written as the draw says when it
    has nothing (``""``, ``null``, or left out), the calls a list of the ``call`` macro's objects."""
    env = draw.details["envelope"]
    sep, colon = (",", ":") if draw.details.get("compact") else (", ", ": ")
    parts = ["{%- set ns = namespace(first=true) -%}", emit(lit("{"))]

    def member(key: str, value: str) -> str:
        head = "{%- if not ns.first -%}" + emit(lit(sep)) + "{%- endif -%}{%- set ns.first = false -%}"
        return head + emit(lit(json.dumps(key) + colon), value)

    for key in env["members"]:
        if key == env["text_key"]:
            filled, empty = f"({content} | tojson)", env["empty_text"]
            condition = has_content
        elif key == env["reasoning_key"]:
            filled, empty, condition = "(message.reasoning_content | tojson)", "", has_reasoning
        elif key == env["calls_key"]:
            items = "{%- for tc in message.tool_calls -%}{%- if not loop.first -%}" + emit(lit(sep))
            items += "{%- endif -%}" + emit("call(tc)") + "{%- endfor -%}"
            parts.append(f"{{%- if {has_calls} -%}}" + member(key, lit("[")) + items + emit(lit("]")))
            if env["empty_calls"]:
                parts.append("{%- else -%}" + member(key, lit(env["empty_calls"])))
            parts.append("{%- endif -%}")
            continue
        else:  # a status word: what the reply does next
            parts.append(member(key, f"('\"call\"' if {has_calls} else '\"done\"')"))
            continue
        line = f"{{%- if {condition} -%}}" + member(key, filled)
        if empty:
            line += "{%- else -%}" + member(key, lit(empty))
        parts.append(line + "{%- endif -%}")
    parts.append(emit(lit("}")))
    return "".join(parts)
