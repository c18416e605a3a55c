"""``migrate --verify`` attacks (issue 34 item 1): the copies are copies, the runs stay in them and end with them.

Each case used to write through to the user's project, run the command in the project itself, or leave the
program and both copies behind."""

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.run.helpers import running as _running

from mpsready.cli import main
from mpsready.errors import UsageError
from mpsready.migrate import copies, verify
from mpsready.migrate.engine import migrate_path
from mpsready.migrate.verify import clean_leftovers, verify_plan

ROOT = Path(__file__).resolve().parents[2]

# Writes into every file it can reach from its folder: what a program updating a data file in place does.
WRITER = """\
import os
for name in sorted(os.listdir(".")):
    if name.endswith((".bin", ".txt")) or name.startswith("link"):
        try:
            with open(name, "a") as fh:
                fh.write("CHANGED")
        except OSError:
            pass
print("done")
"""


def _project(tmp_path: Path, program: str = WRITER) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "train.py").write_text(program)
    return root


def test_hard_links_large_files_and_links_are_never_written_through(tmp_path, monkeypatch):
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs")
    root = _project(tmp_path)
    (root / "data.bin").write_bytes(b"x" * (17 * 1024 * 1024))  # over the old 16 MiB "link, do not copy" bound
    os.link(root / "data.bin", tmp_path / "hardlink.bin")
    (root / "small.txt").write_text("mine")
    os.symlink(root / "small.txt", root / "link-absolute")  # absolute, into the project
    os.symlink("small.txt", root / "link-relative")
    os.symlink(outside, root / "link-out")  # out of the project: left out of the copies
    before = {p: p.read_bytes() for p in [root / "data.bin", root / "small.txt", outside]}
    plan = migrate_path(root)
    result = verify_plan(plan, [sys.executable, "train.py"], releases=[], max_steps=0, time_limit=60)
    assert result.original.exit_code == 0 and result.original.stdout == "done\n"
    assert {p: p.read_bytes() for p in before} == before  # the user's files, byte for byte
    assert result.left_out == ["link-out (a link out of the project)"]
    assert result.to_dict()["left_out_of_copies"] == ["link-out (a link out of the project)"]


@pytest.mark.parametrize("cwd", ["..", "../..", "/", "sub/../.."])
def test_cwd_outside_the_copy_is_a_usage_error_before_any_run(tmp_path, capsys, cwd):
    root = _project(tmp_path, "open('/proc/self/cwd/RAN', 'w').write('x')\n")
    (root / "sub").mkdir()
    code = main(["migrate", str(root), "--verify", "--torch", "2.13", "--cwd", cwd, "--", sys.executable, "train.py"])
    assert code == 2
    err = capsys.readouterr().err
    assert err == (f"mpsready migrate: error: --cwd {cwd}: not a folder inside the project {root} "
                   "(the runs happen in a copy of it)\n")
    assert not list(tmp_path.rglob("RAN")) and not Path("/RAN").exists()


def test_cwd_missing_in_the_project_is_a_usage_error(tmp_path, capsys):
    root = _project(tmp_path)
    assert main(["migrate", str(root), "--verify", "--cwd", "nope", "--", "python", "train.py"]) == 2
    assert capsys.readouterr().err == f"mpsready migrate: error: --cwd nope: no such folder in the project {root}\n"


def test_a_full_tmpdir_is_a_usage_error_not_a_partial_copy(tmp_path, monkeypatch):
    root = _project(tmp_path)
    (root / "data.bin").write_bytes(b"x")

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(copies.shutil, "copyfileobj", full)
    monkeypatch.setattr(verify.tempfile, "tempdir", str(tmp_path))
    with pytest.raises(UsageError, match=r"^--verify: cannot copy data.bin into .*original: No space left on device$"):
        verify_plan(migrate_path(root), ["python", "train.py"], releases=[], max_steps=0)
    assert [p.name for p in tmp_path.iterdir()] == ["proj"]  # the copies removed


def test_what_the_program_leaves_running_is_ended(tmp_path):
    root = _project(tmp_path, "import subprocess, sys\n"
                              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                              f"open({str(tmp_path / 'pid')!r}, 'w').write(str(p.pid))\n")
    verify_plan(migrate_path(root), [sys.executable, "train.py"], releases=[], max_steps=0, time_limit=60)
    pid = int((tmp_path / "pid").read_text())
    assert _wait_for(lambda: not _running(pid))




def _wait_for(cond, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_verify_ends_the_program_and_removes_its_copies(tmp_path, sig):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    pid_file = tmp_path / "pid"
    root = _project(tmp_path, f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                              "time.sleep(60)\n")
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(ROOT / "src"))
    parent = subprocess.Popen([sys.executable, "-m", "mpsready", "migrate", str(root), "--no-cache", "--verify",
                               "--torch", "2.13", "--", sys.executable, "train.py"], env=env,
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert _wait_for(lambda: pid_file.exists() and pid_file.read_text() != "")
    program = int(pid_file.read_text())
    parent.send_signal(sig)
    _, err = parent.communicate(timeout=30)
    assert parent.returncode == (143 if sig == signal.SIGTERM else -9)
    assert _wait_for(lambda: not _running(program))
    assert _wait_for(lambda: not any(p.name.startswith("mpsready-verify-") for p in tmpdir.iterdir()))
    if sig == signal.SIGTERM:
        assert err.decode().endswith("mpsready migrate: interrupted by SIGTERM: the runs and every process they "
                                     "started were ended, the copies removed; nothing written\n")


def test_leftovers_removed_only_when_provably_a_dead_verify_of_this_user(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = int(dead.stdout)

    def leftover(name: str, owner: str | None) -> Path:
        p = tmp_path / name
        (p / "original").mkdir(parents=True)
        if owner is not None:
            (p / verify.OWNER).write_text(owner)
        return p

    mine = leftover(f"mpsready-verify-{gone}-abc", f"{gone}\n")
    no_owner = leftover(f"mpsready-verify-{gone}-def", None)
    wrong_owner = leftover(f"mpsready-verify-{gone}-ghi", "1\n")
    alive = leftover(f"mpsready-verify-{os.getppid()}-jkl", f"{os.getppid()}\n")
    other = leftover("mpsready-record-x", f"{gone}\n")
    os.symlink(mine, tmp_path / f"mpsready-verify-{gone}-link")
    assert clean_leftovers(str(tmp_path)) == [str(mine)]
    assert not mine.exists() and no_owner.exists() and wrong_owner.exists() and alive.exists() and other.exists()
