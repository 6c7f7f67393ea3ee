"""Sessions: a recorded generation (template, spec, model, conversation, every step) that replays offline.

A session file is the evidence behind a bug report or a demo: it must open years later, on a machine without
the model, and show exactly what happened.  So it records the template *text* (not only a path) with its
sha256, the spec the parser used, the model reference, the request (messages, tools, settings), every
:class:`~workbench.generation.step.Step` as a per-step summary, and the message the parser produced.

Design decisions:

* **Small.** Steps are summaries (top candidates, a coarse mask strip, events), never raw vocabulary masks.
  Floats are rounded to the precision a person can read, and each step is written as one compact JSON line
  while the header stays indented, so a 2,000-step session stays well under 5 MB and still diffs well.
* **Versioned.** ``"format": "workbench-session"`` plus an integer ``version``.  A file from a newer
  workbench is refused with one line rather than half-understood.
* **Atomic.** :func:`save_session` writes a temporary file in the target folder, fsyncs it and renames it
  over the target, so a crash leaves either the old file or the new one, never a half-written file.
* **Loading never writes.**  :func:`load_session` reads, checks and returns, or raises :class:`SessionError`
  with one clear line; the file on disk is never touched.

Replaying (:func:`replay_session`) feeds the recorded token texts through a fresh parser built from the
session's spec, step by step, and compares the resulting message with the recorded one.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.generation.step import Candidate, Step
from workbench.inputs import load_json_file_as
from workbench.runtime.chat import ChatDataError, Message, Tool
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.events import Event
from workbench.runtime.spec import FormatSpec, SpecError

SESSION_FORMAT = "workbench-session"
SESSION_VERSION = 1

# Rounding applied when a step is written: enough for a person reading logits and probabilities, and the
# difference between a 3 MB and an 8 MB file for 2,000 steps.
_LOGIT_DIGITS = 4
_PROB_SIGNIFICANT = 5
_TIMING_DIGITS = 3


class SessionError(WorkbenchError):
    """A session file could not be read, or it is not a session this workbench understands."""


@dataclass(frozen=True)
class TemplateRecord:
    """The template a session was made with: replay needs nothing else."""

    name: str = ""
    text: str = ""
    sha256: str = ""

    @classmethod
    def from_text(cls, text: str, name: str = "") -> TemplateRecord:
        return cls(name=name, text=text, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())


@dataclass(frozen=True)
class ModelRecord:
    """Which model produced the steps.  ``ref`` is what was passed to the loader (a path, a hub id,
    ``tiny:...``); replay never loads it."""

    name: str = ""
    ref: str = ""
    vocab_size: int = 0
    tokenizer: str = ""


@dataclass(frozen=True)
class Session:
    """One recorded generation.

    ``parsed`` is the message the parser produced at the end of generation (the CLI parse contract form:
    ``{"content", "reasoning_content", "tool_calls": [{"id", "name", "arguments"}]}``); replay must
    reproduce it from the steps alone.  ``settings`` holds the request knobs (sampling, ``constrain``,
    ``tool_choice``, ``enable_thinking``, ...) as plain JSON; ``note`` is free text for the person.
    ``template_kwargs`` are the variables the prompt was rendered with besides the conversation and the
    special tokens (``enable_thinking`` and template switches such as ``reasoning_effort``): replay shows
    them and re-renders the prompt with them.  A file written before they were recorded loads with none.
    """

    template: TemplateRecord
    spec: FormatSpec
    model: ModelRecord = field(default_factory=ModelRecord)
    messages: tuple[Message, ...] = ()
    tools: tuple[Tool, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""
    steps: tuple[Step, ...] = ()
    parsed: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    workbench_version: str = __version__
    version: int = SESSION_VERSION
    template_kwargs: dict[str, Any] = field(default_factory=dict)

    def fed_text(self, index: int) -> str:
        """The text step ``index`` gave the parser
        (:attr:`Step.fed_text <workbench.generation.step.Step.text>`).

        Usually the token's text, but not always: a character split across two tokens is only complete on
        the second (the first shows a replacement character on its own), and a stop token adds no text.
        Steps carry what the generator actually fed in ``Step.text``; replay feeds exactly that.
        """
        return self.steps[index].fed_text

    @property
    def output_text(self) -> str:
        """The generated text, as the parser received it."""
        return "".join(self.fed_text(i) for i in range(len(self.steps)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": SESSION_FORMAT,
            "version": self.version,
            "workbench_version": self.workbench_version,
            "note": self.note,
            "template": {
                "name": self.template.name,
                "sha256": self.template.sha256,
                "text": self.template.text,
            },
            "model": {
                "name": self.model.name,
                "ref": self.model.ref,
                "vocab_size": self.model.vocab_size,
                "tokenizer": self.model.tokenizer,
            },
            "spec": self.spec.to_dict(),
            "messages": [m.to_openai() for m in self.messages],
            "tools": [t.to_openai() for t in self.tools],
            "settings": self.settings,
            # Only when recorded: a session without them saves back byte for byte as it was.
            **({"template_kwargs": self.template_kwargs} if self.template_kwargs else {}),
            "prompt": self.prompt,
            "parsed": self.parsed,
            "steps": [_step_to_dict(s) for s in self.steps],
        }


# ------------------------------------------------------------------------------------------------ writing
def dumps_session(session: Session) -> str:
    """The file text: an indented header with one compact line per step (small, and diffs line by line)."""
    data = session.to_dict()
    steps = data.pop("steps")
    head = json.dumps(data, ensure_ascii=False, indent=1)
    assert head.endswith("}")
    lines = [json.dumps(s, ensure_ascii=False, separators=(",", ":")) for s in steps]
    body = ",\n  ".join(lines)
    steps_text = f'"steps": [\n  {body}\n ]' if lines else '"steps": []'
    return head[:-1].rstrip() + ",\n " + steps_text + "\n}\n"


def save_session(path: str | os.PathLike[str], session: Session) -> Path:
    """Write ``session`` to ``path`` atomically (temporary file + fsync + rename).

    Either the previous file or the complete new one exists afterwards, whatever happens during the write.
    Raises:
        SessionError: the folder does not exist or is not writable (the target is left unchanged).
    """
    target = Path(path)
    text = dumps_session(session)
    write_atomic(target, text)
    return target


def write_atomic(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` so that no reader ever sees a half-written file.

    Shared by sessions and exports.  Raises:
        SessionError: the folder is missing or unwritable; nothing was changed.
    """
    folder = target.parent if str(target.parent) else Path(".")
    if target.exists() and not target.is_file():
        # A device or pipe (``-o /dev/null``, a FIFO): renaming over it would replace the device with a
        # regular file, so write through it instead; atomicity has no meaning for a stream.
        try:
            with open(target, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        except OSError as exc:
            raise SessionError(f"cannot write {target}: {exc.strerror or exc}") from None
        return
    if not folder.is_dir():
        raise SessionError(f"cannot write {target}: folder {folder} does not exist")
    if target.is_file() and not target.stat().st_mode & 0o222:
        # Judged by the mode bits, not os.access: root may write anything, but a file someone made
        # read-only says "do not replace me", and a rename would silently ignore that.
        raise SessionError(f"cannot write {target}: the file is read-only (make it writable to replace it)")
    _remove_stale_temps(folder, target.name)
    fd, tmp_name = None, None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            fd = None
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, _file_mode(target))
        os.replace(tmp_name, target)
        tmp_name = None
        _fsync_dir(folder)
    except OSError as exc:
        raise SessionError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        if fd is not None:
            os.close(fd)
        if tmp_name is not None and os.path.exists(tmp_name):
            os.unlink(tmp_name)


#: A temporary file of an atomic write older than this was left by a writer that was killed mid-write.
STALE_TEMP_SECONDS = 60.0


def _remove_stale_temps(folder: Path, name: str) -> None:
    """Delete temporary files a killed writer of the same target left behind (best effort)."""
    now = time.time()
    for leftover in folder.glob(f".{glob.escape(name)}.*.tmp"):
        try:
            if now - leftover.stat().st_mtime > STALE_TEMP_SECONDS:
                leftover.unlink()
        except OSError:
            continue


def _file_mode(target: Path) -> int:
    """The permissions the written file gets: the replaced file's, else what ``open()`` would give
    (``mkstemp`` creates owner-only files)."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); harmless where directories cannot be opened."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _round_sig(value: float, digits: int) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, max(0, digits - 1 - math.floor(math.log10(abs(value)))))


def _finite(value: float) -> float | None:
    """JSON has no NaN/inf; a masked logit of -inf is written as null."""
    return value if math.isfinite(value) else None


def _step_to_dict(step: Step) -> dict[str, Any]:
    d = step.to_dict()
    d.pop("text", None)
    if step.fed_text != step.token_text:
        d["text"] = step.fed_text  # only where it differs from the token's own text (small files)
    d["candidates"] = [
        {
            "token_id": c.token_id,
            "text": c.text,
            "logit": _finite(round(c.logit, _LOGIT_DIGITS)),
            "prob": _round_sig(c.prob, _PROB_SIGNIFICANT),
            "allowed": c.allowed,
        }
        for c in step.candidates
    ]
    d["timings_ms"] = {k: round(v, _TIMING_DIGITS) for k, v in step.timings_ms.items()}
    d["events"] = [
        {"kind": e.kind, "text": e.text, **({"tool_index": e.tool_index} if e.tool_index is not None else {})}
        for e in step.events
    ]
    return d


# ------------------------------------------------------------------------------------------------ reading
def load_session(path: str | os.PathLike[str]) -> Session:
    """Read a session file.  Never writes anything.

    Raises:
        SessionError: one line naming the file and what is wrong (missing, not UTF-8, truncated or corrupt
            JSON, not a session, written by a newer workbench, or a bad field).
    """
    return load_json_file_as(path, "session", session_from_dict, SessionError)


def session_from_dict(data: Any) -> Session:
    """Build a :class:`Session` from decoded JSON, checking format, version and every field's type."""
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise SessionError(f'not a workbench session (expected "format": "{SESSION_FORMAT}")')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionError("session version is missing or not an integer")
    if version < 1:
        raise SessionError(f"session version {version} is impossible (versions start at 1)")
    if version > SESSION_VERSION:
        raise SessionError(
            f"session version {version} was written by a newer workbench "
            f"(this one reads up to {SESSION_VERSION})"
        )
    try:
        template = data.get("template") or {}
        _expect(template, dict, "template")
        text = _expect(template.get("text", ""), str, "template.text")
        sha = _expect(template.get("sha256", ""), str, "template.sha256")
        if text and sha and hashlib.sha256(text.encode("utf-8")).hexdigest() != sha:
            raise SessionError("template.sha256 does not match template.text (edited or damaged file)")
        model = data.get("model") or {}
        _expect(model, dict, "model")
        spec = FormatSpec.from_dict(data.get("spec"))
        raw_messages = _expect(data.get("messages", []), list, "messages")
        messages = tuple(Message.from_openai(m, f"messages[{i}]") for i, m in enumerate(raw_messages))
        raw_tools = _expect(data.get("tools", []), list, "tools")
        tools = tuple(Tool.from_openai(t, f"tools[{i}]") for i, t in enumerate(raw_tools))
        raw_steps = _expect(data.get("steps", []), list, "steps")
        steps = tuple(_step_from_dict(s, i) for i, s in enumerate(raw_steps))
        return Session(
            template=TemplateRecord(
                name=_expect(template.get("name", ""), str, "template.name"), text=text, sha256=sha
            ),
            spec=spec,
            model=ModelRecord(
                name=_expect(model.get("name", ""), str, "model.name"),
                ref=_expect(model.get("ref", ""), str, "model.ref"),
                vocab_size=_expect(model.get("vocab_size", 0), int, "model.vocab_size"),
                tokenizer=_expect(model.get("tokenizer", ""), str, "model.tokenizer"),
            ),
            messages=messages,
            tools=tools,
            settings=_expect(data.get("settings", {}), dict, "settings"),
            prompt=_expect(data.get("prompt", ""), str, "prompt"),
            steps=steps,
            parsed=_expect(data.get("parsed", {}), dict, "parsed"),
            note=_expect(data.get("note", ""), str, "note"),
            workbench_version=_expect(data.get("workbench_version", ""), str, "workbench_version"),
            version=version,
            template_kwargs=_template_kwargs(data.get("template_kwargs", {})),
        )
    except (SpecError, ChatDataError) as exc:
        raise SessionError(str(exc)) from None


def _template_kwargs(value: Any) -> dict[str, Any]:
    """The recorded template variables; a render argument among them (``time_limit``, ``messages``, ...) is
    refused: a shared session file must not set the limits of the command that replays it."""
    from workbench.template.render import TemplateError, check_template_kwargs

    try:
        return check_template_kwargs(_expect(value, dict, "template_kwargs"), "template_kwargs")
    except TemplateError as exc:
        raise SessionError(str(exc)) from None


def _expect(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SessionError(f"{where}: expected {_KIND_NAMES.get(kind, kind.__name__)}")
    return value


def _expect_number(value: Any, where: str) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise SessionError(f"{where}: expected numbers")


_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "true or false"}

_STEP_FIELDS = frozenset(Step.__dataclass_fields__)


def _step_from_dict(raw: Any, index: int) -> Step:
    where = f"steps[{index}]"
    if not isinstance(raw, dict):
        raise SessionError(f"{where}: expected an object")
    unknown = sorted(set(raw) - _STEP_FIELDS)
    if unknown:
        raise SessionError(f"{where}: unknown field(s) {', '.join(unknown)}")
    for name in ("index", "token_id", "allowed_count", "vocab_size"):
        if name in raw:
            _expect(raw[name], int, f"{where}.{name}")
    _expect(raw.get("token_text", ""), str, f"{where}.token_text")
    for name in ("forced", "constrained", "finished"):
        if name in raw:
            _expect(raw[name], bool, f"{where}.{name}")
    for name in ("region", "jump_forward", "note", "phase"):
        if name in raw:
            _expect(raw[name], str, f"{where}.{name}")
    for value in _expect(raw.get("mask_strip", []), list, f"{where}.mask_strip"):
        _expect_number(value, f"{where}.mask_strip")
    for value in _expect(raw.get("timings_ms", {}), dict, f"{where}.timings_ms").values():
        _expect_number(value, f"{where}.timings_ms")
    if raw.get("text") is not None:
        _expect(raw["text"], str, f"{where}.text")
    try:
        candidates = tuple(
            Candidate(
                token_id=int(c["token_id"]),
                text=str(c["text"]),
                logit=float("-inf") if c.get("logit") is None else float(c["logit"]),
                prob=float(c["prob"]),
                allowed=_expect(c["allowed"], bool, f"{where}.candidates.allowed"),
            )
            for c in _expect(raw.get("candidates", []), list, f"{where}.candidates")
        )
        events = tuple(
            Event(kind=str(e["kind"]), text=str(e["text"]), tool_index=e.get("tool_index"))
            for e in _expect(raw.get("events", []), list, f"{where}.events")
        )
        data = dict(raw)
        data["candidates"] = ()
        data["events"] = ()
        step = Step.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise SessionError(f"{where}: malformed step ({type(exc).__name__}: {exc})") from None
    return replace(step, candidates=candidates, events=events)


# ------------------------------------------------------------------------------------------------ replay
@dataclass(frozen=True)
class ReplayStep:
    """One recorded step with the events the fresh parser produced for its token text."""

    step: Step
    events: tuple[Event, ...]


@dataclass(frozen=True)
class ReplayResult:
    """What replaying a session produced, and whether it matches the recording."""

    steps: tuple[ReplayStep, ...]
    message: Message
    parsed: dict[str, Any]
    diagnostics: tuple[dict[str, Any], ...]
    recorded: dict[str, Any]
    mismatches: tuple[str, ...]

    @property
    def matches(self) -> bool:
        return not self.mismatches

    def to_dict(self) -> dict[str, Any]:
        return {
            "matches": self.matches,
            "mismatches": list(self.mismatches),
            "message": self.parsed,
            "recorded": self.recorded,
            "diagnostics": list(self.diagnostics),
            "steps": [
                {
                    "index": r.step.index,
                    "token_id": r.step.token_id,
                    "token_text": r.step.token_text,
                    "events": [
                        {"kind": e.kind, "text": e.text, "tool_index": e.tool_index} for e in r.events
                    ],
                }
                for r in self.steps
            ],
        }


def parse_options_for(session: Session) -> Any:
    """The :class:`~workbench.runtime.parsing.ParseOptions` the session was generated with (from its
    settings)."""
    from workbench.generation.generate import PARSE_SETTINGS
    from workbench.runtime.parsing import ParseOptions

    settings = session.settings
    return ParseOptions(**{k: settings[k] for k in PARSE_SETTINGS if isinstance(settings.get(k), bool)})


def iter_replay(session: Session) -> Iterator[ReplayStep]:
    """Feed each recorded token text to a fresh parser; yields one :class:`ReplayStep` per step.

    Call :func:`replay_session` for the final message; this generator exists so a viewer can step lazily.
    """
    parser = new_parser(session)
    for i, step in enumerate(session.steps):
        yield ReplayStep(step, tuple(parser.feed(session.fed_text(i))))


def replay_session(session: Session, *, on_step: Callable[[ReplayStep], None] | None = None) -> ReplayResult:
    """Re-parse the session's token texts step by step with its spec and compare with the recording.

    Never needs the model: the token texts are in the file.  ``on_step`` is called after each step (the CLI
    prints colour-coded text from it).
    """
    parser = new_parser(session)
    replayed: list[ReplayStep] = []
    for i, step in enumerate(session.steps):
        item = ReplayStep(step, tuple(parser.feed(session.fed_text(i))))
        replayed.append(item)
        if on_step is not None:
            on_step(item)
    result = parser.finish()
    parsed = result.message.to_contract()
    return ReplayResult(
        steps=tuple(replayed),
        message=result.message,
        parsed=parsed,
        diagnostics=tuple(d.to_dict() for d in result.diagnostics),
        recorded=session.parsed,
        mismatches=tuple(compare_contract(session.parsed, parsed)),
    )


def new_parser(session: Session) -> Any:
    """A fresh stream parser with the session's spec, tools and recorded parse options (what replays use)."""
    from workbench.runtime.parsing import StreamParser

    return StreamParser(session.spec, list(session.tools), options=parse_options_for(session))


def compare_contract(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Differences between two parse-contract messages, one readable line each (empty when equal).

    Validation's comparison (:func:`workbench.validate.compare.compare_messages`: ``true`` is not ``1``),
    exact: a replay runs the same parser on the same text, so any difference, whitespace included, is a
    change; ids are compared.
    """
    from workbench.validate.compare import compare_messages

    return compare_messages(expected, actual, compare_ids=True, exact=True, words=("recorded", "replayed"))


def _is_stop_step(step: Step, spec: FormatSpec) -> bool:
    stops = {m.strip() for m in (*spec.end_markers, spec.eos_token) if m.strip()}
    return step.finished and step.token_text.strip() in stops


def session_from_generation(
    *,
    template_text: str,
    template_name: str,
    spec: FormatSpec,
    model: ModelRecord,
    messages: Sequence[Message],
    tools: Sequence[Tool],
    settings: dict[str, Any],
    prompt: str,
    steps: Sequence[Step],
    parsed: Message,
    note: str = "",
    step_texts: Sequence[str] = (),
    template_kwargs: dict[str, Any] | None = None,
) -> Session:
    """Assemble a session from what a generator run produced (the TUI and scripts record through this).

    The generator records in ``Step.text`` what each step fed the parser, and that is what replay feeds.
    ``step_texts`` overrides it for steps made without it (older generators, hand-built steps).  When no
    step knows its text, a final stop token is taken to have fed nothing (the generator never feeds one).
    """
    texts = tuple(step_texts)
    if texts and len(texts) != len(steps):
        raise SessionError(f"step_texts has {len(texts)} entries for {len(steps)} steps")
    if texts:
        steps = [replace(s, text=t) for s, t in zip(steps, texts, strict=True)]
    elif steps and all(s.text is None for s in steps) and _is_stop_step(steps[-1], spec):
        steps = [*steps[:-1], replace(steps[-1], text="")]
    return Session(
        template=TemplateRecord.from_text(template_text, template_name),
        spec=spec,
        model=model,
        messages=tuple(messages),
        tools=tuple(tools),
        settings=dict(settings),
        prompt=prompt,
        steps=tuple(steps),
        parsed=parsed.to_contract(),
        note=note,
        template_kwargs=dict(template_kwargs or {}),
    )


def rerender_prompt(session: Session) -> tuple[str | None, str]:
    """The prompt re-rendered from the session's template text, conversation, tools and template kwargs,
    and why not when it cannot be (no template text recorded, a template that fails).

    The special tokens come from the spec (the session keeps the template text, not its config); an old
    session without ``template_kwargs`` re-renders with its recorded ``enable_thinking`` only.
    """
    from workbench.template.render import TemplateError, render

    if not session.template.text:
        return None, "the session records no template text (the model's own template was used)"
    if not session.messages:
        return None, "the session records no conversation"
    kwargs: dict[str, Any] = {"bos_token": session.spec.bos_token, "eos_token": session.spec.eos_token}
    thinking = session.settings.get("enable_thinking")
    if isinstance(thinking, bool) and "enable_thinking" not in session.template_kwargs:
        kwargs["enable_thinking"] = thinking
    kwargs.update(session.template_kwargs)
    try:
        text = render(
            session.template.text,
            [m.to_openai() for m in session.messages],
            tools=[t.to_openai() for t in session.tools] or None,
            add_generation_prompt=True,
            **kwargs,
        )
    except TemplateError as exc:
        return None, f"the recorded template does not render: {exc}"
    return text, ""


def prompt_check(session: Session) -> dict[str, Any]:
    """Whether the prompt re-rendered with the recorded kwargs is the recorded prompt: ``{"status":
    "matches" | "differs" | "not checked", "detail"}`` (what ``replay`` reports)."""
    text, why = rerender_prompt(session)
    if text is None:
        return {"status": "not checked", "detail": why}
    if not session.prompt:
        return {"status": "not checked", "detail": "the session records no prompt"}
    if text == session.prompt:
        return {"status": "matches", "detail": ""}
    at = next((i for i, (a, b) in enumerate(zip(text, session.prompt, strict=False)) if a != b), None)
    at = min(len(text), len(session.prompt)) if at is None else at
    return {
        "status": "differs",
        "detail": f"the re-rendered prompt differs from the recorded one at character {at}: "
        f"{text[at : at + 40]!r} vs {session.prompt[at : at + 40]!r}",
    }


__all__ = [
    "SESSION_FORMAT",
    "SESSION_VERSION",
    "ModelRecord",
    "ReplayResult",
    "ReplayStep",
    "Session",
    "SessionError",
    "TemplateRecord",
    "compare_contract",
    "dumps_session",
    "iter_replay",
    "load_session",
    "prompt_check",
    "replay_session",
    "rerender_prompt",
    "save_session",
    "session_from_dict",
    "session_from_generation",
    "write_atomic",
]
