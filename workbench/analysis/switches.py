"""Template switches other than ``enable_thinking``: which variables change the format, and how.

A 2026 template may turn reasoning on or off with ``reasoning_effort``, ``thinking`` or a variable of its
own, or drop earlier turns' reasoning with ``clear_thinking``.  The candidates and the values worth trying
come from the template's AST (:func:`workbench.template.variables.find_switches`); each value is then
*rendered* -- the generation prompt, an assistant turn with reasoning, and a history turn with reasoning --
and compared with the renders made without the variable.  A candidate that changes nothing the format
depends on is dropped; the others are recorded in ``PromptSpec.switches`` with, per value, the generation
prompt it gives, whether reasoning is rendered, whether history keeps it, and in words what changed.  Once
the markers are known (:func:`read_start_stages`) each value's prompt also says where the output starts
(``FormatSpec.output_start_stage``), which is what ``parse --kw`` and validation use.

``enable_thinking`` keeps its own probes (P1, R2) and fields; it is not repeated here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.analysis.diff import diff_split
from workbench.analysis.probes import REASONING_TEXT, SWITCH_VARIANTS, USER_TEXT, VARIANTS, Variant
from workbench.analysis.prompt import tail_after_user
from workbench.analysis.state import Findings
from workbench.runtime.spec import ContentSpec, FormatSpec, ReasoningSpec, StartStage
from workbench.template.source import TemplateSource
from workbench.template.variables import NOT_SWITCHES, SwitchCandidate, find_switches, undeclared_variables

#: Switches with their own probes and spec fields.
_PROBED_ELSEWHERE = frozenset({"enable_thinking"})
_HISTORY = SWITCH_VARIANTS["switch_history"]


@dataclass(frozen=True)
class Observation:
    """What one setting of the template's variables renders (the parts the format depends on)."""

    generation_prompt: str | None
    before_user: str | None  # the render up to the user's text: system text the switch may change
    renders_reasoning: bool | None
    keeps_history_reasoning: bool | None


def observe(f: Findings, kwargs: dict[str, Any]) -> Observation:
    """Render the prompt, a reasoning turn and a history turn with ``kwargs`` (cached by the renderer).

    The generation prompt is what follows the user's text (and the user turn's end the structure phase
    found); the text before the user's is where system text a switch changes shows.
    """
    r = f.renderer
    if kwargs:
        full, reasoning = r.render_with("prompt", kwargs), r.render_with("reasoning", kwargs)
    else:
        full, reasoning = r.get("prompt"), r.get("reasoning")
    history = r.render_with(_HISTORY.name, kwargs, _HISTORY)
    gen = tail_after_user(full)
    # Measured as the structure phase measures it: after the user turn's own end (``f.user_end``).
    if gen is not None and f.user_end and gen.startswith(f.user_end):
        gen = gen[len(f.user_end) :]
    generation_prompt = gen
    before = full[: full.rfind(USER_TEXT)] if full is not None and USER_TEXT in full else None
    answer = tail_after_user(reasoning)
    return Observation(
        generation_prompt=generation_prompt,
        before_user=before,
        renders_reasoning=None if answer is None else REASONING_TEXT in answer,
        keeps_history_reasoning=None if history is None else REASONING_TEXT in history,
    )


def _changes(default: Observation, seen: Observation) -> list[str]:
    """What ``seen`` changes against the render without the variable, in words (empty: nothing)."""
    out: list[str] = []
    if seen.generation_prompt is not None and seen.generation_prompt != default.generation_prompt:
        out.append(f"generation prompt {seen.generation_prompt!r}")
    if seen.renders_reasoning is not None and seen.renders_reasoning != default.renders_reasoning:
        out.append("reasoning rendered" if seen.renders_reasoning else "reasoning not rendered")
    if (
        seen.keeps_history_reasoning is not None
        and seen.keeps_history_reasoning != default.keeps_history_reasoning
    ):
        out.append(
            "earlier turns keep their reasoning"
            if seen.keeps_history_reasoning
            else "earlier turns' reasoning dropped"
        )
    if seen.before_user is not None and seen.before_user != default.before_user:
        out.append("system text")
    return out


def probe_switches(f: Findings) -> None:
    """Find the template's switches and record what each value changes in ``f.prompt["switches"]``.

    Runs after the turn structure and before reasoning, which falls back on the switches when the default
    render shows no reasoning (mutates ``f``).
    """
    candidates = [c for c in find_switches(f.renderer.patched_source) if c.name not in _PROBED_ELSEWHERE]
    f.prompt["switches"] = {}
    if not candidates:
        return
    _prefetch(f, candidates)
    default = observe(f, {})
    found: dict[str, Any] = {}
    for cand in candidates:
        effects = _effects(f, cand, default)
        if any(e["changes"] for e in effects):
            found[cand.name] = {"kind": cand.kind, "values": list(cand.values), "effects": effects}
    f.prompt["switches"] = found
    for name, info in found.items():
        said = "; ".join(
            f"{e['value']!r}: {', '.join(e['changes']) or 'as the default'}" for e in info["effects"]
        )
        f.note("R2", f"template switch {name!r} ({said})")


def _prefetch(f: Findings, candidates: list[SwitchCandidate]) -> None:
    """Every render :func:`observe` will ask for, in one batch per candidate."""
    names = ("prompt", "reasoning")
    batches: list[list[tuple[Variant, dict[str, Any]]]] = [[(_HISTORY, {})]]
    for cand in candidates:
        batch: list[tuple[Variant, dict[str, Any]]] = []
        for value in cand.values:
            kwargs = {cand.name: value}
            batch += [(VARIANTS[n], kwargs) for n in names]
            batch.append((_HISTORY, kwargs))
        batches.append(batch)
    f.renderer.prefetch(batches)


def _effects(f: Findings, cand: SwitchCandidate, default: Observation) -> list[dict[str, Any]]:
    effects: list[dict[str, Any]] = []
    for value in cand.values:
        seen = observe(f, {cand.name: value})
        effect: dict[str, Any] = {"value": value, "changes": _changes(default, seen)}
        if seen.generation_prompt is not None:
            effect["generation_prompt"] = seen.generation_prompt
        if seen.renders_reasoning is not None:
            effect["renders_reasoning"] = seen.renders_reasoning
        if seen.keeps_history_reasoning is not None:
            effect["keeps_history_reasoning"] = seen.keeps_history_reasoning
        effects.append(effect)
    return effects


def switch_settings(f: Findings) -> list[dict[str, Any]]:
    """Every recorded switch value as template kwargs (``{name: value}``), reasoning-rendering ones first:
    what the reasoning phase tries when the default render shows no reasoning."""
    settings: list[tuple[bool, dict[str, Any]]] = []
    for name, info in (f.prompt.get("switches") or {}).items():
        for effect in info["effects"]:
            settings.append((not effect.get("renders_reasoning", False), {name: effect["value"]}))
    return [kw for _, kw in sorted(settings, key=lambda item: item[0])]


def read_start_stages(f: Findings) -> None:
    """Each switch value's ``start``: where its generation prompt leaves the output (mutates ``f``).

    Runs once the reasoning and content markers are known.
    """
    switches = f.prompt.get("switches") or {}
    if not switches:
        return
    spec = FormatSpec(
        reasoning=ReasoningSpec(**f.reasoning),
        content=ContentSpec(**f.content),
        end_markers=tuple(f.end_markers),
    )
    for info in switches.values():
        for effect in info["effects"]:
            prompt = effect.get("generation_prompt")
            if prompt is not None:
                effect["start"] = spec.output_start_stage(generation_prompt=prompt)


def adopt_thinking_switch(f: Findings) -> None:
    """The prompt facts of a template that ignores ``enable_thinking`` but has a switch of its own that turns
    reasoning on and off (``thinking``, ``reasoning_effort``): measured on that switch's two values, and the
    reasoning mode decided again with them (mutates ``f``).

    Runs last, once each value's start stage is known: a value whose prompt closes reasoning turns it off
    even when the history renders reasoning the same way for both values.
    """
    from workbench.analysis import prompt, reasoning

    if f.prompt.get("supports_thinking_toggle"):
        return  # enable_thinking is the template's switch
    found = pick_thinking_switch(f.prompt.get("switches") or {})
    if (
        found is None
        or found.on_prompt is None
        or found.off_prompt is None
        or found.on_prompt == found.off_prompt
    ):
        return
    prompt.analyze_prompt_facts(f, switched=(found.on_prompt, found.off_prompt))
    if f.reasoning.get("end"):
        reasoning.decide_mode(f)
    f.note(
        "P1",
        f"enable_thinking changes nothing; the thinking switch is {found.name!r} "
        f"(on: {found.on!r}, off: {found.off!r}): the prompt facts are measured on it",
    )


def start_stage_for(
    spec: FormatSpec,
    source: TemplateSource | None,
    template_kwargs: Mapping[str, Any],
    *,
    enable_thinking: bool = True,
    time_limit: float = 2.0,
) -> tuple[StartStage | None, str]:
    """Where the output starts when the prompt is rendered with ``template_kwargs`` (``--kw``), and a note.

    With the template at hand the generation prompt is rendered with them and read
    (:meth:`FormatSpec.output_start_stage`); with a spec alone, the prompt its analysis recorded for that
    switch value (``prompt.switches``) is read.  ``(None, note)`` when neither says anything: the parser then
    decides as without ``--kw``, and the note says why.
    """
    if not template_kwargs:
        return None, ""
    if source is not None:
        from workbench.analysis.probes import USER
        from workbench.analysis.renders import RenderLadder

        ladder = RenderLadder(source, time_limit=time_limit)
        base = {"enable_thinking": enable_thinking, **template_kwargs}
        full = ladder.render([USER], None, add_generation_prompt=True, base_kwargs=base)
        bare = ladder.render([USER], None, add_generation_prompt=False, base_kwargs=base)
        prompt = full[len(bare) :] if full.startswith(bare) else diff_split(bare, full).right
        return spec.output_start_stage(generation_prompt=prompt, enable_thinking=enable_thinking), ""
    for name, value in template_kwargs.items():
        info = spec.prompt.switches.get(name)
        effects = info["effects"] if info else []
        for effect in effects:
            if _same_value(effect["value"], value) and "generation_prompt" in effect:
                stage = spec.output_start_stage(
                    generation_prompt=effect["generation_prompt"], enable_thinking=enable_thinking
                )
                return stage, ""
    names = ", ".join(f"{k}={v!r}" for k, v in template_kwargs.items())
    return None, f"the spec records no switch value {names}: the output is read as with the default prompt"


def _same_value(a: Any, b: Any) -> bool:
    """Switch values compare as JSON values (``true`` is not ``1``)."""
    return type(a) is type(b) and a == b


# ------------------------------------------------------------------------------------- the thinking switch
@dataclass(frozen=True)
class ThinkingSwitch:
    """The template variable that turns reasoning on and off, and its two values.

    ``enable_thinking`` (``on=True``, ``off=False``) for most templates; for a template that ignores it and
    reads its own switch (``thinking``, ``reasoning_effort``, ...) that switch, with the value that renders
    reasoning as the template does by default (``on``) and the first value that turns it off (``off``).
    ``on_prompt`` / ``off_prompt`` are the generation prompts the two values give (None: not recorded).
    This is what the TUI's thinking toggle, ``--enable-thinking/--no-enable-thinking`` and the generator's
    ``reasoning=False`` set (:meth:`kwargs`).
    """

    name: str
    on: Any
    off: Any
    on_prompt: str | None = None
    off_prompt: str | None = None

    def kwargs(self, enabled: bool) -> dict[str, Any]:
        """The template kwargs that turn reasoning on (``enabled``) or off: ``{"thinking": False}``."""
        return {self.name: self.on if enabled else self.off}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "on": self.on, "off": self.off}


ENABLE_THINKING = ThinkingSwitch("enable_thinking", True, False)


def pick_thinking_switch(switches: Mapping[str, Any]) -> ThinkingSwitch | None:
    """The first recorded switch (``prompt.switches``) with a value that renders reasoning and one that
    turns it off (renders none, or its prompt leaves the output past reasoning); None when there is none.
    Pure: reads the recorded effects only."""
    for name, info in switches.items():
        effects = [e for e in info.get("effects", ()) if isinstance(e, Mapping)]
        on = [e for e in effects if not _turns_reasoning_off(e) and e.get("renders_reasoning") is not False]
        off = [e for e in effects if _turns_reasoning_off(e)]
        if not on or not off:
            continue
        default = next((e for e in on if not e.get("changes")), on[0])
        return ThinkingSwitch(
            name,
            default["value"],
            off[0]["value"],
            default.get("generation_prompt"),
            off[0].get("generation_prompt"),
        )
    return None


def _turns_reasoning_off(effect: Mapping[str, Any]) -> bool:
    return effect.get("renders_reasoning") is False or effect.get("start") in ("content", "answer")


def thinking_switch(spec: FormatSpec) -> ThinkingSwitch | None:
    """The switch that turns this spec's reasoning on and off (the API the TUI's toggle uses), or None.

    A recorded switch that toggles reasoning wins when the spec's prompt facts are its (the analysis takes
    them from it when ``enable_thinking`` changes nothing); else ``enable_thinking`` when the spec says the
    template has a thinking toggle; else None (nothing to toggle).  Pure.
    """
    found = pick_thinking_switch(spec.prompt.switches)
    p = spec.prompt
    if found is not None and (not p.supports_thinking_toggle or _facts_are(found, spec)):
        return found
    return ENABLE_THINKING if p.supports_thinking_toggle else found


def _facts_are(switch: ThinkingSwitch, spec: FormatSpec) -> bool:
    """Were the spec's thinking facts measured on ``switch`` (its two prompts end with the two suffixes)?"""
    p = spec.prompt
    on, off = switch.on_prompt, switch.off_prompt
    return (
        on is not None
        and off is not None
        and on != off
        and on.endswith(p.suffix_when_thinking)
        and off.endswith(p.suffix_when_not_thinking)
    )


def with_thinking_switch(
    spec: FormatSpec, enabled: bool, template_kwargs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``template_kwargs`` plus the spec's own thinking switch set to ``enabled`` (a template that ignores
    ``enable_thinking``, whose callers pass ``enable_thinking`` anyway); nothing is added when that value is
    what the template does by default, or when the caller set the switch itself.  Pure."""
    out = dict(template_kwargs or {})
    switch = thinking_switch(spec)
    if switch is None or switch.name == ENABLE_THINKING.name or switch.name in out:
        return out
    value = switch.on if enabled else switch.off
    info = spec.prompt.switches.get(switch.name) or {}
    default = any(
        type(e.get("value")) is type(value) and e.get("value") == value and not e.get("changes")
        for e in info.get("effects", ())
    )
    if not default:
        out[switch.name] = value
    return out


def quiet_kwargs(spec: FormatSpec) -> dict[str, Any]:
    """Template switches under which the generation prompt opens no reasoning: ``enable_thinking=False``
    and the spec's thinking switch off, else the first recorded switch value whose prompt leaves the output
    anywhere but inside reasoning (``thinking=False`` leaving a header open).  Pure."""
    out: dict[str, Any] = {"enable_thinking": False, **with_thinking_switch(spec, False)}
    if len(out) > 1 or thinking_switch(spec) is not None:
        return out
    for name, info in spec.prompt.switches.items():
        for effect in info.get("effects", ()):
            if (
                isinstance(effect, Mapping)
                and effect.get("changes")
                and effect.get("start") not in (None, "reasoning")
            ):
                return {**out, name: effect["value"]}
    return out


# ------------------------------------------------------------------------------------------ --kw keys
def template_reads(source: TemplateSource) -> tuple[str, ...]:
    """The variables ``source`` reads that a caller may pass (its switches, ``enable_thinking``...): every
    undeclared variable but what the rendering machinery passes itself, sorted.  Pure (parses, renders
    nothing)."""
    names: set[str] = set()
    for text in {source.for_tools(False).text, source.for_tools(True).text}:
        names |= undeclared_variables(text)
    return tuple(sorted(names - NOT_SWITCHES))


def unread_kwargs(source: TemplateSource, keys: Iterable[str]) -> list[str]:
    """The keys among ``keys`` the template never reads (pure)."""
    read = set(template_reads(source))
    return [k for k in keys if k not in read]


def kwargs_warning(source: TemplateSource, keys: Iterable[str]) -> str:
    """One line when a ``--kw`` key is never read by the template: passing it changes nothing, which is
    never what the person meant ("" when every key is read).  Names the keys it does read."""
    unread = unread_kwargs(source, keys)
    if not unread:
        return ""
    reads = template_reads(source)
    said = ", ".join(reads) if reads else "no variable a caller passes"
    which = ", ".join(repr(k) for k in unread)
    return f"the template never reads {which}, so it changes nothing; the template reads: {said}"
