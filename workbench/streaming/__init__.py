"""A stream as a client sees it, checked the same way by round-trip validation and the conformance runner.

- :mod:`.observed`: what a parse run produced (a finished or partial message), in the shape the rules read;
- :mod:`.invariants`: the streaming invariants every streamed run keeps (text only grows, a call's name before
  its arguments, nothing taken back without a diagnostic);
- :mod:`.chunks`: the ways any text is fed (one-shot, one character at a time, seeded random chunkings).

It imports only the runtime: validation (below the conformance runner) and the runner both use it.
"""
