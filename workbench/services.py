"""One way in: what every command (and the TUI) does before and after its own stage.

Each shell used to resolve "a template, a spec file, or both" its own way, build parse options its own way
and record sessions its own way, so the same file could work with one command and fail with another.  These
functions are that common path: resolve inputs into a source, a spec and the analysis when one was made;
build the parser's options; turn a generator run into a session that replays.

Nothing here prints or exits: errors are :class:`~workbench.runtime.errors.WorkbenchError` subclasses the
shells turn into one line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.runtime.errors import WorkbenchError
from workbench.runtime.spec import FormatSpec
from workbench.spec_io import load_spec

if TYPE_CHECKING:
    from workbench.analysis import Analysis
    from workbench.generation.generate import Generator
    from workbench.runtime.chat import Message, Tool
    from workbench.runtime.parsing import ParseOptions
    from workbench.session import Session
    from workbench.template.source import TemplateSource


class InputsError(WorkbenchError):
    """Neither a template nor a spec was given (or not the combination a command accepts)."""


@dataclass(frozen=True)
class Resolved:
    """What a command works on: the template (when given), the spec, and the analysis that made the spec
    (None when the spec came from a file)."""

    source: TemplateSource | None
    spec: FormatSpec
    analysis: Analysis | None = None


def load_inputs(
    template: str | TemplateSource | None, spec: str | Path | FormatSpec | None
) -> tuple[TemplateSource | None, FormatSpec | None]:
    """Load what was given, analysing nothing: a template reference and/or a spec file (or analyze output).

    For commands that decide themselves what to do with a missing spec (``validate``, ``export``).
    """
    from workbench.template.source import TemplateSource, load_template

    source = template if isinstance(template, TemplateSource) or template is None else load_template(template)
    loaded = spec if isinstance(spec, FormatSpec) or spec is None else load_spec(spec)
    return source, loaded


def resolve(
    template: str | TemplateSource | None,
    spec: str | Path | FormatSpec | None,
    *,
    time_limit: float = 2.0,
) -> Resolved:
    """The source and the spec to work with: a given spec wins, else the template is analysed.

    With both, the spec describes the format and the template renders prompts (``generate``).  Raises
    :class:`InputsError` when neither is given, and whatever loading or analysing raises.
    """
    if template is None and spec is None:
        raise InputsError("pass a template, or --spec FILE")
    source, loaded = load_inputs(template, spec)
    if loaded is not None:
        return Resolved(source, loaded)
    assert source is not None
    from workbench.formats import analyze

    analysis = analyze(source, time_limit=time_limit)
    return Resolved(source, analysis.spec, analysis)


def spec_warning(resolved: Resolved, *, time_limit: float = 2.0) -> str:
    """One line when the spec in use cannot express a feature its template renders ("" otherwise).

    With a template at hand its renders are parsed back now (:func:`workbench.selfcheck.check_spec`); a spec
    from a file alone is judged by the validation report it carries, if any.  Never raises for a self-check
    that cannot run: the command's own work goes on, so the warning is best effort.
    """
    from workbench.selfcheck import check_spec, recorded_verdicts, warning_line

    try:
        if resolved.source is not None:
            verdicts = check_spec(resolved.source, resolved.spec, time_limit=time_limit)
        else:
            verdicts = recorded_verdicts(resolved.spec)
    except WorkbenchError:
        return ""
    return warning_line(verdicts)


def parse_options(
    *,
    engine: str = "workbench",
    streaming: bool = False,
    enable_thinking: bool = True,
    keep_reasoning: bool = False,
    **overrides: Any,
) -> ParseOptions:
    """The parser options for a request: the engine's policy profile plus the request's switches.

    ``keep_reasoning`` is llama.cpp's ``reasoning_format: none`` (reasoning stays in the content).
    """
    from workbench.engines.policies import parse_options as for_engine

    return for_engine(
        engine,
        streaming=streaming,
        enable_thinking=enable_thinking,
        extract_reasoning=not keep_reasoning,
        **overrides,
    )


def generation_settings(gen: Generator) -> dict[str, Any]:
    """The settings a session records so its replay parses with the options the generator's parser had.

    Without ``thinking_opened`` a prompt that opened reasoning would be replayed as if it had not.
    """
    from workbench.generation.generate import parse_settings

    return {"constrain": bool(gen.constrain), **parse_settings(gen)}


def record_session(
    gen: Generator,
    *,
    source: TemplateSource | None,
    messages: Sequence[Message],
    tools: Sequence[Tool] = (),
    model_ref: str = "",
    settings: dict[str, Any] | None = None,
    note: str = "",
) -> Session:
    """A session from a generator run: the steps, what each fed the parser, and the parsed message.

    ``source`` is the template that rendered the prompt (None: the model's own chat template, recorded by
    name only).  ``settings`` adds to :func:`generation_settings`.  Pure: writes nothing.
    """
    from workbench.session import ModelRecord, session_from_generation

    template_text = source.text if source is not None else ""
    template_name = source.name if source is not None else gen.loaded.name
    return session_from_generation(
        template_text=template_text,
        template_name=template_name,
        spec=gen.spec,
        model=ModelRecord(name=gen.loaded.name, ref=model_ref, vocab_size=gen.vocab_size),
        messages=messages,
        tools=tools,
        settings={**generation_settings(gen), **(settings or {})},
        prompt=gen.prompt,
        steps=list(gen.steps),
        parsed=gen.message().message,
        note=note,
    )


def save_generation_session(path: str | os.PathLike[str], session: Session) -> Path:
    """Write ``session`` atomically (a temp file, fsync, rename); a failure leaves any old file untouched."""
    from workbench.session import save_session

    return save_session(path, session)
