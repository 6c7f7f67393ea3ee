"""Incremental detokenization from token bytes, rewindable.

Text is rebuilt from each token's exact bytes (xgrammar's decoded vocabulary) through an incremental UTF-8
decoder, so a character split across two tokens comes out whole, once, on the second token.  The decoder's
small state (at most three pending bytes) is saved per step, which is all a rewind needs.
"""

from __future__ import annotations

import codecs


class IncrementalText:
    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._states: list[tuple[bytes, int]] = []
        self.parts: list[str] = []

    def feed(self, data: bytes) -> str:
        """The text completed by ``data`` ('' while a character is still incomplete)."""
        self._states.append(self._decoder.getstate())
        text = self._decoder.decode(data)
        self.parts.append(text)
        return text

    def rewind(self, k: int) -> None:
        """Forget the last ``k`` feeds."""
        k = max(0, min(k, len(self._states)))
        if k == 0:
            return
        state = self._states[-k]
        del self._states[-k:]
        del self.parts[-k:]
        self._decoder.setstate(state)

    @property
    def text(self) -> str:
        return "".join(self.parts)
