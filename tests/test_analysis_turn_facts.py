"""Turn facts the parsers depend on: text the generation prompt writes for the model, and how a turn ends.

``prompt.output_prefix`` is output-format text the prompt already wrote (functionary v3.2's ``>>>``): a
parser that misses it sees a bare recipient name and no marker.  ``end_markers`` must hold the turn
terminator even when it is not shaped like a ``<...>``/``[...]`` marker (MiniMax-M2's ``[e~[``), or the
terminator ends up in the parsed answer.  Small inline templates pin the behaviour without ../shared; the
real templates are checked when ../shared is present.
"""

from __future__ import annotations

from tests.conftest import PROJECT_TEMPLATES
from tests.test_analysis_helpers import project, shared, template_text
from workbench.analysis import Analysis
from workbench.analysis.prompt import analyze_output_prefix
from workbench.analysis.renders import ProbeRenderer
from workbench.analysis.state import Findings
from workbench.formats import analyze
from workbench.template.render import render
from workbench.template.source import TemplateSource, load_template
from workbench.validate import validate

# Every message is addressed: ">>>all\n" + text for the user, ">>>NAME\n" + JSON for a call; the
# generation prompt ends with ">>>", so the model starts with the recipient (functionary v3.2's scheme).
RECIPIENT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' -%}<|user|>{{ m.content }}<|eot|>"
    "{%- elif m.role == 'assistant' -%}<|assistant|>{{ '\\n' }}"
    "{%- if m.content -%}>>>all{{ '\\n' }}{{ m.content }}{%- endif -%}"
    "{%- for c in m.tool_calls or [] -%}>>>{{ c.function.name }}{{ '\\n' }}"
    "{{ c.function.arguments | tojson }}{%- endfor -%}<|eot|>"
    "{%- elif m.role == 'tool' -%}<|tool|>{{ m.content }}<|eot|>"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>{{ '\\n' }}>>>{%- endif -%}"
)

# MiniMax-M2's turn shape: "]~b]ROLE\n" + text + "[e~[\n"; neither token is a <...> or [...] marker.
TILDE_TERMINATOR_TEMPLATE = (
    "{%- for m in messages -%}"
    "]~b]{{ 'ai' if m.role == 'assistant' else m.role }}\n{{ m.content }}[e~[\n"
    "{% endfor -%}"
    "{%- if add_generation_prompt -%}]~b]ai\n{% endif -%}"
)

# Turns separated by blank lines only (RWKV World): there is no terminator to strip.
BLANK_LINE_TEMPLATE = (
    "{%- for m in messages -%}{{ m.role | capitalize }}: {{ m.content }}\n\n{% endfor -%}"
    "{%- if add_generation_prompt -%}Assistant:{% endif -%}"
)


def _analyze_text(text: str) -> Analysis:
    return analyze(TemplateSource(text=text, name="inline", origin="<test>"))


# ----------------------------------------------------------------------------------------- output_prefix
def test_a_prompt_ending_in_the_recipient_marker_sets_output_prefix() -> None:
    spec = _analyze_text(RECIPIENT_TEMPLATE).spec
    assert spec.layout.opener == ">>>"  # learned as headed messages (issue 18)
    assert spec.prompt.output_prefix == ">>>"
    assert spec.prompt.generation_prompt.endswith(">>>")


def test_functionary_v32_prompt_already_wrote_the_recipient_marker() -> None:
    text = template_text("meetkai-functionary-medium-v3.2")
    prompt = render(text, [{"role": "user", "content": "hi"}], add_generation_prompt=True, bos_token="")
    assert prompt.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n>>>")
    spec = shared("meetkai-functionary-medium-v3.2").spec
    assert spec.prompt.output_prefix == ">>>"
    # Both ways the output can go start with it: text to "all", or a call to a function (messages of a
    # learned headed layout, issue 18).
    assert spec.layout.opener == ">>>" and spec.tools.call_start == ">>>"
    assert [(m.kind, m.header) for m in spec.layout.messages] == [("content", "all\n")]


def test_qwen3_like_prompts_have_no_output_prefix() -> None:
    spec = project("chatml-think-tools").spec
    assert spec.prompt.generation_prompt == "<|im_start|>assistant\n"
    assert spec.prompt.output_prefix == ""


def test_real_qwen3_and_its_thinking_variants_have_no_output_prefix() -> None:
    for name in ("Qwen-Qwen3-0.6B", "Qwen-QwQ-32B", "Qwen3-Coder"):
        assert shared(name).spec.prompt.output_prefix == "", name


def test_harmony_role_name_is_not_taken_for_the_start_of_a_recipient() -> None:
    """The prompt's output prefix is the whole message opener every later message repeats
    (``<|start|>assistant``), never a fragment of a word (the ``t`` of ``assistant`` and of ``to=``)."""
    spec = project("harmony-channels").spec
    assert spec.prompt.generation_prompt.endswith("<|start|>assistant")
    assert spec.prompt.output_prefix == spec.layout.opener == "<|start|>assistant"


def test_a_role_token_that_tool_calls_do_not_start_with_is_no_output_prefix() -> None:
    # Command-R+: the answer may repeat <|CHATBOT_TOKEN|> (content.start), but a call starts with "Action:".
    spec = shared("CohereForAI-c4ai-command-r-plus-tool_use").spec
    assert spec.prompt.generation_prompt.endswith("<|CHATBOT_TOKEN|>")
    assert spec.content.start == "<|CHATBOT_TOKEN|>"
    assert spec.prompt.output_prefix == ""


def _findings_for(generation_prompt: str, content_start: str, name_prefix: str) -> Findings:
    renderer = ProbeRenderer(TemplateSource(text="{{ '' }}", name="x", origin="<test>"), time_limit=2.0)
    f = Findings(renderer=renderer)
    f.gen["default"] = generation_prompt
    f.content.update(mode="always_wrapped", start=content_start)
    f.tools.update(format="recipient", name_prefix=name_prefix)
    return f


def test_a_tail_that_starts_inside_a_word_is_a_coincidence_not_a_prefix() -> None:
    f = _findings_for("<|start|>bot", "to:all\n", "to:")
    analyze_output_prefix(f)
    assert f.prompt["output_prefix"] == ""
    f = _findings_for("<|start|>bot\n", "to:all\n", "to:")
    f.gen["default"] = "<|start|>bot\nto:"
    analyze_output_prefix(f)
    assert f.prompt["output_prefix"] == "to:"


def test_whitespace_alone_is_never_an_output_prefix() -> None:
    f = _findings_for("<|a|>\n", "\n>>>all\n", "\n>>>")
    analyze_output_prefix(f)
    assert f.prompt["output_prefix"] == ""


# ----------------------------------------------------------------------------------------- end markers
def test_a_terminator_that_is_not_bracket_shaped_is_an_end_marker() -> None:
    spec = _analyze_text(TILDE_TERMINATOR_TEMPLATE).spec
    assert spec.end_markers == ("[e~[",)
    assert "]~b]" not in "".join(spec.end_markers)  # the next turn's header is not part of it


def test_turns_separated_by_blank_lines_have_no_end_marker() -> None:
    spec = _analyze_text(BLANK_LINE_TEMPLATE).spec
    assert spec.end_markers == ()


# Bare-word blocks that all close with the same word: "FINAL:\n" ... "\nEND" around an answer, and
# "CALL:\n" ... "\nEND" around each call, before the turn's own "</s>"; user turns have no end of their
# own, so the end of a turn cannot be told from what closes user turns.
SHARED_CLOSER_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' -%}<|User|>{{ m.content }}"
    "{%- elif m.role == 'assistant' -%}<|Assistant|>"
    "{%- if m.content -%}FINAL:\n{{ m.content }}\nEND{%- if m.tool_calls -%}\n{%- endif -%}{%- endif -%}"
    "{%- for c in m.tool_calls or [] -%}{%- if not loop.first -%}\n{%- endif -%}"
    "CALL:\n{{ c.function.name }} {{ c.function.arguments | tojson }}\nEND{%- endfor -%}</s>"
    "{%- elif m.role == 'tool' -%}<|Tool|>{{ m.content }}</s>"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|Assistant|>{%- endif -%}"
)


def test_a_word_that_also_closes_each_call_is_not_the_end_of_the_turn() -> None:
    # "END" follows the answer in every render, but it is also written between two calls of one turn:
    # the turn ends with what follows it (fuzzed seeds 760001 and 770059 failed on this).
    spec = _analyze_text(SHARED_CLOSER_TEMPLATE).spec
    assert spec.end_markers == ("</s>",)
    assert (spec.content.start, spec.content.end) == ("FINAL:\n", "END")


def test_the_shared_closer_format_round_trips() -> None:
    source = TemplateSource(text=SHARED_CLOSER_TEMPLATE, name="shared-closer", origin="<test>")
    report = validate(source, analyze(source).spec)
    assert report.validated, report.verdict
    assert {c.id for c in report.applicable} >= {
        "content_only",
        "one_call",
        "content_and_call",
        "parallel_calls",
    }


def test_minimax_m2_turns_end_with_its_tilde_token() -> None:
    text = template_text("MiniMax-M2")
    assert "[e~[" in text
    spec = shared("MiniMax-M2").spec
    assert spec.end_markers == ("[e~[",)
    assert "[e~[" in spec.preserved_tokens


def test_templates_without_a_terminator_still_have_none() -> None:
    # Mistral writes nothing after an answer (the eos comes from the tokenizer); GLM starts the next header.
    for name in ("mistralai-Mistral-Nemo-Instruct-2407", "GLM-4.6"):
        assert shared(name).spec.end_markers == (), name
    assert project("mistral-tool-calls").spec.end_markers == ()


# Kimi-K2-Thinking's shape: every assistant turn opens reasoning, if only to close it at once
# (``<think></think>`` before a plain answer), and the generation prompt writes none of it.
ALWAYS_THINK_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}<|im_assistant|>assistant<|im_middle|>"
    "<think>{{ m.reasoning_content or '' }}</think>{{ m.content or '' }}"
    "{%- if m.tool_calls -%}<|calls|>{%- for c in m.tool_calls -%}<|call|>functions.{{ c.function.name }}"
    ":{{ loop.index0 }}<|args|>{{ c.function.arguments | tojson }}<|call_end|>{%- endfor -%}<|calls_end|>"
    "{%- endif -%}<|im_end|>"
    "{%- else -%}<|im_{{ m.role }}|>{{ m.role }}<|im_middle|>{{ m.content }}<|im_end|>{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}"
)


def test_a_turn_that_always_opens_reasoning_has_no_lead_the_reasoning_markers_read() -> None:
    from workbench.validate import validate

    source = TemplateSource(text=ALWAYS_THINK_TEMPLATE, name="always-think", origin="<test>")
    spec = analyze(source).spec
    assert spec.layout.lead == ""
    assert (spec.reasoning.start, spec.reasoning.end) == ("<think>", "</think>")
    report = validate(source, spec)
    assert report.validated, report.summary()


def test_an_answer_wrapped_only_after_the_calls_is_read_from_the_turn_that_has_both() -> None:
    """GUI-Owl writes its calls first and then the answer in '<conclusion>', an answer alone bare: the
    wrapper is what the turn with both writes after what the call-only turn writes before its end."""
    from workbench.analysis.layout import _wrapped_after_calls
    from workbench.analysis.probes import CONTENT_TEXT

    calls = '<tool_call>\n{"name": "foofoo"}\n</tool_call>'
    both = f"{calls}\n<conclusion>\n{CONTENT_TEXT}\n</conclusion><|im_end|>\n"
    found = _wrapped_after_calls(both, calls + "<|im_end|>\n", "<|im_end|>\n")
    assert found == ("\n<conclusion>\n", "\n</conclusion>")
    first = f"{CONTENT_TEXT}\n{calls}<|im_end|>\n"  # the answer in front of the calls: not this shape
    assert _wrapped_after_calls(first, calls + "<|im_end|>\n", "<|im_end|>\n") is None
    bare = f"{calls}\n{CONTENT_TEXT}<|im_end|>\n"  # after the calls but bare: nothing to learn
    assert _wrapped_after_calls(bare, calls + "<|im_end|>\n", "<|im_end|>\n") is None


def test_the_calls_after_an_answer_start_after_their_header_even_one_holding_a_brace() -> None:
    """jsonhead-like writes a JSON header in front of the calls ('{"channel": "calls"}\\n['): the first '{'
    after the answer is the header's, so the calls start where the call-only turn's header ends."""
    from workbench.analysis.layout import _calls_after
    from workbench.analysis.probes import CONTENT_TEXT

    head = 'calls"}\n['
    text = f'final"}}\n{CONTENT_TEXT}\n<|msg|>{{"from": "assistant", "channel": "{head}{{"name": "foofoo"}}]'
    at = text.find(CONTENT_TEXT)
    assert text[_calls_after(text, at, head) :].startswith('{"name": "foofoo"}')
    assert _calls_after(text, -1, head) == -1


def test_a_mode_marker_before_an_answer_that_did_not_reason_is_its_opener() -> None:
    """KAT-V1 opens an answer with '<think_off>' when it does not reason and with '<think_on><think>...'
    when it does: the marker is the answer's opener (not content), and no part of a call's opening."""
    spec = analyze(load_template(PROJECT_TEMPLATES / "recent-shapes" / "katv1-like.jinja")).spec
    content = spec.content
    assert (content.mode, content.start, content.end) == ("always_wrapped", "<think_off>\n", "")
    assert "<think_off>" not in spec.tools.call_start + spec.tools.section_start
