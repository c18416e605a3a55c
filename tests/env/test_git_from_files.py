"""``env --project`` reads the project's git state from its files and runs nothing of the project's (issue 34
item 3): ``git status`` used to run the project's ``core.fsmonitor`` command. Each state is checked against
what ``git`` itself reports on the same repository (the tests run git on repositories they made)."""

import os
import subprocess
from pathlib import Path

import pytest

from mpsready.cli import main
from mpsready.env.gitfiles import git_state


def git(root: Path, *a: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *a], check=True,
                          capture_output=True, text=True).stdout.strip()


def _repo(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("x = 1\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "b.py").write_text("y = 1\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    return root


def _porcelain(root: Path) -> int:
    return len([ln for ln in git(root, "status", "--porcelain").splitlines() if ln.strip()])


def test_a_planted_fsmonitor_command_is_never_run(tmp_path, capsys):
    root = _repo(tmp_path / "p")
    marker = tmp_path / "RAN"
    with open(root / ".git" / "config", "a") as fh:
        fh.write(f"[core]\n\tfsmonitor = touch {marker}\n[filter \"x\"]\n\tclean = touch {marker}\n")
    (root / ".gitattributes").write_text("*.py filter=x\n")
    assert main(["env", "--project", str(root), "--format", "json"]) in (0, 1)
    assert not marker.exists()
    out = capsys.readouterr().out
    assert '"branch": "main"' in out


def test_commit_branch_and_dirty_match_git(tmp_path):
    root = _repo(tmp_path / "p")
    head = git(root, "rev-parse", "HEAD")
    assert git_state(root) == {"commit": head, "branch": "main", "dirty": False, "changed_files": 0}
    (root / "a.py").write_text("x = 22\n")  # tracked, changed
    (root / "new.py").write_text("")  # untracked
    (root / "debug.log").write_text("")  # ignored
    (root / "build").mkdir()
    (root / "build" / "o.py").write_text("")  # ignored folder
    (root / "data").mkdir()
    (root / "data" / "x.csv").write_text("")  # an untracked folder: one line
    (root / "pkg" / "c.py").write_text("")  # untracked inside a tracked folder
    assert _porcelain(root) == 4
    assert git_state(root) == {"commit": head, "branch": "main", "dirty": True, "changed_files": 4}
    (root / "pkg" / "b.py").unlink()  # deleted
    assert git_state(root)["changed_files"] == _porcelain(root) == 5


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_every_index_version_and_packed_refs(tmp_path, version):
    root = _repo(tmp_path / "p")
    git(root, "update-index", "--index-version", version)
    git(root, "pack-refs", "--all")
    assert not (root / ".git" / "refs" / "heads" / "main").exists()
    head = git(root, "rev-parse", "HEAD")
    assert git_state(root) == {"commit": head, "branch": "main", "dirty": False, "changed_files": 0}
    (root / "pkg" / "b.py").write_text("y = 2222\n")
    assert git_state(root)["changed_files"] == 1


def test_detached_head_and_a_linked_work_tree(tmp_path):
    root = _repo(tmp_path / "p")
    head = git(root, "rev-parse", "HEAD")
    git(root, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"))
    assert git_state(tmp_path / "wt" / "pkg") == {"commit": head, "branch": "side", "dirty": False,
                                                  "changed_files": 0}
    git(root, "checkout", "-q", "--detach")
    assert git_state(root) == {"commit": head, "branch": "HEAD", "dirty": False, "changed_files": 0}


def test_not_a_repository_and_an_unborn_branch(tmp_path):
    assert git_state(tmp_path) == {"error": "not a git repository (no .git in this folder or above it)"} or \
        "commit" in git_state(tmp_path)  # a tmp folder inside someone's repository reads that one
    root = tmp_path / "p"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert git_state(root) == {"error": "the branch main has no commit yet"}


def test_a_damaged_index_is_an_error_not_a_crash(tmp_path):
    root = _repo(tmp_path / "p")
    head = git(root, "rev-parse", "HEAD")
    data = (root / ".git" / "index").read_bytes()
    (root / ".git" / "index").write_bytes(data[:40])
    assert git_state(root) == {"commit": head, "branch": "main", "error": "cannot read the index: the index is truncated"}
    os.unlink(root / ".git" / "index")
    os.mkfifo(root / ".git" / "index")
    assert git_state(root) == {"commit": head, "branch": "main",
                               "error": "cannot read the index: index is not a regular file"}
