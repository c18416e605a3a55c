"""``mpsready record`` with an --out that cannot be created: exit 2 before the step runs, not a traceback."""

import pytest

pytest.importorskip("torch")

from mpsready.cli import main  # noqa: E402


def test_out_under_a_file(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = blocker / "run"
    assert main(["record", "tests.record.entries:small_cnn", "--device", "cpu", "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"mpsready record: error: cannot create run record {out}: Not a directory\n"
    assert blocker.read_text() == "x"
