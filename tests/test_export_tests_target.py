"""The tests target: a pytest file a user drops into their repository; it must pass, and it must be able
to fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from workbench.export import export
from workbench.session import load_session
from workbench.template.source import load_template

REPO = Path(__file__).resolve().parents[1]


def run_pytest(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        cwd=path.parent,  # outside this repository: the file needs only the installed package
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_exported_tests_pass_in_a_foreign_folder_and_replay_the_session(tmp_path: Path) -> None:
    session = load_session(REPO / "sessions" / "qwen3-tool-call.json")
    result = export(
        "tests", template=load_template("chatml-think-tools"), sessions=[("qwen3-tool-call", session)]
    )
    path = tmp_path / "test_chat_format.py"
    path.write_text(result.text, encoding="utf-8")
    done = run_pytest(path)
    assert done.returncode == 0, done.stdout + done.stderr
    passing = sum(c.status == "pass" for c in result.report.cases)
    # one-shot + three chunkings per case, plus the session
    assert f"{passing * 4 + 1} passed" in done.stdout

    import ast

    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else node.names[0].name).split(".")[0]
        for node in ast.walk(ast.parse(result.text))
        if isinstance(node, (ast.Import, ast.ImportFrom))
    }
    assert imported <= {"__future__", "itertools", "random", "typing", "pytest", "workbench"}


def test_exported_tests_fail_when_the_parser_no_longer_agrees(tmp_path: Path) -> None:
    result = export("tests", template=load_template("xml-tagged-args"))
    # Simulate a regression: the embedded spec loses its argument value marker.
    broken = result.text.replace(
        "'arg_value_suffix': '\\n</parameter>\\n'", "'arg_value_suffix': '</param>'", 1
    )
    assert broken != result.text
    path = tmp_path / "test_broken.py"
    path.write_text(broken, encoding="utf-8")
    done = run_pytest(path)
    assert done.returncode == 1
    assert "failed" in done.stdout
