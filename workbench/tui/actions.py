"""Every user action, as data: the command palette and the help screen are both generated from this table.

Keys are bound where they make sense (screen bindings); this table is the complete list, so an action is
never reachable only by a key the user has to discover.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Action:
    action: str  # a Textual action string run on the app
    title: str
    help: str
    keys: str = ""  # as shown to the user; bindings live on the screens


ACTIONS: tuple[Action, ...] = (
    Action(
        "switch_mode('template')",
        "Show Template",
        "Template source, conversation, kwargs, live render",
        "1 / F1",
    ),
    Action(
        "switch_mode('analysis')", "Show Analysis", "Probes, diffs A|B, markers, modes, warnings", "2 / F2"
    ),
    Action(
        "switch_mode('generate')",
        "Show Generate",
        "Chat input, live coloured output, parsed message",
        "3 / F3",
    ),
    Action(
        "switch_mode('inspector')",
        "Show Decode inspector",
        "Per-step bitmask, candidates, timeline",
        "4 / F4",
    ),
    Action("switch_mode('export')", "Show Export", "Spec JSON, validation report, export targets", "5 / F5"),
    Action(
        "analyze",
        "Analyze template",
        "Re-run the differential analysis on the current template text",
        "ctrl+r (a on Analysis)",
    ),
    Action(
        "focus_chat", "Chat: type a message", "Focus the chat input on the Generate screen", "i (Generate)"
    ),
    Action(
        "tool_result",
        "Chat: tool result",
        "Type a result for the last assistant turn's tool call, then generate the next turn",
        "t (Generate)",
    ),
    Action(
        "new_conversation",
        "Chat: new conversation",
        "Forget the conversation's turns (asks first; the system prompt stays)",
        "n (Generate)",
    ),
    Action(
        "step", "Step one token", "Decode one token (or reveal the next recorded step)", "space (Gen, Insp)"
    ),
    Action("run", "Run", "Decode until the end (or until paused)", "r (Gen, Insp)"),
    Action("pause", "Pause", "Stop a running generation after the current step", "p (Gen, Insp)"),
    Action(
        "rewind",
        "Rewind one step",
        "Undo the last step (matcher, KV cache and parser rewind together)",
        "backspace (Gen, Insp)",
    ),
    Action(
        "force",
        "Force a token",
        "Choose the next token yourself (refused with a reason when masked)",
        "f (Gen, Insp)",
    ),
    Action(
        "toggle_constraint",
        "Toggle constraint",
        "Apply or lift the grammar mask from the next step on",
        "c (Gen, Insp)",
    ),
    Action(
        "jump_forward",
        "Apply jump-forward",
        "Write the text the grammar forces next (its jump-forward string), one forced token at a time",
        "j (Gen, Insp)",
    ),
    Action(
        "why_masked",
        "Why is a token masked?",
        "Ask the grammar about a token (typed, or highlighted in a table): what it accepts, what it expects",
        "w (Inspector)",
    ),
    Action(
        "try_string",
        "Test a string against the grammar",
        "Feed a string from the current position: accepted, or rejected at char N (nothing moves)",
        "t (Inspector)",
    ),
    Action(
        "load_spec",
        "Load spec",
        "Use a spec file (export --target spec, or analyze --json output) for Generate, Inspector, Export",
        "ctrl+o",
    ),
    Action("validate", "Validate spec", "Round-trip validation of the current spec", "v (Analysis, Export)"),
    Action(
        "show_cases",
        "Validation cases",
        "Open a case: the rendered text beside what the parser made of it, first difference marked",
        "c (Analysis, Export)",
    ),
    Action(
        "export_validated", "Go to Export", "Straight to Export once the spec is validated", "x (Analysis)"
    ),
    Action("export", "Export", "Write the selected export target to the path given", "s (Export)"),
    Action(
        "save_session",
        "Save session",
        "Record template, spec, settings and steps to a session file",
        "ctrl+s (not on Template)",
    ),
    Action("save", "Save", "ctrl+s: the template file on Template, a session elsewhere", "ctrl+s"),
    Action("help", "Help", "Keys and actions of every screen", "?"),
    Action("quit", "Quit", "Leave the workbench", "ctrl+q"),
)
