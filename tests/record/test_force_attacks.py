"""``record --force`` replaces only a complete run record (issue 34 item 2). A folder that merely holds a file
named ``record.json`` (a project, a home folder) used to be taken for a record: everything else in it deleted."""

from pathlib import Path

import pytest

from mpsready.cli import main
from mpsready.record.layout import RecordWriter
from mpsready.record.recorder import _prepare_output, not_a_run_record
from mpsready.errors import UsageError


def _record(path: Path) -> Path:
    with RecordWriter(path, device="cpu", entry="x:y", steps=1):
        pass
    return path


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_complete_record_may_be_replaced(tmp_path):
    rec = _record(tmp_path / "run")
    (rec / "tensors").mkdir()
    (rec / "tensors" / "step-0000.safetensors").write_bytes(b"x")
    (rec / "layer_inputs" / "enc.0").mkdir(parents=True)
    (rec / "layer_inputs" / "enc.0" / "step-0001.safetensors").write_bytes(b"x")
    assert not_a_run_record(rec) is None


@pytest.mark.parametrize("extra, why", [
    ("thesis.tex", "holds thesis.tex, which is not part of a run record"),
    ("src/train.py", "holds src, which is not part of a run record"),
    ("tensors/notes.txt", "holds tensors/notes.txt, which is not part of a run record"),
])
def test_a_folder_holding_a_record_json_and_more_is_never_deleted(tmp_path, capsys, extra, why):
    rec = _record(tmp_path / "home")
    (rec / extra).parent.mkdir(parents=True, exist_ok=True)
    (rec / extra).write_text("mine")
    before = _snapshot(rec)
    code = main(["record", "somemod:step", "--device", "cpu", "--out", str(rec), "--force"])
    assert code == 2
    assert capsys.readouterr().err.endswith(
        f"error: --force only replaces a complete run record; {rec} {why}: nothing replaced\n")
    assert _snapshot(rec) == before


def test_a_planted_record_json_alone_is_not_a_record(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "record.json").write_text('{"a": 1}')
    (home / ".bashrc").write_text("mine")
    with pytest.raises(UsageError, match=r"--force only replaces a complete run record; .*home is not a run record"):
        _prepare_output(home, True)
    assert (home / ".bashrc").read_text() == "mine"


def test_a_link_to_a_record_is_not_replaced(tmp_path):
    rec = _record(tmp_path / "run")
    (tmp_path / "link").symlink_to(rec)
    assert not_a_run_record(tmp_path / "link") == "is not a folder"
