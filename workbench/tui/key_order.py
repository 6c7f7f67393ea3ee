"""Keys act in the order they were typed.

Textual hands a key to the focused widget by queueing it there, and runs an app-level priority binding
(``ctrl+s``, ``ctrl+o``) the moment the app reads its key.  So a key can overtake the keys and the paste
read before it: ``ctrl+s`` right after a long paste saved the text from before the paste (the editor had
not taken the paste yet), ``ctrl+o`` right after `x` opened its dialog on the Analysis screen and `x` then
switched away from it, and `3` typed right after ``enter`` in a dialog went into the dialog that was
closing.  :class:`KeyOrder` tracks the input still on its way through the widgets; the app holds any
other key until that input, and what it set off, has been handled (see ``WorkbenchApp.on_event``).

Text typed into the field that already has the pending text goes straight on: it queues behind that text
at the same widget, so typing and pasting are never slowed down.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual import events
from textual.message_pump import MessagePump

#: How long input may stay "on its way" before the keys held behind it act anyway: a widget removed
#: while a key was queued to it never runs the callback that says it is done.
MAX_WAIT = 1.0
#: How many times :func:`after_handled` goes up the nodes.
ROUNDS = 2


def typed_text(event: events.Key | events.Paste) -> bool:
    """True for input that is only text for the field it goes to (a paste, a printable key) (pure)."""
    return isinstance(event, events.Paste) or bool(event.is_printable)


def after_handled(nodes: Sequence[MessagePump], done: Callable[[], None]) -> None:
    """Call ``done`` once each of ``nodes``, in turn, has handled every message queued to it now.

    Each node is passed twice: the second pass also covers what the node posted to itself while handling
    the first (an editor's ``Changed`` after a paste), and a message bubbles one node up only when the node
    below has handled it, so going up the ancestors follows it.  The whole way up is gone twice: a key
    reaches the app's bindings last, and the action of a widget's binding (an input's ``enter``) posts its
    message at the bottom again (``Input.Submitted``, which closes a dialog).  A node that takes no more
    messages (it was removed) is skipped.
    """
    steps = [node for _ in range(ROUNDS) for node in nodes for _ in range(2)]

    def step(i: int) -> None:
        while i < len(steps):
            if steps[i].call_later(step, i + 1):
                return
            i += 1
        done()

    step(0)


class KeyOrder:
    """The input forwarded to a widget and not yet handled, for one app.

    ``sent`` records input forwarded to a widget (or a key an app binding acted on); ``waiting`` says
    whether another event must wait; ``on_clear`` is called when nothing is pending any more.
    """

    def __init__(
        self, on_clear: Callable[[], None], set_timer: Callable[[float, Callable[[], None]], object]
    ) -> None:
        self._on_clear = on_clear
        self._set_timer = set_timer
        self._nodes: list[MessagePump] = []
        self._text_only = True  # everything pending is text for one field
        self._running = 0  # the token of the chain under way (0: none)
        self._again = False  # more input was sent while the chain ran: run it once more
        self._tokens = 0

    @property
    def pending(self) -> bool:
        return bool(self._running)

    def waiting(self, event: events.Key | events.Paste, field: object) -> bool:
        """Must ``event`` wait?  Not when nothing is pending, nor when it is text for ``field`` (the focused
        text field, or None) and everything pending is text for that same field."""
        if not self._running:
            return False
        return not (
            self._text_only and field is not None and self._nodes[:1] == [field] and typed_text(event)
        )

    def sent(self, nodes: Sequence[MessagePump], *, text_only: bool) -> None:
        """Input went to ``nodes[0]`` (the rest: its ancestors, and any screen an action brought up)."""
        self._text_only = self._text_only and text_only if self._running else text_only
        self._nodes = list(nodes)
        if self._running:
            self._again = True
            return
        self._start()

    def _start(self) -> None:
        self._tokens += 1
        token = self._running = self._tokens
        self._again = False
        after_handled(self._nodes, lambda: self._done(token))
        self._set_timer(MAX_WAIT, lambda: self._done(token, timed_out=True))

    def _done(self, token: int, *, timed_out: bool = False) -> None:
        if token != self._running:
            return
        if self._again and not timed_out:
            self._start()
            return
        self._running = 0
        self._text_only = True
        self._nodes = []
        self._on_clear()
