"""``mpsready check`` without an entry: the stages it cannot run are skipped with a reason, never passed."""

from __future__ import annotations

import json

import pytest

from mpsready.cli import main
from mpsready.check.demo import demo_project


def test_check_without_entry_skips_trace_and_record(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["check", str(demo_project()), "--out", str(out)])
    assert code == 1
    doc = json.loads((out / "report.json").read_text())
    assert doc["stages_present"] == ["scan", "env"]
    assert doc["stages_skipped"] == {
        "trace": "no --entry given (the representative step)",
        "record": "no --entry given (the representative step)",
        "compare": "no --baseline record given (for example one recorded on the CUDA server)"}
    labels = {c["number"]: c["label"] for c in doc["checklist"]}
    assert labels == {1: "failed (predicted)", 2: "passed (static review)", 3: "not checked (predicted to pass)",
                      4: "not checked", 5: "not checked", 6: "not checked", 7: "passed", 8: "not checked"}  # no kit signed off: nobody confirmed the data rules
    assert doc["checklist"][3]["summary"] == "not checked: no --entry given (the representative step)"
    printed = capsys.readouterr()
    assert f"Markdown report: {out / 'report.md'}" in printed.out
    assert "trace    skipped" in printed.err


def test_check_bad_arguments_exit_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["check", str(demo_project()), "--entry", "nope.py:step", "--out", str(tmp_path / "o")]) == 2
    assert "entry file not found" in capsys.readouterr().err
    assert main(["check", str(demo_project()), "--entry", "no_function_part", "--out", str(tmp_path / "o")]) == 2
    assert "ENTRY must look like" in capsys.readouterr().err


def test_check_with_an_unknown_entry_module_is_a_usage_error_and_keeps_the_scan(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "o"
    assert main(["check", str(demo_project()), "--entry", "no_such_module:step", "--out", str(out)]) == 2
    assert "no_such_module" in capsys.readouterr().err
    assert (out / "scan.json").exists() and (out / "env.json").exists()
