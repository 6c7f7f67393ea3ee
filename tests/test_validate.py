"""Round-trip validation: cutting renders, naming what a template cannot express, catching parser faults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.runtime.spec import ContentSpec, FormatSpec, ReasoningSpec, ToolsSpec, TurnLayout
from workbench.template.source import TemplateSource, load_template
from workbench.validate import (
    ERROR,
    FAIL,
    PASS,
    UNSUPPORTED,
    CaseResult,
    ValidationReport,
    build_cases,
    compare_messages,
    cut_at_turn_end,
    json_equal,
    next_turn_marker,
    parse_output,
    render_case,
    validate,
    validate_recorded,
)

runner = CliRunner()
PROJECT = Path(__file__).resolve().parents[1] / "templates"
TOOL_TEMPLATES = [
    "chatml-think-tools",
    "deepseek-v31-like",
    "harmony-channels",
    "llama3-json",
    "mistral-tool-calls",
    "pythonic-calls",
    "xml-tagged-args",
]

QWEN_LIKE = FormatSpec(
    reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"),
    tools=ToolsSpec(format="json_native", call_start="<tool_call>", call_end="</tool_call>", parallel=True),
    end_markers=("<|im_end|>",),
)


def case(spec: FormatSpec, case_id: str):
    return next(c for c in build_cases(spec) if c.id == case_id)


GEN = "{% if add_generation_prompt %}[assistant]{% endif %}"


def inline(text: str, name: str = "inline") -> TemplateSource:
    return TemplateSource(text=text, name=name, origin="test")


# ------------------------------------------------------------------------------------------------ values
def test_json_equal_does_not_confuse_booleans_with_numbers() -> None:
    assert not json_equal(True, 1)
    assert not json_equal({"a": [False]}, {"a": [0]})
    assert not json_equal(None, "null")
    assert json_equal(2, 2.0)
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})


def test_compare_ignores_surrounding_whitespace_but_not_inner_text() -> None:
    expected = {"content": "Hi there", "reasoning_content": "", "tool_calls": []}
    assert compare_messages(expected, {"content": "\nHi there \n"}, compare_ids=False) == []
    assert compare_messages(expected, {"content": "Hi  there"}, compare_ids=False) != []


def test_ids_are_compared_only_when_the_format_carries_them() -> None:
    call = {"name": "f", "arguments": {}, "id": "Ab3dE5gH7"}
    got = {"tool_calls": [{"name": "f", "arguments": {}, "id": ""}]}
    assert compare_messages({"tool_calls": [call]}, got, compare_ids=False) == []
    assert compare_messages({"tool_calls": [call]}, got, compare_ids=True) == [
        "tool_calls[0].id: expected 'Ab3dE5gH7', got ''"
    ]


# ------------------------------------------------------------------------------------------------ cutting
def test_output_is_cut_between_the_generation_prompt_and_the_end_of_turn() -> None:
    rendered = render_case(load_template("chatml-think-tools"), QWEN_LIKE, case(QWEN_LIKE, "one_call"))
    assert rendered.unsupported == ""
    assert rendered.output == (
        "<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n'
        "</tool_call>"
    )
    assert rendered.generation_prefix == "<|im_start|>assistant\n"
    assert rendered.thinking_opened is False


def test_a_prompt_that_opens_reasoning_is_read_off_the_render() -> None:
    spec = FormatSpec(reasoning=ReasoningSpec(mode="forced_open", start="<think>", end="</think>"))
    template = inline(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<assistant><think>\n{% endif %}"
    )
    rendered = render_case(template, spec, case(spec, "content_only"))
    # The history render has no <think>: the output is cut at the common prefix and, since it does not
    # close a reasoning block, it does not start inside one.
    assert rendered.output == "The capital of France is Paris."
    assert rendered.thinking_opened is False
    assert "generation prompt adds" in rendered.note


def test_end_markers_inside_a_message_do_not_cut_it() -> None:
    harmony = FormatSpec(
        reasoning=ReasoningSpec(mode="tag_based", start="<|channel|>analysis<|message|>", end="<|end|>"),
        tools=ToolsSpec(format="harmony", call_end="<|call|>"),
        end_markers=("<|return|>", "<|end|>", "<|call|>"),
    )
    from workbench.validate import _inner_markers, turn_ends

    whole = (
        "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>x"
    )
    assert cut_at_turn_end(whole, turn_ends(harmony), _inner_markers(harmony)).endswith("<|message|>ok")


def test_the_next_turn_header_ends_a_message_that_has_no_end_marker() -> None:
    spec = FormatSpec(layout=TurnLayout(roles="<|START_OF_TURN_TOKEN|>"))
    turn = next_turn_marker("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", spec)
    assert turn == ("<|START_OF_TURN_TOKEN|>", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>")
    whole = "Action: [...]\n<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>Write..."
    assert cut_at_turn_end(whole, [], frozenset(), turn) == "Action: [...]\n"
    # ... but another assistant message of the same turn (Harmony style) is kept.
    same = "a<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>b"
    assert cut_at_turn_end(same, [], frozenset(), turn) == same


def test_the_answers_header_after_a_reasoning_message_does_not_end_the_output() -> None:
    """The prompt wrote the reasoning message's header (``assistant channel=reasoning``); the answer's own
    header that follows starts with the roles text but is a further message of the assistant's own."""
    spec = FormatSpec(layout=TurnLayout(roles="<|sh|>", opener="<|sh|>assistant"))
    turn = next_turn_marker("<|sh|>assistant channel=reasoning<|eh|>", spec)
    whole = "I think.<|sh|>assistant<|eh|>It is 42.<|eot|><|sh|>user<|eh|>more"
    kept = cut_at_turn_end(whole, ["<|eot|>"], frozenset(), turn, "<|sh|>assistant")
    assert kept == "I think.<|sh|>assistant<|eh|>It is 42."
    assert cut_at_turn_end(whole, ["<|eot|>"], frozenset(), turn) == "I think."  # without the opener: cut


def test_a_turn_header_is_not_found_inside_markers_of_the_same_characters() -> None:
    """Turns begin ``### User:``; the answer's markers are ``##x##``, and two of them glued together
    (``##/final####actions##``) hold ``###``: the header's own blank tells them apart (fuzz seed 750440)."""
    spec = FormatSpec(layout=TurnLayout(roles="### "))
    turn = next_turn_marker("### Assistant:\n", spec)
    assert turn == ("### ", "### Assistant:")
    whole = "##final##\n\nok\n\n##/final####actions## [f(a=1)] ##/actions##\n### User:\nhi"
    assert cut_at_turn_end(whole, [], frozenset(), turn) == whole[: whole.index("### User:")]


def test_a_role_switch_inside_a_call_marker_does_not_end_the_output() -> None:
    # role-switch.jinja: calls are turns of their own ("<|im_start|>tool_call"), opened by a call marker
    # that begins with the end of the assistant's turn.
    spec = FormatSpec(layout=TurnLayout(roles="<|im_start|>"))
    turn = next_turn_marker("<|im_start|>assistant\n", spec)
    call = "<|im_end|>\n<|im_start|>tool_call\n"
    whole = f'ok{call}{{"name": "f"}}<|im_end|>\n<|im_start|>user\nhi'
    assert cut_at_turn_end(whole, [], {call.strip()}, turn) == whole[: whole.index("<|im_start|>user")]


def test_an_end_marker_that_starts_a_tool_marker_does_not_cut() -> None:
    # GigaChat opens a call with "<|message_sep|>\n\nfunction call<|role_sep|>" and ends turns with
    # "<|message_sep|>".
    whole = 'x<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "f"}<|message_sep|>\n\nuser'
    inner = {"<|message_sep|>\n\nfunction call<|role_sep|>"}
    assert cut_at_turn_end(whole, ["<|message_sep|>"], inner) == whole[: whole.rindex("<|message_sep|>")]


# ------------------------------------------------------------------------------------------------ unsupported
PLAIN = FormatSpec(end_markers=("<end>",))
NO_TOOLS = inline(
    "{% for m in messages %}[{{ m.role }}]{{ m.content or '' }}<end>{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}"
)


def test_a_template_that_ignores_tool_calls_makes_tool_cases_unsupported_not_failed() -> None:
    report = validate(NO_TOOLS, PLAIN)
    by_id = {c.id: c for c in report.cases}
    assert by_id["content_only"].status == PASS
    assert by_id["one_call"].status == UNSUPPORTED
    assert by_id["one_call"].reason == "the template does not render tool calls"
    assert by_id["reasoning_content"].reason == "the template drops reasoning from the assistant turn"
    assert report.validated  # every case the template supports passes
    assert report.features()["tool_call"]["status"] == UNSUPPORTED


def test_a_template_that_refuses_a_message_names_its_error() -> None:
    refuses_two = inline(
        "{% for m in messages %}{% if m.tool_calls and m.tool_calls | length > 1 %}"
        "{{ raise_exception('only one call at a time') }}{% endif %}[{{ m.role }}]{{ m.content or '' }}"
        "{% for c in m.tool_calls or [] %}"
        "<call>{{ c.function.name }} {{ c.function.arguments | tojson }}</call>"
        "{% endfor %}<end>{% endfor %}" + GEN
    )
    spec = FormatSpec(
        tools=ToolsSpec(format="tag_with_json", call_start="<call>", call_end="</call>", name_suffix=" ")
    )
    rendered = render_case(refuses_two, spec, case(spec, "parallel_calls"))
    assert rendered.unsupported.startswith(
        "the template refuses this message: template raised: only one call"
    )


def test_content_written_exactly_like_reasoning_is_unsupported() -> None:
    # Like gpt-oss: a message with tool calls has its text written to the same place as reasoning.
    same_place = inline(
        "{% for m in messages %}[{{ m.role }}]{% if m.tool_calls %}"
        "<think>{{ m.content or m.reasoning_content or '' }}</think>"
        "{% for c in m.tool_calls %}<call>{{ c.function.name }}</call>{% endfor %}"
        "{% else %}{{ m.content }}{% endif %}<end>{% endfor %}" + GEN
    )
    spec = FormatSpec(
        reasoning=ReasoningSpec(mode="tag_based", start="<think>", end="</think>"), end_markers=("<end>",)
    )
    rendered = render_case(same_place, spec, case(spec, "content_and_call"))
    assert rendered.unsupported == "the template writes this message's content exactly as it writes reasoning"


# ------------------------------------------------------------------------------------------------ findings
def test_a_parser_that_mangles_content_fails_the_case_with_the_difference() -> None:
    def lossy(spec, text, tools, opened, cuts):
        got = parse_output(spec, text, tools, opened, cuts)
        return {**got, "content": got["content"][:-1]}

    report = validate(load_template("chatml-think-tools"), QWEN_LIKE, parse=lossy)
    content = next(c for c in report.cases if c.id == "content_only")
    assert content.status == FAIL
    assert content.reason == (
        "one-shot parse differs from the input: content: expected 'The capital of France is Paris.', "
        "got 'The capital of France is Paris'"
    )
    assert not report.validated


def test_a_parser_that_only_breaks_when_streamed_is_caught() -> None:
    def chunk_sensitive(spec, text, tools, opened, cuts):
        got = parse_output(spec, text, tools, opened, None)
        return got if cuts is None else {**got, "tool_calls": []}

    report = validate(load_template("chatml-think-tools"), QWEN_LIKE, parse=chunk_sensitive)
    call = next(c for c in report.cases if c.id == "one_call")
    assert call.status == FAIL
    assert call.reason.startswith("streamed one character at a time, the parse differs: tool_calls")


def test_a_crashing_parser_is_an_error_not_a_crash() -> None:
    def boom(spec, text, tools, opened, cuts):
        raise RuntimeError("kaput")

    report = validate(load_template("chatml-think-tools"), QWEN_LIKE, parse=boom)
    assert {c.status for c in report.cases} <= {ERROR, UNSUPPORTED}
    assert "the parser raised RuntimeError: kaput" in report.cases[0].reason


# ------------------------------------------------------------------------------------------------ real specs
@pytest.mark.parametrize("name", TOOL_TEMPLATES)
def test_every_project_template_validates_with_its_analysed_spec(name: str) -> None:
    report = validate(load_template(name))
    failing = [f"{c.id}: {c.reason}" for c in report.cases if c.status in (FAIL, ERROR)]
    assert report.validated, failing
    assert report.features()["tool_call"]["status"] == PASS


def test_recorded_cases_catch_a_broken_spec_without_the_template() -> None:
    from workbench.formats import analyze

    source = load_template("chatml-think-tools")
    spec = analyze(source).spec
    report = validate(source, spec)
    assert validate_recorded(spec, report).validated
    broken = spec.with_edit(**{"tools.call_start": "<call>\n", "tools.call_end": "</call>"})
    again = validate_recorded(broken, report)
    assert not again.validated
    assert again.source == "recorded"
    assert any("nothing was re-rendered" in n for n in again.notes)


def test_report_survives_its_json_form() -> None:
    report = validate(load_template("xml-tagged-args"))
    data = json.loads(json.dumps(report.to_dict()))
    again = ValidationReport.from_dict(data)
    assert again.to_dict() == report.to_dict()


# ------------------------------------------------------------------------------------------------ CLI
def test_validate_cli_json_contract() -> None:
    result = runner.invoke(app, ["validate", "xml-tagged-args", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"validated", "summary", "features", "cases", "template_sha256"} <= set(data)
    assert data["validated"] is True
    assert data["features"]["reasoning"]["status"] == UNSUPPORTED


def test_validate_cli_exits_1_when_not_validated(tmp_path: Path) -> None:
    from workbench.formats import analyze

    spec = analyze(load_template("chatml-think-tools")).spec.with_edit(**{"tools.call_start": "<call>"})
    path = tmp_path / "spec.json"
    path.write_text(spec.to_json(), encoding="utf-8")
    result = runner.invoke(app, ["validate", "chatml-think-tools", "--spec", str(path)])
    assert result.exit_code == 1
    assert "NOT validated" in result.stderr


def test_validate_cli_with_only_a_spec_says_what_it_could_check(tmp_path: Path) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(QWEN_LIKE.to_json(), encoding="utf-8")
    result = runner.invoke(app, ["validate", "--spec", str(bare)])
    assert result.exit_code == 1
    assert "carries no round-trip cases" in result.output


def test_content_wrapping_spec_round_trips_through_a_template_that_wraps() -> None:
    wraps = inline(
        "{% for m in messages %}[{{ m.role }}]{% if m.role == 'assistant' %}<answer>{{ m.content }}</answer>"
        "{% else %}{{ m.content }}{% endif %}<end>{% endfor %}" + GEN
    )
    spec = FormatSpec(
        content=ContentSpec(mode="always_wrapped", start="<answer>", end="</answer>"), end_markers=("<end>",)
    )
    report = validate(wraps, spec)
    assert next(c for c in report.cases if c.id == "content_only").status == PASS


# A template that writes string values raw between quotes (``body="He said "hi""``): a value holding that
# quote cannot round-trip through any reader, so its cases are untestable, not the spec's failure.
RAW_QUOTED = (
    "{% for m in messages %}<turn>{{ m.role }}\n{{ m.content or '' }}"
    "{% if m.tool_calls %}```call\n{% for tc in m.tool_calls %}{{ tc.function.name }}("
    "{% for k, v in tc.function.arguments.items() %}{{ k }}="
    '{% if v is string %}"{{ v }}"{% else %}{{ v | tojson }}{% endif %}{{ ", " if not loop.last }}'
    "{% endfor %})\n{% endfor %}```{% endif %}</turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<turn>assistant\n{% endif %}"
)


def _analysed_and_validated(text: str, name: str) -> tuple[ValidationReport, dict[str, CaseResult]]:
    """The report of validating an inline template against its own analysis, and its cases by id."""
    from workbench.formats import analyze

    source = inline(text, name)
    report = validate(source, analyze(source).spec)
    return report, {c.id: c for c in report.cases}


def test_values_written_raw_between_quotes_are_untestable_not_failed() -> None:
    report, by_id = _analysed_and_validated(RAW_QUOTED, "raw-quoted")
    escapes = by_id["string_arguments"]
    assert escapes.status == "unsupported" and "cannot be told apart from the value's end" in escapes.reason
    assert not [c.id for c in report.cases if c.status == "fail"], report.summary()
    assert by_id["markup_arguments"].status == "unsupported"
    # the values without that quote still round-trip
    assert by_id["scalar_arguments"].status == by_id["one_call"].status == "pass"


# Tools written before the user's turn only when it is the last message (the generation prompt's render),
# not in the history: the two renders part before the user's text, and the output still starts after it.
TOOLS_WITH_LAST_USER = (
    "<s>{% for m in messages %}{% if m.role == 'user' %}"
    "{% if loop.last and tools %}[TOOLS]{{ tools | tojson }}[/TOOLS]{% endif %}[INST]{{ m.content }}[/INST]"
    "{% elif m.role == 'assistant' %}{% if m.reasoning_content %}[THINK]{{ m.reasoning_content }}[/THINK]"
    "{% endif %}{{ m.content or '' }}{% for tc in m.tool_calls or [] %}[CALL]{{ tc.function.name }}[ARGS]"
    "{{ tc.function.arguments | tojson }}{% endfor %}</s>{% endif %}{% endfor %}"
)


def test_the_output_starts_after_the_users_text_when_only_the_prompt_writes_tools_before_it() -> None:
    report, by_id = _analysed_and_validated(TOOLS_WITH_LAST_USER, "tools-with-last-user")
    assert by_id["one_call"].output.startswith("[CALL]get_weather[ARGS]")
    assert by_id["content_and_call"].status == "pass"
    assert report.validated, report.summary()


# A wrapped answer whose closer carries the turn's end token, with no end marker the spec could name (a
# bare template: no tokenizer says which token stops the model).
ANSWER_CLOSED_BY_END_TOKEN = (
    "{% for m in messages %}{% if m.role == 'user' %}<|bos|>{{ m.content }}<|sep|>"
    "{% elif m.role == 'assistant' %}{% if m.reasoning_content %}"
    "<think>\n{{ m.reasoning_content }}\n</think>\n"
    "{% endif %}<answer>\n{{ m.content or '' }}{% if m.tool_calls %}<calls>["
    '{% for tc in m.tool_calls %}{"name": "{{ tc.function.name }}", "arguments": '
    "{{ tc.function.arguments | tojson }}}{{ ', ' if not loop.last }}{% endfor %}]</calls>{% endif %}"
    "\n</answer><|eos|>{% endif %}{% endfor %}"
)


def test_no_argument_holds_the_text_the_template_ends_a_turn_with() -> None:
    _, by_id = _analysed_and_validated(ANSWER_CLOSED_BY_END_TOKEN, "answer-closed-by-end-token")
    marker_case = by_id["own_marker_arguments"]
    body = marker_case.expected["tool_calls"][0]["arguments"]["body"]
    assert "<|eos|>" not in body and "<calls>" in body
    assert marker_case.status == "pass", marker_case.mismatches


#: Hermes-like calls whose template drops null arguments (GLM and MiniMax templates drop null or empty ones).
DROPS_NULLS = inline(
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}"
    "{% for tc in m.tool_calls or [] %}<tool_call>{{ '{\"name\": ' ~ tc.function.name | tojson }}"
    "{{ ', \"arguments\": {' }}{% for k, v in tc.function.arguments | items if v is not none %}"
    "{{ ', ' if not loop.first }}{{ k | tojson }}: {{ v | tojson }}{% endfor %}{{ '}}' }}</tool_call>"
    "{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    "drops-nulls",
)


def test_a_template_that_drops_an_argument_does_not_render_it() -> None:
    rendered = render_case(DROPS_NULLS, QWEN_LIKE, case(QWEN_LIKE, "null_argument"))
    assert rendered.unsupported == "the template drops the argument 'nothing' (its value null)"
    positional = render_case(DROPS_NULLS, QWEN_LIKE, case(QWEN_LIKE, "scalar_arguments"))
    assert not positional.unsupported  # every argument written: nothing is said


def test_a_part_after_a_guessed_turn_end_fails_the_spec() -> None:
    """The spec names no end marker and validation takes what the template ends a turn with for the turn's
    end.  A part written after it is the template's, so the spec fails it (it said 'unsupported by the
    template' and moorwick-like validated on two cases: a false green).  The guess is now what every turn
    ends with, so moorwick-like's answer wrapper '</answer>', with the calls after it, is not taken for the
    turn's end and the template validates whole; a part after a guessed end is still said to be one."""
    from workbench.formats import analyze
    from workbench.validate.cases import build_cases
    from workbench.validate.render import AFTER_GUESSED_END, _missing_trace

    source = load_template(PROJECT / "recent-shapes" / "moorwick-like.jinja")
    spec = analyze(source).spec
    assert validate(source, spec).validated
    case = next(c for c in build_cases(spec) if c.id == "one_call")
    whole = '<answer>\n\n</answer>\n[call_1] -> {"tool": "get_weather", "with": {"city": "Paris"}}'
    reason = _missing_trace(case, "<answer>\n\n", whole, guessed_end="</answer>")
    assert AFTER_GUESSED_END in reason


#: The history opens every turn with a token the generation prompt leaves out (Motif-2-like:
#: '<|startofturn|><|assistant|>\n' in history, '<|assistant|>\n' as the prompt).
TURN_TOKEN_ONLY_IN_HISTORY = (
    "{%- for m in messages -%}{{- '<|startofturn|>' -}}"
    "{{- '<|' ~ m.role ~ '|>\\n' ~ m.content ~ '<|endofturn|>' -}}"
    "{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|assistant|>\\n' -}}{%- endif -%}"
)


def test_a_history_token_in_front_of_the_prompts_text_is_not_output() -> None:
    """The model writes after '<|assistant|>\\n'; the history's '<|startofturn|>' in front of it is the
    template's, not the model's (it was read back as the answer's first characters: every case failed)."""
    _, cases = _analysed_and_validated(TURN_TOKEN_ONLY_IN_HISTORY, "turn-token")
    assert cases["content_only"].status == "pass", cases["content_only"]


def test_an_answer_the_history_opens_across_the_cut_is_not_reasoning() -> None:
    """The prompt opens reasoning ('<|im_start|>assistant/think\\n', HyperCLOVA X) but the history writes a
    plain answer as '<|im_start|>assistant\\n...<|im_end|>': the output, cut where the two part, closes the
    answer's wrapper with the '<|im_end|>' that also ends reasoning.  It is the answer (the content-only case
    failed as empty content read as reasoning); a reasoning block's output still opens reasoning."""
    from workbench.validate.render import _opened_by_output

    spec = FormatSpec(
        reasoning=ReasoningSpec(mode="forced_open", start="/think", end="<|im_end|>\n"),
        content=ContentSpec(mode="wrapped_with_reasoning", start="<|im_start|>assistant\n", end="<|im_end|>"),
    )
    history = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant"
    assert not _opened_by_output(spec, "\nThe answer.<|im_end|>", history)
    reasoned = "I think.<|im_end|>\n<|im_start|>assistant\nThe answer.<|im_end|>"
    assert _opened_by_output(spec, reasoned, history + "/think\n")
    assert _opened_by_output(spec, "\nThe answer.<|im_end|>")  # nothing said in front: as before


def test_the_output_starts_before_a_unit_the_prompt_writes_across_the_cut() -> None:
    """The prompt ends 'THINK\\n', the history's answer starts 'The capital': they share the letter 'T', but
    'THINK' is a literal the prompt writes whole, so the output starts before it (the answer lost its 'T'
    and validation said the template dropped the content)."""
    from workbench.analysis.diff import Evidence, marker_evidence
    from workbench.validate.render import _output_start

    prompt = "ENTRY role:user\nHi\nEXIT\nENTRY role:assistant\nTHINK\n"
    full = "ENTRY role:user\nHi\nEXIT\nENTRY role:assistant\nThe capital is Paris.\nEXIT\n"
    source = TemplateSource(text="{{ 'x' }}", name="t", origin="<test>")
    with marker_evidence(Evidence.of(["THINK", "ENTRY role:", "EXIT"])):
        cut = _output_start(prompt, full, source)
    assert full[cut:].startswith("The capital")
