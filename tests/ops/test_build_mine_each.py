"""The miners' shared loop over release folders (ops/build/harvest.mine_each): folders oldest first, a folder the miner
answers None for left out, an unreadable tree -> None after one `<tool>: <error>` line (the miner exits 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsready.ops.build import inductor, inductor_ops
from mpsready.ops.build.harvest import mine_each


def test_releases_oldest_first_and_none_left_out(tmp_path: Path) -> None:
    for name in ("2.10.0", "2.9.1", "2.13.0"):
        (tmp_path / name).mkdir()
    got = mine_each(tmp_path, lambda sub: None if sub.name == "2.13.0" else {"v": sub.name}, "t")
    assert got == {"2.9.1": {"v": "2.9.1"}, "2.10.0": {"v": "2.10.0"}}
    assert list(got) == ["2.9.1", "2.10.0"]


@pytest.mark.parametrize(("main", "tool"), [(inductor.main, "inductor"), (inductor_ops.main, "inductor_ops")])
def test_a_folder_not_named_by_a_version_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], main,
                                                 tool: str) -> None:
    (tmp_path / "latest").mkdir()
    assert main(["--sources", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"{tool}: {tmp_path}: a release folder is not named by its version (Invalid version: 'latest')\n"
