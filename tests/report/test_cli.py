"""``mpsready report`` on stage outputs written to files: formats, exit codes, bad input."""

from __future__ import annotations

import json

from mpsready.cli import main
from tests.report import fixtures as fx


def write_inputs(tmp_path, scan_findings=()):
    scan = fx.dump(tmp_path / "scan.json", fx.scan_doc(list(scan_findings)))
    env = fx.dump(tmp_path / "env.json", fx.env_doc())
    trace = fx.dump(tmp_path / "trace.json", fx.trace_doc())
    rec = fx.write_record(tmp_path / "cpu", "cpu")
    return ["--scan", str(scan), "--env", str(env), "--trace", str(trace), "--record", str(rec)]


def test_report_json_to_stdout(tmp_path, capsys):
    code = main(["report", *write_inputs(tmp_path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1  # mac_for_dev is at or above the default --fail-on
    assert doc["schema"] == {"name": "mpsready.report", "version": 1}
    assert doc["verdict"]["name"] == "mac_for_dev" and doc["verdict"]["if_predictions_hold"] == "runs_on_mac"
    assert [c["status"] for c in doc["checklist"]] == ["not_checked", "passed", "not_checked", "not_checked",
                                                       "not_checked", "not_checked", "passed", "not_checked"]
    assert [c["basis"] for c in doc["checklist"]] == [None, "predicted", None, None, None, None, "observed", None]
    assert doc["stages_present"] == ["scan", "env", "trace", "record"]
    assert doc["inputs"]["scan"] == str(tmp_path / "scan.json")


def test_fail_on_stay_on_cuda_exits_0_for_mac_for_dev(tmp_path, capsys):
    assert main(["report", *write_inputs(tmp_path), "--fail-on", "stay_on_cuda", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "## Verdict: **Mac for development and tests, CUDA for the main work** (`mac_for_dev`, predicted)" in md
    assert "| 4 | representative step on MPS (critical) | **NOT CHECKED (predicted pass)** | - |" in md


def test_stay_on_cuda_exits_1_even_with_fail_on_stay_on_cuda(tmp_path, capsys):
    args = write_inputs(tmp_path, [fx.APEX_NO_ALT])
    assert main(["report", *args, "--fail-on", "stay_on_cuda", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"]["name"] == "stay_on_cuda"


def test_out_writes_three_files(tmp_path, capsys):
    out = tmp_path / "rep"
    main(["report", *write_inputs(tmp_path), "--out", str(out)])
    assert sorted(p.name for p in out.iterdir()) == ["report-plots", "report.html", "report.json", "report.md"]
    # No finding anywhere, so no findings chart; the CPU record's losses give the loss curve.
    assert sorted(p.name for p in (out / "report-plots").iterdir()) == ["loss_curves.svg", "step_times.svg"]
    printed = capsys.readouterr().out
    assert f"html: {out / 'report.html'}" in printed


def test_no_input_is_a_usage_error(capsys):
    assert main(["report"]) == 2
    assert "give at least one stage output" in capsys.readouterr().err


def test_missing_file_and_wrong_schema_are_usage_errors(tmp_path, capsys):
    assert main(["report", "--scan", str(tmp_path / "nope.json")]) == 2
    assert f"mpsready.scan output not found: {tmp_path / 'nope.json'}" in capsys.readouterr().err
    env = fx.dump(tmp_path / "env.json", fx.env_doc())
    assert main(["report", "--scan", str(env)]) == 2
    assert "expected an mpsready mpsready.scan document, got schema 'mpsready.env'" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["report", "--trace", str(bad)]) == 2
    assert f"cannot read {bad}" in capsys.readouterr().err
    assert main(["report", "--record", str(tmp_path)]) == 2
    assert "is not a run record" in capsys.readouterr().err


def test_tolerates_missing_fields(tmp_path, capsys):
    """A stage document with nothing but its envelope reads as 'unknown', never as a good result."""
    from mpsready.schema import envelope

    for name in ("scan", "env", "trace", "compare"):
        fx.dump(tmp_path / f"{name}.json", envelope(f"mpsready.{name}", 1))
    code = main(["report", "--scan", str(tmp_path / "scan.json"), "--env", str(tmp_path / "env.json"),
                 "--trace", str(tmp_path / "trace.json"), "--compare", str(tmp_path / "compare.json"),
                 "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    labels = {c["number"]: c["label"] for c in doc["checklist"]}
    assert labels[5] == "not checked"  # a comparison with no verdict is not a pass
    assert labels[4] == "not checked"  # a trace without operators predicts nothing
    assert labels[6] == "not checked"
    assert labels[3] == "not checked (predicted to pass)"
    assert doc["verdict"]["name"] == "mac_for_dev" and doc["verdict"]["if_predictions_hold"] == "mac_for_dev"


def test_without_jinja2_and_matplotlib_the_report_is_still_written(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_extras(name, *args, **kwargs):
        if name.split(".")[0] in ("jinja2", "matplotlib"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_extras)
    out = tmp_path / "rep"
    assert main(["report", *write_inputs(tmp_path), "--out", str(out)]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md"]
    err = capsys.readouterr().err
    assert "report.html not written" in err and "no plots" in err


def test_format_html_without_jinja2_is_a_usage_error_before_any_work(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_jinja(name, *args, **kwargs):
        if name.split(".")[0] == "jinja2":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jinja)
    out = tmp_path / "rep"
    # it used to write nothing and exit 1 (the verdict's code), with the output folder made
    assert main(["report", *write_inputs(tmp_path), "--format", "html", "--out", str(out)]) == 2
    assert not out.exists()
    assert main(["report", *write_inputs(tmp_path), "--format", "html"]) == 2
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err.strip().endswith(
        "--format html needs the 'report' extra (jinja2): pip install 'mpsready[report]'")


def test_every_format_renders_an_empty_report():
    from mpsready.report.build import build_report
    from mpsready.report.evidence import Evidence
    from mpsready.report.formats import html, markdown, terminal

    rep = build_report(Evidence())
    page = html.render(rep)
    assert 'data-verdict="stay_on_cuda"' in page and "No findings." in page and "<img" not in page
    assert "No timings: no run was recorded." in markdown.render(rep)
    assert "stay on CUDA (stay_on_cuda, predicted)" in terminal.render(rep)
