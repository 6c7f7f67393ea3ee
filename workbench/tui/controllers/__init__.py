"""The TUI's workflows: what happens when the user asks for an analysis, a generation, an export or a
session, kept out of the App so each can be tested without one.

Each module offers three kinds of functions: ``prepare_*`` check a request on the UI thread and capture
what a worker needs (raising :class:`~workbench.tui.errors.Refused` with the reason); ``compute_*`` and
``run_*`` are the worker bodies, which return or post result messages and raise on failure; ``accept_*``
write a result into the :class:`~workbench.tui.workspace.Workspace` (UI thread).  The app only wires them
together.
"""
