"""Starting a generation: the checks the Generate screen's request must pass, on the UI thread."""

from __future__ import annotations

from workbench.chat import Message
from workbench.tui import messages as msg
from workbench.tui.controllers.engine import GenerationRequest
from workbench.tui.errors import Refused
from workbench.tui.workspace import Workspace


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
    return GenerationRequest(
        loaded=ws.loaded_model,
        model_name=ws.model_name,
        spec=ws.spec,
        template=ws.edited_source(),
        messages=[Message(role="user", content=request.text)],
        tools=tools,
        tool_choice=request.tool_choice,
        constrain=request.constrain,
        kwargs=kwargs,
        start_paused=request.start_paused,
    )
