"""The spec target and the export command: schema, provenance, idempotence, refusals, untouched files."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workbench import __version__
from workbench.cli import app
from workbench.export import check_spec_schema, export, load_spec_schema
from workbench.runtime import spec as spec_module
from workbench.runtime.spec import FormatSpec
from workbench.template.source import load_template

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


# ------------------------------------------------------------------------------------------------ schema
def _schema_fields(schema: dict, cls: type, root: dict | None = None) -> None:
    """The schema names exactly the dataclass fields, recursively, with the same enums."""
    root = schema if root is None else root
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    assert set(schema["properties"]) == {f.name for f in fields(cls)}, cls.__name__
    assert schema["additionalProperties"] is False
    default = cls()
    for f in fields(cls):
        value = getattr(default, f.name)
        prop = schema["properties"][f.name]
        if hasattr(value, "__dataclass_fields__"):
            _schema_fields(prop, type(value), root)
        if f.metadata.get("item_type") is not None:
            _schema_fields(prop["items"], f.metadata["item_type"], root)
        enums = getattr(cls, "_enums", {})
        if f.name in enums:
            assert prop["enum"] == list(enums[f.name])


def test_shipped_schema_matches_the_formatspec_dataclasses() -> None:
    schema = load_spec_schema()
    _schema_fields(schema, FormatSpec)
    assert schema["properties"]["version"]["maximum"] == spec_module.SPEC_VERSION


def test_schema_rejects_what_formatspec_rejects() -> None:
    data = FormatSpec().to_dict()
    data["tools"]["format"] = "xml_soup"
    assert check_spec_schema(data) == [
        "tools.format: 'xml_soup' is not one of " + str(list(spec_module.TOOL_FORMATS))
    ]
    data = FormatSpec().to_dict()
    data["reasoning"]["surprise"] = "x"
    assert check_spec_schema(data)[0].startswith("reasoning: Additional properties are not allowed")


# ------------------------------------------------------------------------------------------------ spec target
@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("export") / "spec.json"
    result = invoke("export", "chatml-think-tools", "--target", "spec", "-o", path)
    assert result.exit_code == 0, result.output
    return path


def test_exported_spec_conforms_to_the_schema_and_carries_provenance(exported: Path) -> None:
    data = json.loads(exported.read_text(encoding="utf-8"))
    assert check_spec_schema(data) == []
    source = load_template("chatml-think-tools")
    prov = data["provenance"]
    assert prov["template_sha256"] == source.sha256
    assert prov["workbench_version"] == __version__
    report = prov["validation"]
    assert report["validated"] is True
    assert {c["id"] for c in report["cases"]} >= {"content_only", "one_call", "parallel_calls"}
    assert all("output" in c and "expected" in c for c in report["cases"])


def test_export_import_export_is_byte_identical(exported: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    result = invoke("export", "--spec", exported, "-o", again)
    assert result.exit_code == 0, result.output
    assert again.read_bytes() == exported.read_bytes()
    # Re-validating against the template gives the same bytes too: the report is deterministic.
    with_template = tmp_path / "with-template.json"
    assert invoke("export", "chatml-think-tools", "--spec", exported, "-o", with_template).exit_code == 0
    assert with_template.read_bytes() == exported.read_bytes()


@pytest.mark.usefixtures("no_engines")  # what is written; the engines' proofs: tests/engines/
def test_other_targets_are_the_same_from_the_template_or_from_the_exported_spec(
    exported: Path, tmp_path: Path
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert invoke("export", "chatml-think-tools", "--target", "response-template", "-o", a).exit_code == 0
    assert invoke("export", "--spec", exported, "--target", "response-template", "-o", b).exit_code == 0
    assert a.read_bytes() == b.read_bytes()


def test_an_unvalidated_spec_is_refused_unless_forced(exported: Path, tmp_path: Path) -> None:
    broken = FormatSpec.from_json(exported.read_text(encoding="utf-8")).with_edit(
        **{"tools.call_end": "</call>"}
    )
    spec_path = tmp_path / "broken.json"
    spec_path.write_text(broken.to_json(), encoding="utf-8")
    out = tmp_path / "out.json"
    result = invoke("export", "--spec", spec_path, "-o", out)
    assert result.exit_code == 1
    assert "NOT validated" in result.stderr and "--force" in result.stderr
    assert not out.exists()
    forced = invoke("export", "--spec", spec_path, "-o", out, "--force")
    assert forced.exit_code == 0, forced.output
    assert "warning: exported with --force" in forced.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["provenance"]["validation"]["validated"] is False
    assert data["provenance"]["edited"] is True


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (lambda t: t[: len(t) // 2], "is truncated"),
        (lambda t: t.replace('"tools": {', '"tools": {{', 1), "is corrupt"),
        (lambda t: re.sub(r'"version": \d+\n}', '"version": 99\n}', t), "newer than this workbench"),
        (lambda t: t.replace('"json_native"', '"xml_soup"', 1), "tools.format: 'xml_soup' is not one of"),
        (lambda t: "", "is empty"),
    ],
    ids=["truncated", "corrupt", "newer", "bad-enum", "empty"],
)
def test_a_bad_spec_file_is_one_line_exit_1_and_overwrites_nothing(
    exported: Path, tmp_path: Path, content, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content(exported.read_text(encoding="utf-8")), encoding="utf-8")
    out = tmp_path / "out.json"
    out.write_text("previous export\n", encoding="utf-8")
    for args in (["export", "--spec", bad, "-o", out], ["validate", "--spec", bad]):
        result = invoke(*args)
        assert result.exit_code == 1, result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], lines
    assert out.read_text(encoding="utf-8") == "previous export\n"


def test_a_bad_session_for_the_tests_target_overwrites_nothing(tmp_path: Path) -> None:
    session = tmp_path / "s.json"
    session.write_text('{"format": "workbench-session", "version": 1, "steps": [', encoding="utf-8")
    out = tmp_path / "test_x.py"
    out.write_text("# previous\n", encoding="utf-8")
    result = invoke("export", "chatml-think-tools", "--target", "tests", "--session", session, "-o", out)
    assert result.exit_code == 1
    assert "truncated" in result.stderr
    assert out.read_text(encoding="utf-8") == "# previous\n"


def test_usage_errors_are_explained() -> None:
    assert "pass -o PATH" in invoke("export", "chatml-think-tools").stderr
    assert "unknown target" in invoke("export", "chatml-think-tools", "--target", "gbnf", "-o", "x").stderr
    needs_tools = invoke(
        "export", "chatml-think-tools", "--target", "structural-tag", "-o", "/tmp/never.json"
    )
    assert needs_tools.exit_code == 1 and "--tools" in needs_tools.stderr


@pytest.mark.usefixtures("no_engines")  # the summary's shape; the engines' proofs: tests/engines/
def test_export_json_summary_and_stdout_target(exported: Path) -> None:
    result = invoke("export", "--spec", exported, "-o", "-")
    assert result.exit_code == 0
    assert result.stdout == exported.read_text(encoding="utf-8")
    summary = invoke(
        "export", "--spec", exported, "--target", "response-template", "-o", "/dev/null", "--json"
    )
    data = json.loads(summary.stdout)
    assert data["target"] == "response-template" and data["validated"] is True
    assert data["proof"]["passed"] is True


def test_export_function_never_writes() -> None:
    result = export("spec", template=load_template("xml-tagged-args"))
    assert result.text.endswith("}\n")
    assert FormatSpec.from_json(result.text).provenance.validation["validated"] is True
