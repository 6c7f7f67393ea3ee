"""Run a harness module in the engines venv (the workbench side): request in, checked answer out.

The harness is started as ``python -m workbench.engines.harness.<name>`` from a temporary folder that holds
only a link to the ``workbench`` package, so the engines interpreter imports the harness and its schema from
the workbench's own files and nothing else of this venv (no ``PYTHONPATH``, no ``sys.path`` edits).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from workbench.engines.harness.schema import SchemaError, from_json, to_json
from workbench.proofs import ExportError

T = TypeVar("T")
PACKAGE = Path(__file__).resolve().parents[2]


def harness_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a harness: no ``PYTHONPATH`` (the engines venv must not see this
    venv's packages), tokenizers single-threaded unless set, then ``extra``."""
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    clean.setdefault("TOKENIZERS_PARALLELISM", "false")
    return {**clean, **(extra or {})}


@contextmanager
def harness_invocation(name: str, python: str | Path) -> Iterator[tuple[list[str], str]]:
    """The command line that runs ``workbench.engines.harness.<name>`` and the folder to run it from (a
    temporary one holding only a link to the ``workbench`` package), for as long as the block runs."""
    with tempfile.TemporaryDirectory(prefix="wb-harness-") as tmp:
        (Path(tmp) / "workbench").symlink_to(PACKAGE, target_is_directory=True)
        yield [str(python), "-m", f"workbench.engines.harness.{name}"], tmp


def read_answer(stdout: str, answer_type: type[T], what: str) -> dict[str, Any]:
    """A harness's answer as JSON, checked against ``answer_type``.

    Raises:
        ExportError: it is not JSON, or not an ``answer_type``.
    """
    try:
        answer: dict[str, Any] = json.loads(stdout)
    except ValueError:
        raise ExportError(f"the {what} answered with something that is not JSON") from None
    try:
        from_json(answer_type, answer)
    except SchemaError as exc:
        raise ExportError(f"the {what} answered out of shape: {exc}") from None
    return answer


def run_harness_module(
    name: str,
    request: Any,
    answer_type: type[T],
    *,
    python: str | Path,
    timeout: float,
    what: str,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run ``workbench.engines.harness.<name>`` with ``request`` (a schema object) on stdin; its answer,
    checked against ``answer_type``, as JSON.

    Raises:
        ExportError: it ran longer than ``timeout``, failed (the last line of its stderr), or answered with
            something that is not an ``answer_type``.
    """
    with harness_invocation(name, python) as (command, cwd):
        try:
            done = subprocess.run(
                command,
                input=json.dumps(to_json(request)),
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=cwd,
                env=harness_env(env),
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ExportError(f"the {what} took more than {timeout:.0f} s") from exc
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ExportError(f"the {what} failed ({python}): {tail}")
    return read_answer(done.stdout, answer_type, what)
