"""Loading the model the TUI generates with (worker thread)."""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message as TextualMessage

from workbench.generation import model as engine_model
from workbench.generation.loaded import LoadedModel
from workbench.generation.tiny import load_tiny
from workbench.tui import messages as msg

TINY_NOTICE = (
    "The default SmolLM2 model is not cached, so a tiny random model is loaded (its output is "
    "noise). Fetch the default once with `workbench generate`, or pass --model."
)


def load_model(ref: str | None, post: Callable[[TextualMessage], object]) -> msg.ModelReady:
    """Load the model (worker thread), posting progress lines; failures propagate to the app's handler."""
    name, loaded, notice = choose_and_load(ref, lambda text: post(msg.ModelProgress(text)))
    return msg.ModelReady(name, loaded, notice)


def choose_and_load(ref: str | None, progress: engine_model.Progress) -> tuple[str, LoadedModel, str]:
    """(name, loaded model, notice): the model asked for, else the default when cached, else a tiny one.

    The TUI never starts the default model's 92.9 MB download by itself: without ``--model`` it uses the
    default only when it is already cached, and says so when it falls back to the tiny random model.
    """
    leave_a_core_for_the_ui()
    if ref:
        loaded = engine_model.load_model(ref, progress=progress)
        return str(loaded.name), loaded, ""
    if engine_model.default_model_cached():
        loaded = engine_model.load_model(None, progress=progress)
        return str(loaded.name), loaded, ""
    progress("default model not cached: building a tiny local model")
    loaded = load_tiny()
    return str(loaded.name), loaded, TINY_NOTICE


def leave_a_core_for_the_ui() -> None:
    """The shared torch thread policy (:mod:`workbench.generation.threads`): on two cores one torch thread,
    the other core left to the UI thread (a second torch thread spinning against it made every SmolLM2 step
    several times slower: 1.5 s instead of 0.25 s)."""
    from workbench.generation.threads import apply_thread_policy

    apply_thread_policy()
