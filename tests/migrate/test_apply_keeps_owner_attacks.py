"""``migrate --apply`` keeps what is not the text (issue 34 item 7): run as root it used to make every file it
wrote root's, and it split hard links (the other names kept the old text)."""

import os

import pytest

from mpsready.cli import main

CUDA = "import torch\nx = torch.ones(1).cuda()\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_as_root_the_owner_and_group_are_kept(tmp_path, capsys):
    (tmp_path / "train.py").write_text(CUDA)
    os.chown(tmp_path / "train.py", 12345, 23456)
    assert main(["migrate", str(tmp_path), "--apply", "--no-cache"]) == 0
    st = os.stat(tmp_path / "train.py")
    assert (st.st_uid, st.st_gid) == (12345, 23456)
    assert ".to(" in (tmp_path / "train.py").read_text()


def test_a_file_with_other_hard_links_is_refused_saying_why(tmp_path, capsys):
    (tmp_path / "train.py").write_text(CUDA)
    os.link(tmp_path / "train.py", tmp_path / "other-name.txt")
    assert main(["migrate", str(tmp_path), "--apply", "--no-cache"]) == 1
    assert "refused: train.py: has 2 hard links; not touched (a new file would leave the other links with the old " \
           "text: edit it by hand)\n" in capsys.readouterr().err
    assert (tmp_path / "train.py").read_text() == CUDA
    assert os.stat(tmp_path / "train.py").st_ino == os.stat(tmp_path / "other-name.txt").st_ino
