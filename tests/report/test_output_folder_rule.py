"""One rule for every output folder (h40c): mpsready creates only the last level of ``check``, ``report`` and
``kit``'s ``-o DIR``, as ``scan -o`` and ``env -o`` write only into a folder that exists. A missing parent
(``/nonexist/a/b``, a typo mid-path) used to be created whole by the first three; now it is exit 2 and nothing is
made."""

import json

from mpsready.cli import main
from mpsready.schema import envelope
from tests.kit.fake_mac import project


def _scan(tmp_path):
    scan = tmp_path / "scan.json"
    scan.write_text(json.dumps(envelope("mpsready.scan", 1, basis="predicted", outlook="runs_on_mac", findings=[])))
    return scan


def test_report_out_with_a_missing_parent_is_refused_and_nothing_is_made(tmp_path, capsys):
    out = tmp_path / "nonexist" / "a" / "b"
    assert main(["report", "--scan", str(_scan(tmp_path)), "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"mpsready report: error: cannot create output directory {out}: the folder "
                                       f"{out.parent} does not exist (only the last level is created)\n")
    assert not (tmp_path / "nonexist").exists()


def test_report_out_creates_the_last_level(tmp_path):
    # exit 1: the verdict (mac_for_dev: nothing observed) is below runs_on_mac; the files are written
    assert main(["report", "--scan", str(_scan(tmp_path)), "-o", str(tmp_path / "new")]) == 1
    assert sorted(p.name for p in (tmp_path / "new").glob("report.*")) == ["report.html", "report.json", "report.md"]


def test_check_out_with_a_missing_parent_is_refused_before_any_stage(tmp_path, capsys):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "train.py").write_text("x = 1\n")
    out = tmp_path / "nonexist" / "a" / "b"
    assert main(["check", str(proj), "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"mpsready check: error: cannot create output directory {out}: the folder "
                                       f"{out.parent} does not exist (only the last level is created)\n")
    assert not (tmp_path / "nonexist").exists()


def test_kit_out_with_a_missing_parent_is_refused_and_nothing_is_made(tmp_path, capsys):
    proj = project(tmp_path / "proj")
    out = tmp_path / "nonexist" / "a" / "b"
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"mpsready kit: error: -o {out}: the folder {out.parent} does not exist "
                                       "(only the last level is created)\n")
    assert not (tmp_path / "nonexist").exists()


def test_scan_and_env_refuse_a_missing_folder_as_before(tmp_path, capsys):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "train.py").write_text("x = 1\n")
    out = tmp_path / "nonexist" / "a" / "x.json"
    assert main(["scan", str(proj), "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"mpsready scan: error: cannot write {out}: No such file or directory\n"
    assert main(["env", "-o", str(out)]) == 2
    assert not (tmp_path / "nonexist").exists()
