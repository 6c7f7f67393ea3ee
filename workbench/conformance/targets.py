"""Which FormatSpec parses which case: templates for llama.cpp cases, a mapping table for peer families.

llama.cpp cases name their template; the spec is whatever ``workbench.formats.analyze`` makes of it, so
every llama.cpp failure is either an analyzer or a parser problem.  Peer cases name a *format family*; each
family maps to the real template that speaks it when the corpus has one, otherwise to a hand-written
FormatSpec JSON in the repository's ``specs/`` folder (the export format, loaded with
``FormatSpec.from_json``, so a hand-written spec is exactly as first-class as an analysed one).

The table is data (:data:`FAMILY_RULES`), one row per decision with the reason for it; ``docs/conformance.md``
prints the same table.  A row may be restricted to one engine (``sglang`` / ``vllm``), to cases carrying (or
lacking) an option value, or to cases whose output is in a given wire form, for the few families where the
upstream tests target two different formats under one name (Mistral before and after tokenizer v11; vLLM's
Qwen3 reasoning parser, which assumes the prompt opened ``<think>``).  Rows never name a test case.

A wire-form condition is the weakest kind of evidence (it reads the output the parser is then judged on),
so it is used only where the suite's README defines the family's variants by exactly that form and the
case states nothing stronger: an explicit option (``tokenizer_version``) is always matched first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.conformance.cases import LLAMACPP, Case
from workbench.conformance.plan import Plan
from workbench.engines.vllm import ENGINE as VLLM
from workbench.paths import shared_dir
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.spec import FormatSpec, SpecError
from workbench.spec_io import load_spec

if TYPE_CHECKING:
    from workbench.analysis import Analysis
    from workbench.template.source import TemplateSource

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SPECS = REPO / "specs"

TEMPLATE = "template"
SPEC = "spec"


class TargetError(WorkbenchError):
    """A case's template or spec could not be found, read or analysed."""


@dataclass(frozen=True)
class Target:
    """A template (by stem, looked up in the templates folder) or a hand-written spec (by stem in specs/)."""

    kind: str
    ref: str
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.ref}.jinja" if self.kind == TEMPLATE else f"specs/{self.ref}.json"


@dataclass(frozen=True)
class FamilyRule:
    """One row of the family table; the first row that matches a case wins."""

    family: str
    target: Target
    engine: str = ""  # "" = any engine
    option: str = ""  # "" = no condition; else the case option must match ``option_value``:
    option_value: Any = None  # a string matches as a prefix of the option's string value, None = absent
    wire: str = ""  # "" = no condition; else a regular expression that must occur in the case's output

    def matches(self, case: Case, plan: Plan) -> bool:
        if case.group != self.family:
            return False
        if self.engine and plan.engine != self.engine:
            return False
        if self.option and not self._option_matches(case.options.get(self.option)):
            return False
        return not self.wire or re.search(self.wire, case.input) is not None

    def _option_matches(self, value: Any) -> bool:
        if isinstance(self.option_value, str):
            return isinstance(value, str) and value.startswith(self.option_value)
        return bool(value == self.option_value)


def _t(ref: str, reason: str) -> Target:
    return Target(TEMPLATE, ref, reason)


def _s(ref: str, reason: str) -> Target:
    return Target(SPEC, ref, reason)


MISTRAL_V11_REASON = (
    "tokenizer v11+ writes [TOOL_CALLS]NAME{json} per call ([ARGS] before the JSON from v13); the corpus "
    "has only v13 templates (Devstral-Small-2507, Ministral-3), whose analysed spec rejects the v11 form"
)
#: Mistral v11+ call header: ``[TOOL_CALLS]`` directly followed by a function name (``NAME{`` or
#: ``NAME[ARGS]{``); pre-v11 outputs follow the marker with a JSON array (``[TOOL_CALLS] [{…}]``).
MISTRAL_V11_HEADER = r"\[TOOL_CALLS\][A-Za-z_]"

FAMILY_RULES: tuple[FamilyRule, ...] = (
    FamilyRule(
        "deepseek_rfc_edge_cases",
        _t(
            "deepseek-ai-DeepSeek-V3.1",
            "the RFC's vectors use DeepSeek-V3.1 markers and its </think> reasoning end",
        ),
    ),
    FamilyRule(
        "deepseekr1",
        _t(
            "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
            "R1's template ends the prompt with an open <think>, which is the behaviour these vectors assume",
        ),
    ),
    FamilyRule(
        "deepseekv3",
        _s(
            "deepseekv3",
            "V3-0324 wire format (function<｜tool▁sep｜>NAME + ```json block) without reasoning; the corpus "
            "only has it inside R1 templates, which force reasoning open",
        ),
    ),
    FamilyRule(
        "deepseekv31", _t("deepseek-ai-DeepSeek-V3.1", "the V3.1 template renders exactly this format")
    ),
    FamilyRule("deepseekv32", _s("deepseekv32", "DSML (V3.2) has no template in the corpus")),
    FamilyRule(
        "glm45", _t("GLM-4.6", "GLM-4.5 and 4.6 share the <tool_call>NAME\\n<arg_key>… format and <think>")
    ),
    FamilyRule("glm47", _s("glm47", "GLM-4.7 drops the newlines of GLM-4.6; no 4.7 template in the corpus")),
    FamilyRule("gpt_oss", _t("openai-gpt-oss-120b", "the gpt-oss template speaks Harmony")),
    FamilyRule(
        "openchatml",
        _s(
            "openchatml",
            "OpenChatML 2.2 (seed 002) is Harmony's envelope plus literal blocks and <<| escapes; the "
            "workbench's own cases from its §17 fixtures (workbench/data/conformance/openchatml.json)",
        ),
    ),
    FamilyRule(
        "hermes",
        _t(
            "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
            "the Hermes 2 Pro template defines this <tool_call> JSON",
        ),
    ),
    FamilyRule(
        "kimi_k2",
        _s(
            "kimi_k2_thinking",
            "SGLang's Kimi-K2 reasoning detector serves Kimi-K2-Thinking (<think> ended by </think> or "
            "by the tool section); the corpus only has the non-thinking Kimi-K2 templates",
        ),
        option="reasoning",
        option_value=True,
    ),
    FamilyRule(
        "kimi_k2",
        _t(
            "Kimi-K2-Instruct",
            "Kimi-K2's template renders functions.NAME:IDX ids in <|tool_calls_section_begin|>",
        ),
    ),
    FamilyRule(
        "kimi_thinking",
        _s("kimi_thinking", "Kimi-VL thinking markers ◁think▷ have no template in the corpus"),
    ),
    FamilyRule(
        "llama3",
        _t(
            "meta-llama-Llama-3.1-8B-Instruct",
            'Llama 3.1 writes bare {"name", "parameters"} JSON and <|python_tag|>',
        ),
    ),
    FamilyRule(
        "minimax_m2", _t("MiniMax-M2", "the MiniMax-M2 template renders <minimax:tool_call><invoke …>")
    ),
    FamilyRule(
        "mistral",
        _s("mistral_v11", MISTRAL_V11_REASON),
        option="tokenizer_version",
        option_value="v11",
    ),
    FamilyRule(
        "mistral",
        _s(
            "mistral_v11",
            "no tokenizer_version given, and the output is in the v11+ wire form: [TOOL_CALLS] directly "
            "followed by a function name (pre-v11 follows it with a JSON array); the README tells the two "
            "Mistral variants apart by exactly this form",
        ),
        option="tokenizer_version",
        option_value=None,
        wire=MISTRAL_V11_HEADER,
    ),
    FamilyRule(
        "mistral",
        _t(
            "mistralai-Mistral-Nemo-Instruct-2407",
            "pre-v11 Mistral: [TOOL_CALLS] followed by a JSON array of calls",
        ),
    ),
    FamilyRule(
        "pythonic",
        _s("pythonic", "bare pythonic call lists (Llama 3.2/4 style) have no template in the corpus"),
    ),
    FamilyRule(
        "qwen25", _t("Qwen-Qwen2.5-7B-Instruct", "the Qwen2.5 template renders this <tool_call> JSON")
    ),
    FamilyRule(
        "qwen3",
        _s(
            "qwen3_thinking",
            "vLLM's Qwen3 reasoning parser is tested with Qwen3-Thinking-2507 / Qwen3.5 tokenizers, whose "
            "templates open <think> in the prompt; the corpus has no such Qwen3 template",
        ),
        engine=VLLM.name,
    ),
    FamilyRule(
        "qwen3",
        _t("Qwen-Qwen3-0.6B", "SGLang's Qwen3 detector: <think> … </think>, not opened by the prompt"),
    ),
    FamilyRule(
        "qwen3_coder", _t("Qwen3-Coder", "the Qwen3-Coder template renders <function=…><parameter=…>")
    ),
    FamilyRule("step3", _s("step3", "Step-3's steptml format has no template in the corpus")),
)


def target_for(case: Case, plan: Plan) -> Target | None:
    """The template or spec a case runs against; ``None`` when its family has no row."""
    if case.suite == LLAMACPP:
        return Target(TEMPLATE, case.group, "the case file names its template")
    for rule in FAMILY_RULES:
        if rule.matches(case, plan):
            return rule.target
    return None


AnalyzeFn = Callable[["TemplateSource"], "Analysis"]


class SpecProvider:
    """Loads (and caches) the FormatSpec for a target: analysed from a template, or read from specs/."""

    def __init__(
        self,
        templates_dir: str | Path | None = None,
        specs_dir: str | Path | None = None,
        analyze: AnalyzeFn | None = None,
    ) -> None:
        self.templates_dir = Path(templates_dir) if templates_dir is not None else shared_dir() / "templates"
        self.specs_dir = Path(specs_dir) if specs_dir is not None else DEFAULT_SPECS
        self._analyze = analyze
        self._cache: dict[Target, FormatSpec | TargetError] = {}

    def spec(self, target: Target) -> FormatSpec:
        """The spec for a target; raises :class:`TargetError` (cached, so a failure is reported once)."""
        key = Target(target.kind, target.ref)
        if key not in self._cache:
            try:
                self._cache[key] = self._load(key)
            except TargetError as exc:
                self._cache[key] = exc
        found = self._cache[key]
        if isinstance(found, TargetError):
            raise found
        return found

    def _load(self, target: Target) -> FormatSpec:
        if target.kind == SPEC:
            path = self.specs_dir / f"{target.ref}.json"
            try:
                return load_spec(path)
            except SpecError as exc:
                raise TargetError(str(exc)) from None
        path = self.templates_dir / f"{target.ref}.jinja"
        if not path.is_file():
            raise TargetError(f"template {path} not found (pass --templates DIR)")
        from workbench.template.source import SourceError, load_template

        try:
            source = load_template(path)
        except SourceError as exc:
            raise TargetError(str(exc)) from None
        analyze = self._analyze
        if analyze is None:
            from workbench.formats import analyze as analyze_template

            analyze = analyze_template
        try:
            result = analyze(source)
        except Exception as exc:  # the analyzer is another stage: report its failure, do not die
            raise TargetError(f"analysis of {path.name} failed: {type(exc).__name__}: {exc}") from None
        return result.spec
