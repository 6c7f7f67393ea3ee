"""Which keys may act while the user is typing, and which widgets count as "typing".

A person typing a template, a path or a chat message must never trigger an action by accident: while a
text field has focus only keys with a modifier (``ctrl+r``), F-keys and ``escape`` act; every other key is
text.  The footer shows the same rule, so it never offers a key that would be typed instead.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Input, TextArea
from textual.widgets._select import SelectOverlay

#: Keys that act even in a text field, besides those with a modifier and the F-keys.
FIELD_SAFE_KEYS = frozenset({"escape", "tab", "shift+tab"})


def is_text_field(widget: Widget | None) -> bool:
    """True for widgets that take typed text (an editable TextArea, an Input), and for an open drop-down
    list: it searches its options as you type, so a letter meant for it must not fire an action (a person
    picking a tool choice and typing on fired `r` run, `n` new conversation, `?` help)."""
    if isinstance(widget, TextArea):
        return not widget.read_only
    return isinstance(widget, (Input, SelectOverlay))


def acts_while_typing(key: str) -> bool:
    """True for a key that is never text: a modifier chord, an F-key, escape or tab (pure)."""
    if key in FIELD_SAFE_KEYS:
        return True
    if any(key.startswith(mod) for mod in ("ctrl+", "alt+", "meta+", "super+")):
        return True
    return key.startswith("f") and key[1:].isdigit()
