"""Checkboxes and radio buttons whose state shows as a glyph, not only as a colour.

Textual draws a checkbox as ``▐X▌`` both on and off (only the colour changes), so on a monochrome
terminal, for a colour-blind person or in a text capture the state could not be read.  Here an on box shows
``✓`` and an off box a blank; a chosen radio button ``●`` and the others a blank.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox, RadioButton


class GlyphCheckbox(Checkbox):
    """A checkbox showing ``✓`` when on and a blank when off."""

    ON, OFF = "✓", " "

    def render(self) -> Content:
        self.BUTTON_INNER = self.ON if self.value else self.OFF
        return super().render()


class GlyphRadioButton(RadioButton):
    """A radio button showing ``●`` when chosen and a blank otherwise."""

    ON, OFF = "●", " "

    def render(self) -> Content:
        self.BUTTON_INNER = self.ON if self.value else self.OFF
        return super().render()
