"""Bad input to report, check and demo: a clear one-line error and exit 2, never a traceback."""

import json

import pytest

from mpsready.cli import main
from mpsready.schema import envelope


def deep_json(path, depth=100_000):
    path.write_text("[" * depth + "]" * depth)
    return path


def test_report_on_deeply_nested_json_is_an_input_error(tmp_path, capsys):
    assert main(["report", "--scan", str(deep_json(tmp_path / "scan.json"))]) == 2
    assert "JSON nested too deeply" in capsys.readouterr().err


@pytest.mark.parametrize("flag,value", [("--mac-memory-gb", "-1"), ("--time-budget-hours", "nan"),
                                        ("--mac-memory-gb", "0"), ("--time-budget-hours", "lots")])
def test_judgement_numbers_must_be_finite_and_positive(tmp_path, capsys, flag, value):
    scan = tmp_path / "scan.json"
    scan.write_text(json.dumps(envelope("mpsready.scan", 1, basis="predicted", outlook="runs_on_mac",
                                        findings=[])))
    assert main(["report", "--scan", str(scan), flag, value]) == 2
    assert f"argument {flag}:" in capsys.readouterr().err


def test_report_out_on_a_file_is_an_input_error(tmp_path, capsys):
    scan = tmp_path / "scan.json"
    scan.write_text(json.dumps(envelope("mpsready.scan", 1, basis="predicted", outlook="runs_on_mac",
                                        findings=[])))
    blocker = tmp_path / "taken"
    blocker.write_text("x")
    assert main(["report", "--scan", str(scan), "--out", str(blocker)]) == 2
    assert f"output path {blocker} exists and is not a directory" in capsys.readouterr().err
    assert blocker.read_text() == "x"  # loses nothing


def test_report_out_that_cannot_be_created(tmp_path, capsys):
    scan = tmp_path / "scan.json"
    scan.write_text(json.dumps(envelope("mpsready.scan", 1, basis="predicted", outlook="runs_on_mac",
                                        findings=[])))
    assert main(["report", "--scan", str(scan), "--out", "/proc/mpsready-nope"]) == 2
    assert "cannot create output directory /proc/mpsready-nope" in capsys.readouterr().err


def test_check_with_a_broken_baseline_stops_before_any_stage(tmp_path, capsys):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text("x = 1\n")
    baseline = tmp_path / "base"
    baseline.mkdir()
    (baseline / "record.json").write_text("[1, 2]")
    out = tmp_path / "out"
    assert main(["check", str(project), "--baseline", str(baseline), "--out", str(out)]) == 2
    assert "--baseline:" in capsys.readouterr().err
    assert not (out / "scan.json").exists()


def test_demo_out_on_a_file_is_an_input_error(tmp_path, capsys):
    blocker = tmp_path / "taken"
    blocker.write_text("x")
    assert main(["demo", "--out", str(blocker)]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "check"])
@pytest.mark.parametrize("value", ["0", "-5", "1.5"])
def test_job_steps_must_be_a_positive_whole_number_for_check_too(tmp_path, capsys, command, value):
    # h40b: check took --steps 0 and -5 (report refused them), ran every stage and projected the job from them
    (tmp_path / "p").mkdir()
    argv = ["report", "--scan", str(tmp_path / "none.json")] if command == "report" else \
        ["check", str(tmp_path / "p"), "--skip-record", "--out", str(tmp_path / "out")]
    assert main([*argv, "--steps", value]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"mpsready {command}: error: argument --steps: " + (
        f"not a whole number: {value!r}" if value == "1.5" else f"must be a positive number of steps, got {value!r}"))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["check", "report", "record"])
def test_out_has_the_short_form_o_as_in_kit_scan_and_env(command):
    # h40b: a newcomer's `mpsready check PATH --entry E -o DIR` (kit's spelling) was "unrecognized arguments: -o"
    from mpsready.cli import build_parser

    argv = {"check": ["check", "proj"], "report": ["report", "--scan", "s.json"],
            "record": ["record", "m:f", "--device", "cpu"]}[command]
    assert build_parser().parse_args([*argv, "-o", "here"]).out == "here"
