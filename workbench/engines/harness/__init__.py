"""The harness: the workbench's code that runs inside the engines venv, beside vLLM, SGLang and their
transformers, as ``python -m workbench.engines.harness.<name>`` (JSON request on stdin, answer on stdout).

- :mod:`.response` runs a ``response_template`` through each engine's no-code route and transformers;
- :mod:`.plugin` loads exported plug-ins into the engines' own loaders (and proves their structural tags);
- :mod:`.recommend` runs round-trip outputs through every built-in parser of one engine.

:mod:`.schema` is the request / answer of each, as dataclasses with their JSON form, imported by both sides:
the workbench builds requests and checks answers with it (:mod:`.launch`), the harness reads requests and
writes answers with it.  Everything the engines venv imports from the workbench (this package,
:mod:`workbench.engines`, each engine's ``__init__``) uses the standard library only; the launcher runs the
harness from a folder that holds nothing but the ``workbench`` package, so no code edits ``sys.path``.
"""
