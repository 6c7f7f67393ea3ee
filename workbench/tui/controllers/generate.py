"""Starting a generation and keeping the Generate screen's conversation (UI thread).

The conversation is the system prompt plus the turns so far, in OpenAI form with tool-call arguments as
dicts: that is what transformers passes a template, and what the Template screen's preview renders, so the
prompt a generation continues is the text the person would see there.  A generation's parsed message is not
copied into the conversation when it finishes: rewinding or forcing can still change it.  It joins the
conversation when the next turn starts (a new chat message or a tool result), as it is at that moment.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from workbench.runtime.chat import ChatDataError, Message
from workbench.tui import messages as msg
from workbench.tui.controllers.engine import GenerationRequest
from workbench.tui.errors import Refused
from workbench.tui.steps import GeneratorDriver
from workbench.tui.workspace import Workspace


@dataclass(frozen=True)
class PendingCall:
    """A tool call of the last assistant turn that has no tool result yet."""

    call_id: str
    name: str
    arguments: str


def prepare_generation(ws: Workspace, request: msg.RequestGenerate) -> GenerationRequest:
    """What the engine worker needs for ``request``; refused, with the reason, when it cannot start."""
    if ws.model_state != "ready" or ws.loaded_model is None:
        reason = {"loading": "the model is still loading", "failed": f"no model: {ws.model_notice}"}.get(
            ws.model_state, "no model is loaded (start with --model, or open a session to replay)"
        )
        raise Refused(reason, title="Cannot generate")
    if ws.spec is None:
        raise Refused("no spec yet: the analysis has not finished (or failed)", title="Cannot generate")
    try:
        tools = ws.parse_tools()
        kwargs = ws.kwargs.to_kwargs()
    except ValueError as exc:
        raise Refused(str(exc), title="Cannot generate", severity="error") from None
    tool_choice: Any = request.tool_choice
    if request.tool_name:
        if request.tool_name not in [t.name for t in tools]:
            known = ", ".join(t.name for t in tools) or "none"
            raise Refused(f"no tool named {request.tool_name!r} (tools: {known})", title="Cannot generate")
        tool_choice = {"type": "function", "function": {"name": request.tool_name}}
    prompt = prompt_messages(ws, request.text)
    try:
        messages = [Message.from_openai(m, f"conversation[{i}]") for i, m in enumerate(prompt)]
    except ChatDataError as exc:
        raise Refused(str(exc), title="Cannot generate", severity="error") from None
    return GenerationRequest(
        loaded=ws.loaded_model,
        model_name=ws.model_name,
        spec=ws.spec,
        template=ws.edited_source(),
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        constrain=request.constrain,
        kwargs=kwargs,
        start_paused=request.start_paused,
        parallel=request.parallel,
        prompt_messages=tuple(prompt),
    )


def accept_generation(ws: Workspace, request: GenerationRequest) -> None:
    """The generation is starting: its prompt is now the conversation, and its answer the open turn."""
    turns = list(request.prompt_messages)
    if ws.system_prompt.strip() and turns and turns[0].get("role") == "system":
        turns = turns[1:]  # the system prompt is a setting, kept apart from the turns
    ws.conversation = [copy.deepcopy(m) for m in turns]
    ws.conversation_open = True


# ---------------------------------------------------------------------- the conversation
def prompt_messages(ws: Workspace, text: str) -> list[dict[str, Any]]:
    """The messages the next generation renders: system prompt, the turns so far, the finished answer of
    the current generation, and ``text`` as a new user turn.  Refused when that ends on the assistant's
    turn (there is nothing to answer)."""
    turns = history(ws)
    if text.strip():
        turns.append({"role": "user", "content": text})
    if not turns:
        raise Refused("type a message first (i, then enter)", title="Cannot generate")
    if turns[-1].get("role") == "assistant":
        calls = pending_calls(ws)
        hint = "press t to give a tool result" if calls else "type a message"
        raise Refused(f"the conversation ends on the assistant's turn: {hint}", title="Cannot generate")
    system = [{"role": "system", "content": ws.system_prompt}] if ws.system_prompt.strip() else []
    return system + turns


def history(ws: Workspace) -> list[dict[str, Any]]:
    """The turns so far (no system prompt), with the open answer when its generation has finished."""
    turns = copy.deepcopy(ws.conversation)
    live = live_turn(ws)
    if live is not None:
        turns.append(live)
    return turns


def live_turn(ws: Workspace) -> dict[str, Any] | None:
    """The current generation's answer as a conversation turn, once it has finished (a paused or running
    answer is not a turn yet); None when there is none or it is not the conversation's."""
    if not ws.conversation_open or not isinstance(ws.driver, GeneratorDriver) or not ws.driver.finished:
        return None
    message = ws.steps.message
    if message is None:
        return None
    return assistant_turn(message, turn=len(ws.conversation))


def assistant_turn(message: Message, *, turn: int) -> dict[str, Any]:
    """A parsed message as an assistant turn; arguments as dicts, and an id for every call (a format
    without call ids gets ``call_<turn>_<n>``, so that a tool result can name its call)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    if message.reasoning_content:
        out["reasoning_content"] = message.reasoning_content
    calls = []
    for n, call in enumerate(message.tool_calls):
        calls.append(
            {
                "id": call.id or f"call_{turn}_{n}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_value()},
            }
        )
    if calls:
        out["tool_calls"] = calls
    return out


def pending_calls(ws: Workspace) -> list[PendingCall]:
    """The calls of the last assistant turn that no tool result answers yet, in order."""
    turns = history(ws)
    last = max((i for i, m in enumerate(turns) if m.get("role") == "assistant"), default=None)
    if last is None:
        return []
    answered = {m.get("tool_call_id") for m in turns[last + 1 :] if m.get("role") == "tool"}
    out = []
    for call in turns[last].get("tool_calls") or []:
        fn = call.get("function") or {}
        if call.get("id") not in answered:
            args = fn.get("arguments")
            text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            out.append(PendingCall(str(call.get("id", "")), str(fn.get("name", "")), text))
    return out


def accept_tool_result(ws: Workspace, call: PendingCall, content: str) -> int:
    """Add a tool result for ``call`` (the finished answer joins the conversation first); the calls still
    unanswered."""
    ws.conversation = history(ws)
    ws.conversation_open = False
    ws.conversation.append(
        {"role": "tool", "tool_call_id": call.call_id, "name": call.name, "content": content}
    )
    return len(pending_calls(ws))


def clear_conversation(ws: Workspace) -> None:
    """Forget the turns (the system prompt stays: it is a setting, not a turn)."""
    ws.conversation = []
    ws.conversation_open = False


def turn_count(ws: Workspace) -> int:
    return len(history(ws))


def turn_lines(ws: Workspace, width: int = 60) -> list[tuple[str, str]]:
    """The conversation as compact (role label, one-line summary) pairs, the open answer included while it
    is being written."""
    rows: list[tuple[str, str]] = []
    if ws.system_prompt.strip():
        rows.append(("system", ws.system_prompt))
    for m in ws.conversation:
        rows.append(_row(m))
    if ws.conversation_open and isinstance(ws.driver, GeneratorDriver) and ws.steps.message is not None:
        finished = ws.driver.finished
        role, text = _row(assistant_turn(ws.steps.message, turn=len(ws.conversation)))
        rows.append((role if finished else "assistant…", text))
    return [(role, _clip(" ".join(text.split()), width)) for role, text in rows]


def _row(m: dict[str, Any]) -> tuple[str, str]:
    role = str(m.get("role", "?"))
    if role == "tool":
        return "tool", f"[{m.get('tool_call_id', '')}] {m.get('content', '')}"
    parts = []
    if m.get("reasoning_content"):
        parts.append("(thinks) ")
    if m.get("content"):
        parts.append(str(m["content"]))
    for call in m.get("tool_calls") or []:
        fn = call.get("function") or {}
        args = fn.get("arguments")
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        parts.append(f" → {fn.get('name', '')}{text} [{call.get('id', '')}]")
    return role, "".join(parts).strip()


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
