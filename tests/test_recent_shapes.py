"""Formats of recent model families the analysis was not written against (templates/recent-shapes/).

Each template writes one family's output format from its public description (not the model's template):
roles as bar-bracket words, ``<role>`` elements, numbered rounds, plain-text roles, an answer wrapper with
the calls inside it, calls behind a plugin header, python calls in a code fence; and (session 12) DSML
markup with typed parameters, steptml, a bare JSON array, ``[CALL_ID]``, Command A's action list, Kimi's
numbered ids, OLMo's pythonic lines, Jamba's ``<tool_calls>``.  They were written as unseen material
(issue 18: the analysis must read formats it was never told about).  Session 12 wrote 24 of them in three
batches; 17 passed when first run.  Fixed since: deepseekv32-like (its prompt's ``</think>`` against
``<think>`` was cut inside the marker, so the thinking switch read as no change), glm4chat-like (an
answer's blank header behind the prompt's opener), react-like (an answer header that runs to the turn's
end, ``Final Answer: ...``); session 13: qwen3vlthinking-like (text read only from typed parts: the
renders pass content as parts, as vLLM and SGLang do).  :data:`NOT_YET` names those left, with why.
Kept here so that a change to the analysis that loses one of them fails.  Each must validate
(every case it renders round-trips, one-shot and streamed) and must render exactly the features its
header names, so a verdict cannot pass by calling a feature unsupported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import PROJECT_TEMPLATES
from workbench.formats import analyze
from workbench.template.source import load_template
from workbench.validate import validate

SHAPES = PROJECT_TEMPLATES / "recent-shapes"

#: The templates that write reasoning (the rest drop it): checked against the report, by hand from the
#: templates' headers.
WITH_REASONING = {
    "nnetnav-like",
    "gigpo-like",
    "mmsearchr1-like",
    "webvoyager-like",
    "osatlas-like",
    "petrel-like",
    "tollgate-like",
    "corbel-like",
    "lantern-like",
    "gannet-like",
    "osprey-like",
    "sable-like",
    "hyperclovax32-like",
    "deepseekv41-like",
    "commandaplus-like",
    "llmjp41-like",
    "xingchen4-like",
    "minicpm41-like",
    "baichuanm2-like",
    "sealion35r-like",
    "kestrel-like",
    "quire-like",
    "marlin-like",
    "warden-like",
    "cadence-like",
    "relay-like",
    "thyme-like",
    "typhoont1-like",
    "taco-like",
    "huatuoo1-like",
    "typedxml-like",
    "typesuffix-like",
    "bangtag-like",
    "aufruf-like",
    "parole-like",
    "slotted-like",
    "numchan-like",
    "scoped-like",
    "pleiasrag-like",
    "txagent-like",
    "ether0-like",
    "verifiers-like",
    "afm-like",
    "sfrdr-like",
    "webrl-like",
    "llavacot-like",
    "esac-like",
    "puncrun-like",
    "mixcase-like",
    "quillbrk-like",
    "multicast-like",
    "hashnote-like",
    "longbrk-like",
    "commanda-like",
    "glm47-like",
    "k2think-like",
    "nemotron3nano-like",
    "nemotron3nanofield-like",
    "olmo3think-like",
    "hermes3-like",
    "minimaxm1-like",
    "react-like",
    "glm41vthinking-like",
    "minicpm3-like",
    "rekaflash3-like",
    "deepseekv32-like",
    "kimik2thinking-like",
    "magistral-like",
    "step3-like",
    "ernie45-like",
    "exaone4-like",
    "hunyuan-like",
    "interns1-like",
    "ring-like",
    "smollm3-like",
    "qwen3vlthinking-like",
    "pangu-like",
    "skyt1-like",
    "reflection-like",
    "claude2-like",
    "hyperclovax-like",
    "katv1-like",
    "moss-like",
    "gemma4-like",
    "hy3-like",
    "mimov2-like",
    "solaropen-like",
    "cwm-like",
    "kimik3-like",
    "minimaxm3-like",
    "museglimmer-like",
    "inkling-like",
    "harmonyparallel-like",
    "harmonychatml-like",
    "hcxinline-like",
    "kimik3msg-like",
    "stepaudio2-like",
    "plamo3-like",
    "k2horizon-like",
    "minicpm5-like",
    "granitepythonic-like",
    "hermes4-like",
    "iquestcoder2-like",
    "qwenxmlpylit-like",
    "glmemptydrop-like",
    "brackora-like",
    "veltra-like",
    "oxbow-like",
    "corvid-like",
    "heddle-like",
    "tessel-like",
    "marl-like",
    "cogito-like",
    "glm53flash-like",
    "ling3-like",
    "quillon-like",
    "sarnet-like",
    "gallowmere-like",
    "stavemark-like",
    "ledra-like",
    "pellory-like",
    "moorwick-like",
    "exaonedeep-like",
    "kimivl-like",
    "granite32-like",
    "phi4reasoning-like",
    "marcoo1-like",
    "toolllama-like",
    "apertus-like",
    "apertushead-like",
    "apriel-like",
    "apriel15-like",
    "brindle-like",
    "cmtkv-like",
    "lfm2-like",
    "minimaxm2-like",
    "nsxml-like",
    "seedoss-like",
    "seedossbudget-like",
    "telechat-like",
    "tomlcall-like",
    "wikicall-like",
    "ashlar-like",
    "rookwise-like",
    "sexpr-like",
    "motif2-like",
    "mailhdr-like",
    "yamldoc-like",
    "rwkv7-like",
    "r1t2chimera-like",
    "mirothinker-like",
    "tongyidr-like",
    "tabard-like",
    "folio-like",
    "oriel-like",
    "atsign-like",
    "ledgerline-like",
    "sumi-like",
    "fencedir-like",
    "beginof-like",
    "radio-like",
    "hunk-like",
    "vicunachan-like",
    "orgmode-like",
    "bbcode-like",
    "uitars-like",
    "autoglm-like",
    "solaropen2-like",
    "sse-like",
    "armor-like",
    "latex-like",
    "handlebars-like",
    "ctrlchar-like",
    "lenticular-like",
    "htmlform-like",
    "cliflag-like",
    "roff-like",
    "deepseekv31-like",
    "granite42-like",
    "laguna-like",
    "hyv4-like",
    "inisect-like",
    "actfirst-like",
    "cornerpy-like",
    "mddetails-like",
    "wirestr-like",
    "sqlproc-like",
    "cdatamsg-like",
    "tooln1-like",
    "numtok-like",
    "asciidoc-like",
    "jsonlog-like",
    "emojisig-like",
    "logfmt-like",
    "jsx-like",
    "rst-like",
    "searchr1-like",
    "opencua-like",
    "uivenus-like",
    "hunyuan7b-like",
    "deepseekv4-like",
    "toolrl-like",
    "llamafactory-like",
    "addressline-like",
    "attrline-like",
    "sigil-like",
    "fromto-like",
    "llamaattr-like",
    "pipehdr-like",
    "deepseekr1-like",
    "s1-like",
    "orz-like",
    "smolvlm-like",
    "bluelm-like",
    "keyevl-like",
    "guiowl-like",
    "seedcoder-like",
    "agentcpmgui-like",
    "sectsign-like",
    "pyexec-like",
    "fenceinfo-like",
    "tortoise-like",
    "cblock-like",
    "parenrole-like",
    "gelab-like",
    "guir1-like",
    "scalecua-like",
    "webthinker-like",
    "holo-like",
    "deepeyes-like",
    "bracketto-like",
    "telex-like",
    "verbline-like",
    "jsonhead-like",
    "msguri-like",
    "mimepart-like",
    "gptoss2-like",
    "mistral4-like",
    "qwen4-like",
    "longcat2-like",
    "kexaone-like",
    "jamba2-like",
    "olmo4-like",
    "llama45-like",
    "hashat-like",
    "wordhead-like",
    "actionbox-like",
    "barpy-like",
    "guillemet-like",
    "roletok-like",
    "chanword-like",
    "addressee-like",
    "eqbanner-like",
    "sparkx-like",
    "yuan-like",
    "stepflash-like",
    "terminus-like",
    "ernie5-like",
    "phi5-like",
    "nemotron4-like",
    "granite5-like",
    "smollm4-like",
    "commandb-like",
    "step4-like",
    "seed2-like",
    "actsection-like",
    "fwaction-like",
    "turnattr-like",
    "notechan-like",
    "widekv-like",
    "wordwide-like",
    "lanes-like",
    "wideattr-like",
    "trinity-like",
    "nanbeige-like",
    "glm45v-like",
    "mimovl-like",
    "intellect3-like",
    "kolibri1-like",
    "iquestq1-like",
    "berrylm-like",
    "minicpmv45-like",
    "openpangu2-like",
    "lfm25think-like",
    "telechat4-like",
    "arrowswitch-like",
    "pragma-like",
    "modeline-like",
    "pctroute-like",
    "spacetok-like",
    "toggle-like",
    "lineprefix-like",
    "tsvhead-like",
    "quorl-like",
    "ponder-like",
    "brood-like",
    "skein-like",
    "jsonreply-like",
    "semipy-like",
    "zap-like",
    "tilde-like",
    "glm5-like",
    "kimik25-like",
    "minimaxm25-like",
    "deepseekv35-like",
    "falconh1r-like",
    "ling25-like",
    "granite41-like",
    "phi45-like",
    "xmlreply-like",
    "ednmap-like",
    "textproto-like",
    "csvrows-like",
    "mdsections-like",
    "hclblock-like",
    "rpcflat-like",
    "smol2operator-like",
    "browseruse-like",
    "r1searcher-like",
    "minisweagent-like",
    "webresearcher-like",
    "agentflow-like",
    "cline-like",
    "amthinking-like",
    "sarvamm-like",
    "jannano-like",
    "openthinker3-like",
    "pyrepr-like",
    "nestel-like",
    "heredoc-like",
    "bracearg-like",
    "attrcall-like",
    "netstr-like",
    "dotpath-like",
    "fencelist-like",
}
#: The templates that drop an answer's text when the message has calls (a call turn holds only calls).
CALLS_WITHOUT_TEXT = {
    "nnetnav-like",
    "gigpo-like",
    "webvoyager-like",
    "dityfc-like",
    "breezefc-like",
    "osatlas-like",
    "commandaplus-like",
    "thyme-like",
    "taco-like",
    "verifiers-like",
    "commanda-like",
    "react-like",
    "toolace-like",
    "xlam2-like",
    "moss-like",
    "museglimmer-like",
    "velvet-like",
    "archfc-like",
}
#: The templates that render no tool calls at all.
NO_TOOLS = {"gemma3n-like", "glm41vthinking-like", "rekaflash3-like", "ether0-like", "llavacot-like"}
NO_TOOLS |= {"huatuoo1-like", "teuken-like", "sealion35r-like"}
#: The templates that refuse two calls in one message (one call per assistant message).
ONE_CALL = {"toolgen-like", "k2think-like", "llama31single-like", "toolllama-like", "llama31builtin-like"}
#: Shapes the analysis cannot read yet, with why (strict: one that starts to validate must leave the list).
NOT_YET = {
    "nnetnav-like": "WebArena actions ('NAME [v] [v]' in a fence, arguments by position) after unmarked "
    "reasoning between two fixed sentences, the answer as the action 'stop [TEXT]': no argument names",
    "webvoyager-like": "'Thought: ...' then 'Action: NAME [v]; [v]' (arguments by position), the answer as "
    "the action 'ANSWER; [TEXT]': no argument names, the answer read with its action",
    "osatlas-like": "'thoughts:' / 'actions:' sections, one action a line with arguments by position "
    "('NAME [v] [v]'), the answer as the action 'COMPLETE [TEXT]': no argument names",
    "gigpo-like": "'<action>NAME[ARGS]</action>' with a single argument written bare and several as one "
    "JSON object: the probes' one argument shows no key, so no call is learned",
    "mmsearchr1-like": "'<NAME>ARGS</NAME>' with a single argument written bare (and "
    "'<search><NAME></search>' without arguments): the probes' one argument shows no key, no call learned",
    "minicpm41-like": "a value wrapped in CDATA only when it holds a newline, '<' or '&' "
    "('<param name=k><![CDATA[...]]></param>'): the wrapper read as part of the string",
    "quire-like": "a value raw only when its parameter is declared 'string', JSON otherwise (aufruf-like's "
    "rule, in '<parameter>' elements): an untyped or anyOf parameter's string is read with its quotes",
    "relay-like": "elements named after the function and its parameters, a value raw only when declared "
    "'string' (aufruf-like's rule): an untyped or anyOf parameter's string is read with its quotes",
    "cadence-like": "headed 'ROLE:CHANNEL' messages where the prompt opens the think message with thinking "
    "on and the answer's message with it off, every message but the reply's last ended '<|stop|>': no prompt "
    "the learner tries is continued by both an answer alone and reasoning",
    "toolgen-like": "one call spread over three assistant turns with fixed user turns between them (the "
    "tool's own token '<<NAME>>', then the arguments after 'Please give the input. ...'): the later turns "
    "are read as text",
    "taco-like": "the reply one JSON object whose answer is the argument of a built-in 'Terminate' action "
    '({"thought": ..., "actions": [{"name": "Terminate", "arguments": {"answer": TEXT}}]}): the '
    "action's opening read as text",
    "typedxml-like": "one XML element per parameter with its type in an attribute, nested all the way down "
    "('<arg name=k type=object><arg ...>', '<item type=...>'): nested objects and arrays not read",
    "typesuffix-like": "BASIC-style lines, the type a suffix on the key ('city$', 'n%', 'b?'), strings with "
    "doubled quotes and '\" + CHR$(10) + \"' for a newline, reasoning as 'REM ' lines: the escapes and the "
    "line prefix not learned",
    "bangtag-like": "YAML-style tags on each argument line ('!str \"x\"', '!int 2', '!seq N' / '!map N' with "
    "the items indented below): nested values not read",
    "aufruf-like": "a value raw only when its parameter is declared 'string', JSON otherwise (an untyped or "
    "anyOf parameter's string is quoted): the probes type every parameter as its value, so raw-by-value is "
    "learned",
    "scoped-like": "markers built by concatenating a shared prefix variable ('<::chat.turn.' + "
    "'assistant.calls::>'): the template's own literals put a boundary inside every marker, which the "
    "diffs then cut at",
    "webrl-like": "the final answer a JSON string argument of 'exit(message=\"...\")', calls through one "
    "'do(action=\"NAME\", k=v)' wrapper, text beside calls as '# ' note lines: the answer's opener read as "
    "text and its escapes not decoded",
    "multicast-like": "all of a turn's calls in one message addressed to several recipients "
    "('<|hdr|>assistant.call>NAME#ID,NAME#ID', the arguments one JSON a line): the second call is not read",
    "hashnote-like": "the answer's text beside calls written inside the calls' '<act>' block as comment "
    "lines ('# LINE', '#' for an empty line): a prefix on every line of the text, not learned",
    "longbrk-like": "typed literals: strings in Lua long brackets of the lowest unambiguous level ('[[..]]', "
    "'[=[..]=]'), yes/no, nil, lists as '(..)', objects as '{k = v}': only plain strings are read",
    "pyrepr-like": (
        "every value a Python literal inside '<param>' elements: the quote taken into the markers, "
        "so a string's escapes (backslash-n, quote) are read raw"
    ),
    "nestel-like": (
        "the function's name in both tags ('<call:NAME>' ... '</call:NAME>') learned as the probe's"
        " name; yes/no booleans, nested objects as nested elements, null as '<k/>'"
    ),
    "heredoc-like": (
        "'key:type=value' lines with a forced sign on numbers ('+3'), yes/no booleans and heredoc "
        "strings: the sign learned as part of the marker"
    ),
    "bracearg-like": (
        "null written as an empty body after a null-only type marker ('{{arg k|null}}{{/arg}}'): "
        "read as a JSON value that is not there"
    ),
    "attrcall-like": (
        "the type as a suffix on the key (k:bool=yes, k:nil= empty): yes/no booleans and an empty "
        "nil not learned"
    ),
    "netstr-like": (
        "bencode-like typed values (length-prefixed strings 's5:Paris', 'i-3', 'T'/'F', 'd...e', "
        "'l...e'): the sampled length learned as a literal"
    ),
    "dotpath-like": (
        "one 'path = JSON' line per leaf ('a.b', 'x[0]'): paths not rebuilt into nested values, "
        "'nil' not read as null"
    ),
    "fencelist-like": (
        "':::answer' fences whose opener shares ':::' with the thinking close (the answer's marker "
        "learned without it), bullet values typed by words ('(none)', 'on/off', '|' blocks)"
    ),
    "xmlreply-like": 'the reply one XML document (<reply status="final|tool_calls"> with <thought>, <text>, '
    "<call> children, entity-escaped): the root's opening, whose attribute says whether calls follow, is "
    "taken for the content's or the section's marker",
    "ednmap-like": 'the reply one Clojure EDN map ({:thought "..." :say "..." :calls [{:fn ...}]}): keyword '
    "keys, nil/true and nested values are no JSON, and the entry separator is read as the reasoning's end",
    "textproto-like": 'Protocol Buffers text format (reasoning: "...", Struct values as fields { key value '
    "{ string_value ... } }): the quoted text's escapes are not decoded, nested Struct values not read",
    "csvrows-like": "the reply a CSV table (kind,name,id,value rows, RFC 4180 quoting with doubled quotes): "
    "field quoting is not decoded, the arguments' JSON keeps its doubled quotes",
    "hclblock-like": 'HCL (thinking = "...", tool_call "NAME" { ... }, $${ escapes): the quoted reasoning\'s '
    "escapes are not decoded",
    "rpcflat-like": 'one JSON-RPC response ({"jsonrpc", "id": N, "result": {... "content", "calls": '
    '[{"$tool", "$id", args beside}]}}): the envelope nested one object deep, which the envelope spec cannot '
    "say (no path to the members)",
    "luatable-like": 'a Lua table constructor (return { text = "...", calls = { { name = ..., args = '
    "{ k = v } } } }): bare keys, nil and {} for both [] and {} are no JSON (nested values cannot "
    "round-trip at all)",
    "tsvhead-like": "header fields separated by tabs ('<|h|>assistant\\tcall\\tNAME\\tID\\n'): the prompt's "
    "'<|h|>assistant\\t' cut differently in each marker, no headed layout adopted",
    "kimilinear-like": "every call's label is the id the history passes ('<|tool_call_begin|>' + id), never "
    "the function's name, with or without an id: the model's own labels ('functions.NAME:IDX') are nowhere "
    "in the template (Kimi-K2-Thinking writes them for a call without an id, which the analysis reads)",
    "nemotronsuper-like": "reasoning only when the system text says 'detailed thinking on': a switch written "
    "in the conversation, which no probe sets",
    "nexusraven-like": "reasoning after the calls ('Call: f(a=1)' then 'Thought: ...'): the spec has no "
    "reasoning behind the calls",
    "functionary2-like": "the prompt stops at the recipient slot: 'all' routes the answer, any other word "
    "opens a call to that function; the spec reads the answer's route but no call",
    "octopus2-like": "a call names its function by the tool's index in a functional token ('<nexa_0>(...)'), "
    "then a description block: no name is written",
    "moss-like": "labelled fields each with its own end token, an empty field written as 'None' "
    "('<|Inner Thoughts|>: None<eot>'): read as content",
    "minimaxm3-like": "nested values written as XML elements behind a namespace token ('<item>', keys as "
    "tags): read as text",
    "harmonyparallel-like": "parallel calls as one message to 'multi_tool_use.parallel' whose body lists "
    "them: read as content",
    "hcxinline-like": "an answer's text with calls: the call comes as a further message of the assistant's "
    "own ('<|im_end|>' then '<|im_start|>assistant -> tool/function_call'), after what the spec takes "
    "for the turn's end",
    "k2horizon-like": "a reasoning marker written as a head, the effort's word and '>' ('</ifm|' ~ word ~ "
    "'>'): the end read as '</ifm|'; argument types on lines of their own",
    "granitepythonic-like": "bare Python call lines after the answer, with no marker at all: nothing tells "
    "the parser a call starts",
    "granitenumstr-like": "numbers written as JSON strings ('\"42\"'): read back as the strings the "
    "template wrote, not the numbers sent",
    "toolllama-like": "ReAct reasoning as a 'Thought: ' line with no closer before the answer or the "
    "'Action:' lines: read as content",
    "kimik3msg-like": "XTML message elements ('<|open|>message role=...<|sep|>'), channels inside: the tag "
    "words are read as content",
    "ashlar-like": "arguments as elements named by their JSON type, recursive for arrays and objects "
    "('<object key=...><number key=...>') and null self-closing ('<null key=.../>'): not read",
    "sexpr-like": "values as Lisp literals ('#t', '#f', 'nil'): not JSON, read as text",
    "mailhdr-like": "a turn closed by a line holding '.' alone: the marker's core '.' ends the turn at any "
    "full stop",
    "yamldoc-like": "YAML-like documents ('reasoning: |' with the text indented two spaces): the "
    "indentation is read as text",
    "uitars-like": "a 'Thought: ' line with no closer before the answer (a blank line ends it): a reasoning "
    "end of blanks alone is no marker",
    "autoglm-like": "the answer as a JSON string argument of a 'finish(message=...)' call inside "
    "'<answer>', calls as 'do(action=\"NAME\", k=v)': read as markers around text",
    "sse-like": "server-sent events: every line of a body prefixed 'data: ' (multi-line text), the call "
    "id on a field line of its own: the prefixes stay in the text",
    "sqlproc-like": "SQL literals ('it''s', TRUE / NULL, objects as '...'::jsonb): values told apart by "
    "what follows the closing quote, and no JSON spelling",
    "cdatamsg-like": "every text in CDATA ('<![CDATA[...]]>') inside its element: the shared ']]>' read as "
    "the turn's end and every part's closer",
    "emojisig-like": "markers of one character ('💭' opens and closes reasoning): no unit of evidence",
    "logfmt-like": "logfmt call lines ('call id=ID tool=NAME k=v'): a bare value ends at the next space, "
    "quoted only when it must be",
    "jsx-like": "JSX props: strings quoted, or in braces as JSON when they hold quotes or line breaks "
    '(\'s={"a\\"b"}\'), other values in braces: the brace form of a string is read with its braces',
    "addressline-like": "plain-word headers ending each message at the next header ('assistant, thinking:', "
    "'assistant:', 'assistant, to NAME:' with 'KEY: VALUE' lines): the calls' header is not read",
    "orz-like": "R1-Zero plain text ('<think> ... </think> <answer> ... </answer>'), the answer wrapper "
    "also around calls: its opening folded into the reasoning's end, its closing taken for the turn's end",
    "tinyagent-like": "LLMCompiler plans ('1. f(k=v)' ... 'N. join()<END_OF_PLAN>'): a running number in "
    "front of each call, learned as constants (its 'Thought: ' only beside calls is read since session 17)",
    "smolvlm-like": "a 'Thought: ' line ended by a line break alone, then a plain answer: ambiguous as "
    "written (multi-line reasoning is not told from the answer; smolagents answers with a final_answer call)",
    "sweagentlm-like": "shell-quoted values ('NAME --KEY 'VALUE'', a quote written '\\''): the escape is "
    "not learned",
    "fenceinfo-like": "Markdown fences with info words (```thinking, ```answer, ```call): the shared ``` "
    "cut off, the bare words read as markers",
    "cblock-like": "C comment headers ('/* answer */' with no closer after reasoning or calls): the answer's "
    "opener not read as a marker",
    "gelab-like": "tab-separated 'key:value' call lines ('explain:TEXT\\taction:NAME\\tK:V'): the tab that "
    "ends the name also separates the arguments, and the text is a field of the call line",
    "guir1-like": "calls as Python dict literals in '<answer>[...]</answer>' ({'action': 'NAME', 'k': 'v'}): "
    "single-quoted values with backslash escapes read raw, an argument named 'action' taken for the name",
    "telex-like": "telex blocks ('ZCZC / FM X / TO Y / BT / body / NNNN'), the recipient line saying what "
    "the message is: a header of several lines whose slot is closed by a fixed line is not learned",
    "mimepart-like": "MIME parts ('--==chat==' then 'Role:', 'Part:' header lines and a blank line): the "
    "part headers leak into the text, a call's 'KEY=VALUE' body is not read",
    "yuan-like": "every newline inside any text written as the '<n>' token: a text-level escape not learned",
    "actsection-like": "headed messages in start_of_/end_of_ tokens inside a calls section the prompt does "
    "not open ('<start_of_actions>' before the message header): the answer's start not cut by the prompt",
    "turnattr-like": "bare-word call lines ('CALL NAME #ID', then 'ARG KEY' and value lines, 'NEXT' between "
    "calls, nothing closing a call): the arguments never read (the answer's start is read right now)",
    "notechan-like": "'NOTE channel=...' lines with no closer inside 'BEGIN TURN' turns: the answer's note "
    "header taken for the reasoning's end, the turn's 'END TURN' split",
    "rst-like": "reStructuredText directives with indented bodies (reasoning indented three spaces, call "
    "options ':key: value'): the indentation is read as text",
}


def _paths() -> list[Path]:
    return sorted(SHAPES.glob("*.jinja"))


def test_the_set_is_there() -> None:
    assert len(_paths()) == 457
    named = WITH_REASONING | CALLS_WITHOUT_TEXT | NO_TOOLS | ONE_CALL | set(NOT_YET)
    assert {p.stem for p in _paths()} >= named


def _marked(path: Path) -> object:
    reason = NOT_YET.get(path.stem)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("path", [_marked(p) for p in _paths()])
def test_recent_shape_validates(path: Path) -> None:
    source = load_template(path)
    report = validate(source, analyze(source).spec)
    assert report.validated, (path.stem, report.verdict)
    features = report.features()
    for feature in ("content", "continuation"):
        assert features[feature]["status"] == "pass", (path.stem, feature, features[feature])
    tools = "unsupported" if path.stem in NO_TOOLS else "pass"
    for feature in ("tool_call", "nested"):
        assert features[feature]["status"] == tools, (path.stem, feature, features[feature])
    parallel = "unsupported" if path.stem in ONE_CALL else tools
    assert features["parallel_calls"]["status"] == parallel, (path.stem, features["parallel_calls"])
    want = "unsupported" if path.stem in CALLS_WITHOUT_TEXT | NO_TOOLS else "pass"
    assert features["content_with_call"]["status"] == want, (path.stem, features["content_with_call"])
    want = "pass" if path.stem in WITH_REASONING else "unsupported"
    assert features["reasoning"]["status"] == want, (path.stem, features["reasoning"])
