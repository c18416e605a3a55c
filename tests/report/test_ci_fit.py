"""Report points of issue 13: item 8 on an observation only, the time table's median/spread/projection
and what it stands for, the plots-skipped notice, and no absolute local paths in the title or inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mpsready.cli import main
from mpsready.record.layout import RecordWriter, TensorEntry, TensorStats
from mpsready.report.build import build_report
from mpsready.report.checklist import Status
from mpsready.report.evidence import Evidence, record, scan
from mpsready.report.formats import markdown
from mpsready.report.formats.common import shown_path
from mpsready.report.write import write_report
from tests.report import fixtures as fx


def _param(name: str, shape: tuple[int, ...], step: int = 0) -> TensorEntry:
    n = 1
    for d in shape:
        n *= d
    return TensorEntry(key=f"param:{name}:{step}", kind="param", name=name, step=step, order=0, shape=shape,
                       dtype="float32", stats=TensorStats(n, 0.0, 1.0, -1.0, 1.0, 1.0, 0, 0), checksum="0" * 64)


def _record_with_model(path: Path, seconds: tuple[float, ...]) -> Path:
    metrics = [{"index": i, "loss": 2.0 - i / 10, "seconds": s} for i, s in enumerate(seconds)]
    stages = [{"stage": "build", "status": "passed", "seconds": 0.01, "steps_run": 1}]
    with RecordWriter(path, device="cuda:0", observed_on="cuda:0 (NVIDIA A100-SXM4-40GB)", entry="step.py:step",
                      steps=len(seconds), stages=stages, step_metrics=metrics, env=fx.env_doc(),
                      fallback={"enabled": False, "checked": False, "calls": {}, "warned_ops": []},
                      inputs={"structure": {}, "tensors": [{"name": "images", "shape": [32, 3, 224, 224]},
                                                           {"name": "labels", "shape": [32]}]},
                      raw_tensors=False) as w:
        for step in (0, 1):  # parameters recorded at every step: the model size counts step 0 only
            w.add(_param("conv.weight", (64, 3, 7, 7), step))
            w.add(_param("fc.weight", (1000, 512), step))
            w.add(_param("fc.bias", (1000,), step))
    return path


def test_scan_alone_never_passes_item_8(tmp_path):
    scan_json = tmp_path / "scan.json"
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "requirements.txt").write_text("numpy\n")
    assert main(["scan", str(tmp_path / "proj"), "--format", "json", "-o", str(scan_json), "--no-cache"]) == 0
    out = tmp_path / "rep"
    main(["report", "--scan", str(scan_json), "--out", str(out)])
    item8 = json.loads((out / "report.json").read_text())["checklist"][7]
    assert (item8["status"], item8["basis"], item8["label"]) == ("not_checked", None, "not checked")
    assert item8["summary"] == ("a person must confirm that the data rules allow this environment: no "
                                "kit with a manifest of what leaves the lab was given")
    # a run record without raw tensors is a fact the item shows, never a pass (the old proxy)
    rep = build_report(Evidence(scan=scan.from_doc(fx.scan_doc()),
                                records=[record.load(fx.write_record(tmp_path / "cpu", "cpu"))]))
    assert (rep.checklist[7].status, rep.checklist[7].basis) == (Status.NOT_CHECKED, None)
    assert rep.checklist[7].evidence[0].text == "cpu: raw tensors not saved (statistics and checksums only)"


def test_time_table_median_spread_and_what_the_projection_stands_for(tmp_path):
    rec = record.load(_record_with_model(tmp_path / "cuda", (0.9, 0.10, 0.12, 0.11, 0.10, 0.14)))
    assert (rec.parameters, rec.parameter_tensors, rec.batch) == (
        64 * 3 * 7 * 7 + 1000 * 512 + 1000, 3, "images 32x3x224x224, labels 32")
    rep = build_report(Evidence(records=[rec]), job_steps=100_000)
    t = rep.outlook.timings[0]
    assert (t.steps_measured, t.step_seconds, t.spread_seconds) == (5, 0.11, (0.10, 0.14))
    assert t.projected_seconds == 0.11 * 100_000
    assert t.stands_for == ("device cuda:0 (NVIDIA A100-SXM4-40GB); model of 522,408 parameters; "
                            "batch images 32x3x224x224, labels 32")
    md = markdown.render(rep)
    assert ("| cuda:0 | observed | 110.0 ms | 100.0 ms - 140.0 ms | 5 (step 0 left out as warm-up) | - | 3.1 h |"
            in md)
    assert "- cuda:0: device cuda:0 (NVIDIA A100-SXM4-40GB); model of 522,408 parameters; batch images " \
           "32x3x224x224, labels 32" in md
    assert rep.to_dict()["outlook"]["timings"][0]["spread_seconds"] == [0.10, 0.14]


def test_fewer_than_5_measured_steps_give_no_projection(tmp_path):
    rec = record.load(fx.write_record(tmp_path / "cpu", "cpu", losses=(2.3, 2.2, 2.1), seconds=(0.5, 0.1, 0.3)))
    rep = build_report(Evidence(records=[rec]), job_steps=10_000)
    t = rep.outlook.timings[0]
    assert (t.steps_measured, t.step_seconds, t.projected_seconds) == (2, 0.2, None)
    assert ("| cpu | observed | 200.0 ms | 100.0 ms - 300.0 ms | 2 (step 0 left out as warm-up) | - | - (needs 5 "
            "measured steps, has 2; record with --steps 6) |") in markdown.render(rep)


def test_record_and_check_default_to_6_steps():
    from mpsready.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["record", "e.py:f", "--device", "cpu", "--out", "x"]).steps == 6
    assert parser.parse_args(["check", "."]).record_steps == 6


def test_plots_skipped_notice_when_matplotlib_is_missing(tmp_path):
    # matplotlib made unimportable in a fresh interpreter: the report says why it has no plots
    rec = fx.write_record(tmp_path / "cpu", "cpu")
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from mpsready.cli import main\n"
            f"sys.exit(main(['report', '--record', {str(rec)!r}, '--out', {str(tmp_path / 'rep')!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    note = "Plots skipped: matplotlib is not installed (pip install 'mpsready[report]')."
    assert note in (tmp_path / "rep" / "report.md").read_text()
    assert f'<p id="plots-note" class="notice">{note.replace(chr(39), "&#39;")}</p>' in \
        (tmp_path / "rep" / "report.html").read_text()
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["plots_note"] == note


def test_no_absolute_local_paths_in_title_or_inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rec = fx.write_record(tmp_path / "records" / "cpu", "cpu")
    ev = Evidence(scan=scan.from_doc(fx.scan_doc(root="/home/ana/labs/proj"), source=str(tmp_path / "scan.json")),
                  records=[record.load(rec)])
    paths = write_report(build_report(ev), tmp_path / "out", ("md", "html"))
    md, page = paths["md"].read_text(), paths["html"].read_text()
    assert "Project: `proj`" in md and "<title>mpsready report: proj</title>" in page
    assert "- scan: scan.json" in md and "- records: records/cpu" in md
    assert "/home/ana" not in md + page and str(tmp_path) not in md + page
    assert shown_path("/elsewhere/deep/records/cuda") == ".../records/cuda"


def test_check_stops_with_exit_2_on_an_unknown_code_in_the_project_config(tmp_path, capsys):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.mpsready]\nselect = ["FOO"]\n')
    assert main(["check", str(proj), "--out", str(tmp_path / "out"), "-q"]) == 2
    assert capsys.readouterr().err.endswith(
        "[tool.mpsready] select: unknown rule code or prefix 'FOO'; give a code such as API101 or a prefix "
        "(DEP, EXT, API, DTY, OPS, NUM, PRF, ENV, INP); `mpsready rules` lists them\n")


def test_the_time_table_names_a_labelled_run_by_its_label(tmp_path):
    """Issue 38: a run's --label shows wherever its device does, the time table included ("eager (cpu)")."""
    import json

    path = fx.write_record(tmp_path / "cpu", "cpu")
    manifest = json.loads((path / "record.json").read_text())
    (path / "record.json").write_text(json.dumps({**manifest, "label": "eager"}))
    rep = build_report(Evidence(records=[record.load(path), record.load(fx.write_record(tmp_path / "plain", "cpu"))]))
    assert [t.name for t in rep.outlook.timings] == ["eager (cpu)", "cpu"]
    md = markdown.render(rep)
    assert "| eager (cpu) | observed | 100.0 ms |" in md and "| cpu | observed | 100.0 ms |" in md
    assert [t["label"] for t in rep.to_dict()["outlook"]["timings"]] == ["eager", None]
