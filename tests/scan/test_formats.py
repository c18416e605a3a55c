"""Renderers: JSON schema mpsready.scan v1, SARIF 2.1.0 structure, Markdown and terminal text."""

import json
from pathlib import Path

import jsonschema

from mpsready.scan.formats import JsonFormat, MarkdownFormat, SarifFormat, TerminalFormat

# the official OASIS schema (see sarif_schema/README.md); tests/scan/test_sarif_official.py covers the rest
SARIF_SCHEMA = json.loads((Path(__file__).parent / "sarif_schema" / "sarif-schema-2.1.0.json").read_text())


def test_json_envelope_outlook_and_findings(scan_fixture):
    result = scan_fixture("deps_setup")
    doc = json.loads(JsonFormat().render(result))
    assert doc["schema"] == {"name": "mpsready.scan", "version": 1}
    assert doc["basis"] == "predicted"
    assert doc["outlook"]["verdict"] == "stay_on_cuda"
    assert doc["outlook"]["limiting"] == [
        {"code": "DEP101", "path": "requirements-gpu.txt", "line": 2},
        {"code": "DEP101", "path": "setup.py", "line": 13},
    ]
    # torch-scatter in setup.cfg is a CPU build for macOS (round 13): DEP102 degrades, the fifth finding
    assert doc["summary"]["blocker"] == 4 and doc["summary"]["files"] == 3
    assert [f["code"] for f in doc["findings"]] == ["DEP101"] * 4 + ["DEP102"]
    assert all(f["basis"] == "predicted" for f in doc["findings"])
    assert doc["findings"][0]["evidence"]["package"] == "nvdiffrast"


def test_sarif_is_valid_and_maps_levels(scan_fixture):
    result = scan_fixture("code")
    doc = json.loads(SarifFormat().render(result))
    jsonschema.Draft4Validator(SARIF_SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(doc)
    run = doc["runs"][0]
    levels = {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r["level"]
              for r in run["results"]
              if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("fixtures/code/train.py")}
    assert levels[("API101", 9)] == "error" and levels[("API104", 8)] == "warning" and levels[("API105", 15)] == "note"
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert set(f.code for f in result.findings) < set(rule_ids)  # every registered rule, not only those that fired
    for res in run["results"]:
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
    assert run["properties"]["outlook"] == "mac_for_dev"


def test_sarif_schema_rejects_a_broken_log():
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}  # driver.name missing
    try:
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(bad)
    except jsonschema.ValidationError as exc:
        assert "'name' is a required property" in exc.message
    else:
        raise AssertionError("the schema accepted a driver without a name")


def test_markdown_groups_by_severity(scan_fixture):
    text = MarkdownFormat().render(scan_fixture("deps_conda"))
    assert "**Static outlook: Mac for development and tests, CUDA for the main work** (`mac_for_dev`" in text
    assert "## blocker (3)" in text and "## degrades (2)" in text and "## info" not in text
    assert "| `DEP105` | `environment.yml:9` | main | conda package pytorch-cuda=12.1: no osx-arm64 build |" in text


def test_terminal_summary_and_outlook(scan_fixture):
    text = TerminalFormat(width=200).render(scan_fixture("kernels"))
    assert "blocker (7)" in text and "degrades (3)" in text and "info (2)" in text  # 2: EXT and DEP110
    assert "static outlook: stay on CUDA (stay_on_cuda)  limited by 6 finding(s): DEP107, EXT101, EXT102, EXT104, EXT105, EXT106" in text
    assert "│     9 │    39 │       7 │        3 │    2 │          0 │" in text  # files, lines, counts
